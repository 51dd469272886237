// Which two samples the "Human feedback" view offers: responses to the same prompt from the
// latest rollout, distinct from each other, not yet labelled or skipped. Pure and free of the
// page's translations, so the fuzz CLI (tsx, no Vite) can use it; feedbackPairs.ts re-exports it.
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
