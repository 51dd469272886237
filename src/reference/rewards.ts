// float64 reference: reward shaping with a per-token KL penalty and the score on the last action token.
import type { KlEstimator } from './kl.ts';
import { klValue } from './kl.ts';

/** Index t of the last action token of row b, or −1 when the row has none. mask (B,A). */
export function lastActionIndex(mask: ArrayLike<number>, b: number, A: number): number {
  for (let t = A - 1; t >= 0; t--) if (mask[b * A + t] !== 0) return t;
  return -1;
}

/**
 * kl[b,t] = mask·KL(logp, ref) (0 where mask = 0, so padding garbage never leaks in);
 * rewards = −β·kl, plus scores[b] at the last action token of row b.
 * scores (B), logp / refLogp / mask (B,A) → rewards (B,A), kl (B,A).
 */
export function shapeRewardsRef(
  scores: ArrayLike<number>,
  logp: ArrayLike<number>,
  refLogp: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  beta: number,
  estimator: KlEstimator,
): { rewards: Float64Array; kl: Float64Array } {
  const rewards = new Float64Array(B * A);
  const kl = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const last = lastActionIndex(mask, b, A);
    for (let t = 0; t < A; t++) {
      const i = b * A + t;
      const m = mask[i];
      kl[i] = m !== 0 ? m * klValue(logp[i], refLogp[i], estimator) : 0;
      rewards[i] = -beta * kl[i] + (t === last ? scores[b] : 0);
    }
  }
  return { rewards, kl };
}
