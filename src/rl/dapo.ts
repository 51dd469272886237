// DAPO's host-side pieces (Yu et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning System
// at Scale"; verl recipe/dapo): the soft overlong penalty on the sequence score, and the group
// filter of dynamic sampling. Clip-higher is clipHigh and the token-level loss is lossAgg =
// 'token-mean'; both are ordinary knobs.

/**
 * Soft overlong punishment (DAPO eq. 13, verl DAPORewardManager): with L_max = maxResponseLength
 * and L_cache = buffer, a response of |y| tokens gets
 *   0                                  if |y| ≤ L_max − L_cache
 *   −(|y| − (L_max − L_cache))/L_cache · factor   otherwise (−factor at |y| = L_max)
 * added to its score. |y| counts the action tokens (the first EOS included). buffer 0 = off.
 */
export function overlongPenalties(lengths: ArrayLike<number>, maxResponseLength: number, buffer: number, factor: number): Float64Array {
  const out = new Float64Array(lengths.length);
  if (buffer <= 0) return out;
  const expected = maxResponseLength - buffer;
  for (let b = 0; b < lengths.length; b++) {
    const exceed = lengths[b] - expected;
    out[b] = exceed > 0 ? (-exceed / buffer) * factor : 0;
  }
  return out;
}

/**
 * Dynamic sampling's filter: the groups (prompt ids, in first-seen order) whose scores are not all
 * equal — a group where every sample scored the same has zero group-relative advantage and only
 * dilutes the batch. `kept` and `dropped` list group ids.
 */
export function informativeGroups(scores: ArrayLike<number>, group: ArrayLike<number>): { kept: number[]; dropped: number[] } {
  const lo = new Map<number, number>();
  const hi = new Map<number, number>();
  const order: number[] = [];
  for (let b = 0; b < group.length; b++) {
    const g = group[b];
    if (!lo.has(g)) {
      order.push(g);
      lo.set(g, scores[b]);
      hi.set(g, scores[b]);
    }
    lo.set(g, Math.min(lo.get(g)!, scores[b]));
    hi.set(g, Math.max(hi.get(g)!, scores[b]));
  }
  const kept: number[] = [];
  const dropped: number[] = [];
  for (const g of order) (hi.get(g)! > lo.get(g)! ? kept : dropped).push(g);
  return { kept, dropped };
}
