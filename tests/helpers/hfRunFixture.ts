// A saved run of the visitor's own model as the panel would save it (hfRunFile.ts): random rows of
// every response's tokens, both evaluations, and an adapter whose PEFT weights and training state
// are real safetensors files of random values, and the last iteration's trace (buildTrace's, under
// an own-model run's knobs); the model it names, as the worker reports one.
import { encodeSafetensors } from '../../src/model/safetensors.ts';
import { DEFAULT_HF_TRAIN, type HfTrainRow } from '../../src/rl/hf/hfTrainSettings.ts';
import type { HfRecordedRun } from '../../src/store/hfRunFile.ts';
import type { Rng } from '../../src/util/rng.ts';
import type { HfModelSummary } from '../../src/worker/hfTypes.ts';
import { buildTrace } from './inspectTrace.ts';

/** A tiny Qwen3 as the worker reports it once open (HfModelSummary), named `label`. */
export function tinyModelSummary(label: string): HfModelSummary {
  return {
    label,
    architecture: 'Qwen3ForCausalLM',
    nLayer: 2,
    dModel: 64,
    nHead: 4,
    nKvHead: 2,
    vocab: 384,
    maxPositions: 128,
    parameters: 60_000,
    deviceBytes: 240_000,
    weightDtype: 'f32',
    hasChatTemplate: true,
    generation: { source: 'generation_config.json', doSample: true, temperature: 0.7, topP: 0.8, topK: 20, maxNewTokens: 500, eosTokenIds: [2] },
  };
}

const CLIP = [null, null, null, 'upper', 'lower', 'dual'] as const;

export function hfRunRow(r: Rng, iter: number, responses = 3): HfTrainRow {
  return {
    iter,
    reward_mean: r.next(),
    kl: r.next() * 1e-3,
    response_length_mean: 1 + r.int(0, 8),
    policy_loss: r.normal() * 0.1,
    clipfrac: r.next() * 0.2,
    value_loss: r.next() < 0.5 ? null : r.next(),
    seconds: 0.5 + r.next(),
    responses: Array.from({ length: responses }, (_, j) => ({
      prompt: `What is ${j} + ${iter}? Answer with the number.`,
      response: ` ${j + iter}`,
      score: r.next() < 0.5 ? 0 : 1,
      tokens: Array.from({ length: 1 + r.int(0, 4) }, () => ({
        id: r.int(0, 384),
        text: r.next() < 0.2 ? '\n' : ` ${r.int(0, 99)}`,
        old: -r.next() * 3,
        ref: -r.next() * 3,
        logprob: -r.next() * 3,
        advantage: r.normal(),
        clip: CLIP[r.int(0, CLIP.length)],
      })),
    })),
  };
}

export function hfRecordedRun(r: Rng, iterations = 3, withState = true, withTrace = iterations > 0): HfRecordedRun {
  const f32 = (n: number) => Float32Array.from({ length: n }, () => r.normal());
  const weights = encodeSafetensors(
    [
      { name: 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', dtype: 'F32', shape: [2, 8], data: f32(16) },
      { name: 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight', dtype: 'F32', shape: [8, 2], data: f32(16) },
    ],
    { format: 'pt' },
  );
  const state = encodeSafetensors([{ name: 'actor.params', dtype: 'F64', shape: [32], data: Float64Array.from({ length: 32 }, () => r.normal()) }], {
    format: 'ppo-playground-lora-training-state',
  });
  return {
    savedAt: '2026-11-30T10:00:00.000Z',
    model: { label: 'tiny qwen', architecture: 'Qwen3ForCausalLM', nLayer: 2, dModel: 64, vocab: 384 },
    settings: { ...DEFAULT_HF_TRAIN, iterations: 3, loraRank: 2, seed: 7 },
    iterations,
    rows: Array.from({ length: iterations }, (_, i) => hfRunRow(r, i + 1)),
    evals: [
      { when: 'before', greedyAccuracy: 0.25, count: 16 },
      { when: 'after', greedyAccuracy: 0.5, sampled: { accuracy: 0.4375, samples: 8 }, count: 16 },
    ],
    adapter: {
      config: JSON.stringify({ peft_type: 'LORA', r: 2, lora_alpha: 4, target_modules: ['q_proj'], base_model_name_or_path: 'tiny qwen' }),
      weights,
      ...(withState ? { state } : {}),
    },
    ...(withTrace ? { lastTrace: lastTrace(r, iterations) } : {}),
  };
}

/** Iteration `iter` as the inspector reads it: 2 prompts × 2 samples of a GRPO run, its texts beside it. */
function lastTrace(r: Rng, iter: number): NonNullable<HfRecordedRun['lastTrace']> {
  const trace = { ...buildTrace(r, { prompts: 2, samples: 2, A: 3, knobs: { advantageEstimator: 'group_norm', whiten: false, tisCap: null } }), iter };
  return {
    trace,
    prompts: Array.from({ length: trace.B }, (_, b) => `What is ${b} + ${iter}? Answer with the number.`),
    tokenText: Array.from(trace.responseTokens, (id) => (id < 10 ? String(id) : '<|im_end|>')),
    // a response ended with EOS where its last action token is the fixture's EOS text
    endedWithEos: Array.from({ length: trace.B }, (_, b) => {
      let last = -1;
      for (let a = 0; a < trace.A; a++) if (trace.actionMask[b * trace.A + a] !== 0) last = trace.responseTokens[b * trace.A + a];
      return last >= 10;
    }),
  };
}
