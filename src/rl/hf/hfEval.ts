// Held-out accuracy of a Hugging Face model with its actor's adapters, scored by the task's rule:
// greedy answers to fixed prompts (`greedy_accuracy`, as the character model's evaluation reports
// it), and K answers a prompt drawn at the rollout's temperature (`accuracy`: what the policy the
// rollouts sample from gets right, the number RL moves first). The same prompts and the same seed
// before and after training, so the two evaluations differ only by the adapters.
import { generate } from '../../model/hf/hfGenerate.ts';
import type { HfModel } from '../../model/hf/hfModel.ts';
import type { ModelAdapters } from '../../model/hf/lora.ts';

export interface HfEvalOptions {
  maxNewTokens: number;
  eosIds: readonly number[];
  padId: number;
  /** Prompts generated together (bounds the KV cache). */
  batch: number;
}

export interface HfSampledEvalOptions extends HfEvalOptions {
  /** Answers drawn per prompt. */
  samples: number;
  temperature: number;
  /** The draws' seed: the same seed and batch draw the same answers from the same policy. */
  seed: number;
}

export interface HfEvalResult {
  accuracy: number; // share of answers scored ≥ 0.5
  scoreMean: number;
  samples: { prompt: string; response: string; score: number }[];
}

/** The held-out problems (their ids and texts), how a response's ids read, and the task's rule (told whether EOS ended the answer). */
export interface HeldOut {
  prompts: { ids: readonly number[]; text: string }[];
  decode: (ids: readonly number[]) => string;
  score: (prompt: string, response: string, endedWithEos: boolean) => number;
}

/**
 * Greedy responses to the held-out prompts with `adapters` on (null: the base model), decoded and
 * scored by the task's rule (prompt text, response text); the model's adapters are left as they were.
 */
export function greedyEvaluation(model: HfModel, adapters: ModelAdapters | null, heldOut: HeldOut, opts: HfEvalOptions): Promise<HfEvalResult> {
  return evaluation(model, adapters, heldOut, opts, { greedy: true, temperature: 1, seed: 0 });
}

/**
 * `opts.samples` responses to each prompt drawn at `opts.temperature` (top-p and top-k off, as
 * the rollouts draw), scored as `greedyEvaluation` scores; `accuracy` is over every draw.
 */
export function sampledEvaluation(model: HfModel, adapters: ModelAdapters | null, heldOut: HeldOut, opts: HfSampledEvalOptions): Promise<HfEvalResult> {
  if (!Number.isInteger(opts.samples) || opts.samples < 1) throw new Error(`samples must be a positive integer, got ${opts.samples}`);
  const prompts = heldOut.prompts.flatMap((p) => Array.from({ length: opts.samples }, () => p));
  return evaluation(model, adapters, { ...heldOut, prompts }, opts, { greedy: false, temperature: opts.temperature, seed: opts.seed });
}

/** What a run reports before and after training: greedy, and over sampled answers unless `draws.samples` is 0. */
export interface HeldOutEvaluation {
  greedy: HfEvalResult;
  sampled: HfEvalResult | null;
}

/**
 * The evaluation a run reports before and after training: greedy, and `draws.samples` answers a
 * prompt at `draws.temperature`, drawn from a seed derived from the run's, so that the draws before
 * and after are the same ones and the two evaluations differ only by the adapters.
 */
export async function heldOutEvaluation(
  model: HfModel,
  adapters: ModelAdapters | null,
  heldOut: HeldOut,
  opts: HfEvalOptions,
  draws: { samples: number; temperature: number; runSeed: number },
): Promise<HeldOutEvaluation> {
  const greedy = await greedyEvaluation(model, adapters, heldOut, opts);
  if (draws.samples === 0) return { greedy, sampled: null };
  const seed = (draws.runSeed ^ 0x5eed) >>> 0;
  return { greedy, sampled: await sampledEvaluation(model, adapters, heldOut, { ...opts, samples: draws.samples, temperature: draws.temperature, seed }) };
}

async function evaluation(
  model: HfModel,
  adapters: ModelAdapters | null,
  { prompts, decode, score }: HeldOut,
  opts: HfEvalOptions,
  draw: { greedy: boolean; temperature: number; seed: number },
): Promise<HfEvalResult> {
  const before = model.loraAdapters;
  model.setAdapters(adapters);
  const samples: HfEvalResult['samples'] = [];
  try {
    for (let at = 0, chunk = 0; at < prompts.length; at += opts.batch, chunk++) {
      const part = prompts.slice(at, at + opts.batch);
      const gen = await generate(
        model,
        part.map((p) => p.ids),
        {
          maxNewTokens: opts.maxNewTokens,
          greedy: draw.greedy,
          temperature: draw.temperature,
          topP: 1,
          topK: 0,
          // each chunk its own stream of draws (one seed for all would repeat a chunk's rows)
          seed: draw.greedy ? 0 : (draw.seed + chunk) >>> 0,
          eosIds: opts.eosIds,
          padId: opts.padId,
        },
      );
      part.forEach((p, i) => {
        const response = decode(gen.tokens[i]);
        samples.push({ prompt: p.text, response, score: score(p.text, response, gen.finished[i]) });
      });
    }
  } finally {
    model.setAdapters(before);
  }
  const n = Math.max(samples.length, 1);
  return {
    accuracy: samples.filter((s) => s.score >= 0.5).length / n,
    scoreMean: samples.reduce((s, x) => s + x.score, 0) / n,
    samples,
  };
}

/** The accuracy of each group of an evaluation's answers (`groupOf` a prompt; null leaves it out), with its answers' count. */
export function accuracyByGroup(result: HfEvalResult, groupOf: (prompt: string) => string | null): Record<string, { accuracy: number; count: number }> {
  const out: Record<string, { accuracy: number; count: number }> = {};
  for (const x of result.samples) {
    const g = groupOf(x.prompt);
    if (g === null) continue;
    out[g] ??= { accuracy: 0, count: 0 };
    out[g].accuracy += x.score >= 0.5 ? 1 : 0;
    out[g].count++;
  }
  for (const o of Object.values(out)) o.accuracy /= o.count;
  return out;
}
