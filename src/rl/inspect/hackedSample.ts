// Which response of a captured batch to show as a reward hack: among the responses furthest from
// the reference (the half with the lowest mean log π_ref per action token: text the SFT model
// would hardly write), the one the reward scored highest. A hack is a high score on such text.
import type { IterationTrace } from './trace.ts';

/** Mean log π_ref over row b's action tokens; −∞ for a row without any (nothing to read). */
export function meanRefLogprob(t: Pick<IterationTrace, 'A' | 'actionMask' | 'refLogprobs'>, b: number): number {
  let sum = 0;
  let n = 0;
  for (let a = 0; a < t.A; a++) {
    if (t.actionMask[b * t.A + a] === 0) continue;
    sum += t.refLogprobs[b * t.A + a];
    n++;
  }
  return n > 0 ? sum / n : Number.NEGATIVE_INFINITY;
}

/**
 * The row to inspect: the highest score among the rows whose mean log π_ref is at most the median
 * (ties: the one further from the reference); −1 for an empty batch. Rows without action tokens
 * are never chosen while another row has some.
 */
export function hackedSample(t: Pick<IterationTrace, 'B' | 'A' | 'actionMask' | 'refLogprobs' | 'scores'>): number {
  const rows = Array.from({ length: t.B }, (_, b) => ({ b, ref: meanRefLogprob(t, b), score: t.scores[b] })).filter((r) => Number.isFinite(r.ref));
  if (rows.length === 0) return t.B > 0 ? 0 : -1;
  const byRef = rows.map((r) => r.ref).sort((x, y) => x - y);
  const median = byRef[Math.floor((byRef.length - 1) / 2)];
  let best = rows[0];
  for (const r of rows) {
    if (r.ref > median) continue;
    if (best.ref > median || r.score > best.score || (r.score === best.score && r.ref < best.ref)) best = r;
  }
  return best.b;
}
