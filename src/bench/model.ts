// Transformer benchmarks at the S and M configurations below: one training step (forward +
// backward + grad-norm + AdamW over one minibatch = the whole batch) and one rollout (prefill +
// KV-cached sampling), WebGPU beside the float64 CPU reference in the same run; each for the
// character model as `Gpt` (what the playground trains, with its fused decode step) and as the
// GPT-2 it is on `HfModel` (src/model/hf/charFamily.ts), the same weights through either family.
import type { Backend } from '../backend/backend.ts';
import { Gpt } from '../model/gpt.ts';
import { CharFamilyTrainable } from '../model/hf/charFamily.ts';
import type { SamplingModel, TrainableSequenceModel } from '../model/sequenceModel.ts';
import { disposeRollout, generate, type PromptBatch } from '../model/generate.ts';
import { sftLossAndBackward, type SftBatch } from '../model/sft.ts';
import { Rng } from '../util/rng.ts';
import { table } from './timing.ts';
import { timeIt, type Timed } from './timing.ts';

export interface BenchConfig {
  name: string;
  nLayer: number;
  nHead: number;
  dModel: number;
  vocab: number;
  batch: number;
  prompt: number;
  response: number;
}

export const BENCH_CONFIGS: BenchConfig[] = [
  { name: 'S', nLayer: 2, nHead: 2, dModel: 64, vocab: 32, batch: 16, prompt: 16, response: 16 },
  { name: 'M', nLayer: 4, nHead: 4, dModel: 128, vocab: 32, batch: 32, prompt: 32, response: 32 },
];

function modelFor(be: Backend, c: BenchConfig): Gpt {
  return new Gpt(be, { vocabSize: c.vocab, nLayer: c.nLayer, nHead: c.nHead, dModel: c.dModel, maxSeq: c.prompt + c.response, head: 'lm' }, 1);
}

/** A full-length batch: prompt tokens then response tokens, no padding, loss on the response. */
function trainBatch(c: BenchConfig, rng: Rng): SftBatch {
  const S = c.prompt + c.response;
  const B = c.batch;
  const tokens = Array.from({ length: B * S }, () => rng.int(3, c.vocab));
  const targets: number[] = [];
  const lossMask: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < S - 1; t++) {
      targets.push(tokens[b * S + t + 1]);
      lossMask.push(t + 1 >= c.prompt ? 1 : 0);
    }
  }
  return {
    B,
    S,
    tokens: Int32Array.from(tokens),
    attnMask: new Float32Array(B * S).fill(1),
    positions: Int32Array.from({ length: B * S }, (_, i) => i % S),
    targets: Int32Array.from(targets),
    lossMask: Float32Array.from(lossMask),
  };
}

function promptBatch(c: BenchConfig, rng: Rng): PromptBatch {
  const n = c.batch * c.prompt;
  return {
    tokens: Array.from({ length: n }, (_, i) => (i % c.prompt === 0 ? 1 : rng.int(3, c.vocab))),
    attnMask: new Array(n).fill(1),
    positions: Array.from({ length: n }, (_, i) => i % c.prompt),
    B: c.batch,
    P: c.prompt,
  };
}

export interface ModelRow {
  config: string;
  what: string;
  gpu: Timed;
  cpu: Timed;
  /** Work units per call (tokens sampled) for throughput. */
  tokens: number;
}

export async function benchModel(gpuBe: Backend, cpuBe: Backend, configs: BenchConfig[] = BENCH_CONFIGS): Promise<ModelRow[]> {
  const rows: ModelRow[] = [];
  for (const c of configs) {
    const rng = new Rng(3);
    const batch = trainBatch(c, rng);
    const prompts = promptBatch(c, rng);
    const sample = { temperature: 1, topK: 0, topP: 1, seed: 5, eosId: 2, padId: 0 };
    const time = async <Cache>(be: Backend, model: TrainableSequenceModel<Cache> & SamplingModel) => {
      const step = await timeIt(
        be,
        async () => {
          model.zeroGrad();
          const loss = sftLossAndBackward(model, batch);
          const norm = model.optimizerStep({ lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
          be.dispose(loss, norm);
        },
        be.kind === 'cpu' ? 3 : 5,
        1,
      );
      const rollout = await timeIt(
        be,
        async () => {
          const r = generate(model, prompts, c.response, sample);
          await be.read(r.sequences);
          disposeRollout(model, r);
        },
        be.kind === 'cpu' ? 3 : 5,
        1,
      );
      return { step, rollout };
    };
    const run = async (be: Backend) => {
      const gpt = modelFor(be, c);
      const fam = await CharFamilyTrainable.create(gpt);
      try {
        return { gpt: await time(be, gpt), hf: await time(be, fam) };
      } finally {
        fam.dispose();
        gpt.dispose();
      }
    };
    const g = await run(gpuBe);
    const cp = await run(cpuBe);
    for (const [family, label] of [
      ['gpt', ''],
      ['hf', ', on HfModel'],
    ] as const) {
      rows.push({ config: c.name, what: `train step (fwd+bwd+AdamW)${label}`, gpu: g[family].step, cpu: cp[family].step, tokens: c.batch * (c.prompt + c.response) });
      rows.push({ config: c.name, what: `rollout (prefill + sampling)${label}`, gpu: g[family].rollout, cpu: cp[family].rollout, tokens: c.batch * c.response });
    }
  }
  return rows;
}

export async function printModelBench(gpuBe: Backend, cpuBe: Backend, ctx?: { configs: BenchConfig[] }): Promise<ModelRow[]> {
  const rows = await benchModel(gpuBe, cpuBe, ctx?.configs);
  console.log('## Transformer (S = 2L 2H d64 B16 seq 16+16; M = 4L 4H d128 B32 seq 32+32)\n');
  console.log(
    table(
      ['config', 'what', 'webgpu ms', 'cpu ref ms', 'cpu/webgpu', 'webgpu tokens/s', 'dispatches', 'submits', 'readbacks'],
      rows.map((r) => [
        r.config,
        r.what,
        r.gpu.medianMs,
        r.cpu.medianMs,
        r.cpu.medianMs / r.gpu.medianMs,
        (r.tokens / r.gpu.medianMs) * 1000,
        r.gpu.perCall.dispatches,
        r.gpu.perCall.submits,
        r.gpu.perCall.readbacks,
      ]),
    ),
  );
  console.log('');
  return rows;
}
