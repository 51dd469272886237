// SampleRow views for the UI: a handful of sequences of the iteration with per-token quantities.
// Rows come from the LAST minibatch of the last epoch, whose ratios π_new/π_old were taken at that
// minibatch's forward pass (before its AdamW step).
import type { CharTokenizer } from '../model/tokenizer.ts';
import type { TaskSample } from '../tasks/task.ts';
import type { ExperienceHost } from './metrics.ts';
import { responseIds, type RolloutBatch } from './rollout.ts';

/** One response token with the per-token quantities the teaching views colour by. */
export interface SampleToken {
  text: string;
  advantage: number;
  /** Per-token KL estimate KL_t (the shaped reward is −β·KL_t). */
  kl: number;
  /** π_new / π_old at the last update epoch. */
  ratio: number;
  value: number;
  /** Optional extras for the "KL shaping" view; absent values are drawn as unknown. */
  reward?: number;
  return?: number;
  /** "Three policies": log π_rollout (the sampler's), log π_old (experience pass), log π_new (last epoch). */
  rolloutLogprob?: number;
  oldLogprob?: number;
  newLogprob?: number;
  /** log π_ref of the token: with oldLogprob, the KL view recomputes the shaping under another β. */
  refLogprob?: number;
  /** clip_cov / kl_cov acted on this token in the last minibatch step (absent for other modes). */
  covPicked?: boolean;
  /** Rejection sampling (rolloutRs) dropped this token from the loss: read off the trainer's own mask. */
  rejected?: boolean;
}

export interface SampleRow {
  prompt: string;
  response: string;
  /** Scalar task score of the whole response (before KL shaping). */
  reward: number;
  /** null where it was not recorded (an own-model trace from a file made before the flag). */
  endedWithEos: boolean | null;
  tokens: SampleToken[];
}

/** Rows of an iteration the teaching views show (the first of the update's last minibatch). */
export const SAMPLE_ROWS = 6;

/** The (B, A) arrays a sample token reads its quantities from: the trainer's experience, or a trace's. */
export interface SampleTokenSource {
  advantages: ArrayLike<number>;
  kl: ArrayLike<number>;
  values: ArrayLike<number>;
  rewards: ArrayLike<number>;
  returns: ArrayLike<number>;
  refLogprobs: ArrayLike<number>;
  oldLogprobs?: ArrayLike<number> | null;
  rolloutLogprobs?: ArrayLike<number> | null;
  /** The mask after rejection sampling (0 where a token was dropped); null without it. */
  rsMask?: ArrayLike<number> | null;
}

/** Token `k` of the batch, with what its update step gave it (ratio, π_new, the cov pick). */
export function sampleToken(src: SampleTokenSource, k: number, text: string, ratio: number, step: { newLogprob?: number; covPicked?: boolean } = {}): SampleToken {
  const t: SampleToken = {
    text,
    advantage: src.advantages[k],
    kl: src.kl[k],
    ratio,
    value: src.values[k],
    reward: src.rewards[k],
    return: src.returns[k],
    refLogprob: src.refLogprobs[k],
  };
  if (src.oldLogprobs) t.oldLogprob = src.oldLogprobs[k];
  if (src.rolloutLogprobs) t.rolloutLogprob = src.rolloutLogprobs[k];
  if (step.newLogprob !== undefined) t.newLogprob = step.newLogprob;
  if (step.covPicked !== undefined) t.covPicked = step.covPicked;
  if (src.rsMask) t.rejected = src.rsMask[k] === 0;
  return t;
}

export function tokenText(tok: CharTokenizer, id: number): string {
  if (id === tok.eosId) return '<eos>';
  if (id === tok.bosId) return '<bos>';
  if (id === tok.padId) return '<pad>';
  return tok.decode([id], { stopAtEos: false });
}

export function sampleRows(
  tok: CharTokenizer,
  r: RolloutBatch,
  samples: TaskSample[],
  e: ExperienceHost,
  rows: Int32Array, // batch rows of the last minibatch
  ratio: Float64Array, // (rows.length, A) π_new/π_old of those rows
  count: number,
  newLogprobs?: Float64Array, // (rows.length, A) log π_new of those rows
  covSelected?: Float64Array, // (rows.length, A) 1 where clip_cov / kl_cov acted in that step
): SampleRow[] {
  const A = r.A;
  const out: SampleRow[] = [];
  for (let i = 0; i < Math.min(count, rows.length); i++) {
    const b = rows[i];
    const ids = responseIds(r, b);
    const tokens = [];
    for (let a = 0; a < A; a++) {
      const k = b * A + a;
      if (e.mask[k] === 0) continue;
      tokens.push(
        sampleToken(e, k, tokenText(tok, ids[a]), ratio[i * A + a], {
          newLogprob: newLogprobs?.[i * A + a],
          covPicked: covSelected ? covSelected[i * A + a] === 1 : undefined,
        }),
      );
    }
    out.push({ prompt: samples[b].prompt, response: samples[b].response, reward: e.scores[b], endedWithEos: samples[b].endedWithEos, tokens });
  }
  return out;
}
