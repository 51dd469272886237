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
  endedWithEos: boolean;
  tokens: SampleToken[];
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
      const t: SampleToken = {
        text: tokenText(tok, ids[a]),
        advantage: e.advantages[k],
        kl: e.kl[k],
        ratio: ratio[i * A + a],
        value: e.values[k],
        reward: e.rewards[k],
        return: e.returns[k],
        refLogprob: e.refLogprobs[k],
      };
      if (e.oldLogprobs) t.oldLogprob = e.oldLogprobs[k];
      if (e.rolloutLogprobs) t.rolloutLogprob = e.rolloutLogprobs[k];
      if (newLogprobs) t.newLogprob = newLogprobs[i * A + a];
      if (covSelected) t.covPicked = covSelected[i * A + a] === 1;
      if (e.rsMask) t.rejected = e.rsMask[k] === 0;
      tokens.push(t);
    }
    out.push({ prompt: samples[b].prompt, response: samples[b].response, reward: e.scores[b], endedWithEos: samples[b].endedWithEos, tokens });
  }
  return out;
}
