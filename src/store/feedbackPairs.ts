// The "Human feedback" view's pairs (feedbackPairing.ts) and the counts its sentence reads
// (worded in src/ui/teach/feedbackText.ts).
import type { SampleRow } from '../worker/protocol.ts';

export { type CandidatePair, candidatePairs, pairKey } from './feedbackPairing.ts';

/** Why the view offers `left` pairs: the rollout's prompts × responses, how many pairs of different responses, how many are already labelled or skipped. */
export interface PairCounts {
  prompts: number;
  /** Responses per prompt (rows / prompts, rounded). */
  perPrompt: number;
  /** Pairs of different responses to the same prompt. */
  total: number;
  /** Of those, labelled or skipped. */
  done: number;
  left: number;
}

export function pairCounts(rows: readonly SampleRow[], left: number): PairCounts {
  const byPrompt = new Map<string, Set<string>>();
  for (const r of rows) byPrompt.set(r.prompt, (byPrompt.get(r.prompt) ?? new Set()).add(r.response));
  const prompts = byPrompt.size;
  const perPrompt = prompts > 0 ? Math.round(rows.length / prompts) : 0;
  let total = 0;
  for (const responses of byPrompt.values()) total += (responses.size * (responses.size - 1)) / 2;
  return { prompts, perPrompt, total, done: total - left, left };
}
