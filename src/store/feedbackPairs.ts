// Which two samples the "Human feedback" view offers: responses to the same prompt from the
// latest rollout, distinct from each other, not yet labelled or skipped.
import type { SampleRow } from '../worker/protocol.ts';

/** Identity of an unordered pair of responses to a prompt (so A/B and B/A are one pair). */
export function pairKey(prompt: string, a: string, b: string): string {
  const [x, y] = a < b ? [a, b] : [b, a];
  return JSON.stringify([prompt, x, y]);
}

export interface CandidatePair {
  prompt: string;
  a: SampleRow;
  b: SampleRow;
  key: string;
}

/** Every unseen pair of distinct responses per prompt, in the order the rows arrived. */
export function candidatePairs(rows: readonly SampleRow[], seen: ReadonlySet<string>): CandidatePair[] {
  const byPrompt = new Map<string, SampleRow[]>();
  for (const r of rows) {
    const group = byPrompt.get(r.prompt);
    // Identical responses cannot be compared: keep the first of each.
    if (!group) byPrompt.set(r.prompt, [r]);
    else if (!group.some((g) => g.response === r.response)) group.push(r);
  }
  const out: CandidatePair[] = [];
  for (const [prompt, group] of byPrompt) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const key = pairKey(prompt, group[i].response, group[j].response);
        if (!seen.has(key)) out.push({ prompt, a: group[i], b: group[j], key });
      }
    }
  }
  return out;
}

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
