// float64 reference: masked loss aggregation and its weights ∂L/∂x (B,A).
import type { LossAgg } from '../backend/ppoOps.ts';

export const LOSS_AGG_CODE: Record<LossAgg, number> = {
  'token-mean': 0,
  'seq-mean-token-mean': 1,
  'seq-mean-token-sum-norm': 2,
};

/**
 * Weights w (B,A) such that the aggregate is Σ w·x:
 * - token-mean: mask / Σmask (0 everywhere if no token is unmasked);
 * - seq-mean-token-mean: mask / (n_b · S) with n_b the row's tokens and S the rows having any;
 * - seq-mean-token-sum-norm: mask / (B · A), A the padded response length (Dr. GRPO).
 */
export function aggWeights(mask: ArrayLike<number>, B: number, A: number, agg: LossAgg): Float64Array {
  const w = new Float64Array(B * A);
  if (agg === 'token-mean') {
    let n = 0;
    for (let i = 0; i < B * A; i++) n += mask[i];
    if (n > 0) for (let i = 0; i < B * A; i++) w[i] = mask[i] / n;
  } else if (agg === 'seq-mean-token-mean') {
    const rowN = new Float64Array(B);
    let rows = 0;
    for (let b = 0; b < B; b++) {
      for (let a = 0; a < A; a++) rowN[b] += mask[b * A + a];
      if (rowN[b] > 0) rows++;
    }
    for (let b = 0; b < B; b++) {
      if (rowN[b] === 0) continue;
      for (let a = 0; a < A; a++) w[b * A + a] = mask[b * A + a] / (rowN[b] * rows);
    }
  } else {
    for (let i = 0; i < B * A; i++) w[i] = mask[i] / (B * A);
  }
  return w;
}

export function aggregateRef(
  x: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  agg: LossAgg,
): { value: number; weights: Float64Array } {
  const weights = aggWeights(mask, B, A, agg);
  let value = 0;
  for (let i = 0; i < B * A; i++) if (weights[i] !== 0) value += weights[i] * x[i];
  return { value, weights };
}

/** Masked mean over all tokens (clip fractions, approx KL); 0 when nothing is unmasked. */
export function maskedMeanRef(x: ArrayLike<number>, mask: ArrayLike<number>): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < x.length; i++) {
    if (mask[i] !== 0) {
      s += x[i] * mask[i];
      n += mask[i];
    }
  }
  return n > 0 ? s / n : 0;
}
