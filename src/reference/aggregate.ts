// float64 reference: masked loss aggregation and its weights ∂L/∂x (B,A).
// Mirrors verl verl/trainer/ppo/core_algos.py agg_loss (see aggWeights for where the modes differ).

/** Loss aggregation modes (verl core_algos.agg_loss); weights in src/reference/aggregate.ts. */
export type LossAgg = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-sum-norm';
export const LOSS_AGGS: readonly LossAgg[] = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'];

/**
 * Scale of seq-mean-token-sum-norm (ignored by the other modes):
 * 'per_seq' = (1/B)·Σ_b Σ_t m·x / A (the Dr. GRPO paper's per-sequence mean; verl's agg_loss since
 *             v0.7.1, verl-project/verl commit b8d91ef, which divides by the non-empty rows);
 * 'verl'    = Σ_b Σ_t m·x / A (verl agg_loss up to v0.7.0: sum over sequences, no 1/B), B× the per_seq value.
 */
export type NormScale = 'per_seq' | 'verl';
export const NORM_SCALES: readonly NormScale[] = ['per_seq', 'verl'];

/**
 * The aggregations a loss kernel can be asked for: the config's LossAgg modes, plus one that only a
 * loss mode forces: 'seq-mean-token-mean-all-rows' = (1/B)·Σ_b (token mean of row b), every row
 * counted, empty ones included — torch.mean over the batch of per-row values, as verl's
 * compute_policy_loss_geo_mean aggregates (it ignores loss_agg_mode).
 */
export type PolicyAgg = LossAgg | 'seq-mean-token-mean-all-rows';

/**
 * Weights w (B,A) such that the aggregate is Σ w·x (n_b = row b's tokens, S = rows having any,
 * N = Σ n_b); every weight is 0 when its denominator is 0:
 * - token-mean: mask / N;
 * - seq-mean-token-mean: mask / (n_b · S) (verl divides by the rows having tokens too);
 * - seq-mean-token-sum: mask / S — Σ_b (token sum of b) / S; verl's older agg_loss takes
 *   torch.mean over all B rows, its newer one (global_batch_info) over the S rows with tokens;
 *   the two agree unless a row has no token;
 * - seq-mean-token-sum-norm, normScale 'per_seq': mask / (B · A), A the padded response length
 *   (the Dr. GRPO paper's per-sequence mean);
 * - seq-mean-token-sum-norm, normScale 'verl': mask / A — verl ≤ 0.7.0's agg_loss sums the sequences'
 *   token sums and divides by A only (B× the per_seq value);
 * - seq-mean-token-mean-all-rows (forced by geo_mean, not a config choice): mask / (n_b · B).
 */
export function aggWeights(mask: ArrayLike<number>, B: number, A: number, agg: PolicyAgg, normScale: NormScale = 'per_seq'): Float64Array {
  const w = new Float64Array(B * A);
  const rowN = new Float64Array(B);
  let rows = 0;
  let n = 0;
  for (let b = 0; b < B; b++) {
    for (let a = 0; a < A; a++) rowN[b] += mask[b * A + a];
    if (rowN[b] > 0) rows++;
    n += rowN[b];
  }
  for (let b = 0; b < B; b++) {
    if (rowN[b] === 0) continue;
    for (let a = 0; a < A; a++) {
      const i = b * A + a;
      const m = mask[i];
      switch (agg) {
        case 'token-mean':
          w[i] = m / n;
          break;
        case 'seq-mean-token-mean':
          w[i] = m / (rowN[b] * rows);
          break;
        case 'seq-mean-token-sum':
          w[i] = m / rows;
          break;
        case 'seq-mean-token-sum-norm':
          w[i] = normScale === 'verl' ? m / A : m / (B * A);
          break;
        case 'seq-mean-token-mean-all-rows':
          w[i] = m / (rowN[b] * B);
          break;
      }
    }
  }
  return w;
}

export function aggregateRef(
  x: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  agg: LossAgg,
  normScale: NormScale = 'per_seq',
): { value: number; weights: Float64Array } {
  const weights = aggWeights(mask, B, A, agg, normScale);
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
