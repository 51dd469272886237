// float64 reference: clipped value loss ½·max((v−R)², (clip(v, v_old ± ε)−R)²) (docs/algorithms.md, Numerical conventions).
// Matches shaders/value_loss.wgsl + shaders/aggregate.wgsl (agg_finalize).
import type { LossAgg, NormScale } from './aggregate.ts';
import { aggWeights, maskedMeanRef } from './aggregate.ts';

export interface ValueLossParams {
  /** ε_v > 0 clips v around v_old, or null for an unclipped value loss. */
  clip: number | null;
  agg: LossAgg;
  /** Default 'per_seq'; only read with agg = 'seq-mean-token-sum-norm'. */
  normScale?: NormScale;
}

export function validateValueLossParams(p: ValueLossParams): void {
  if (p.clip !== null && !(Number.isFinite(p.clip) && p.clip > 0)) {
    throw new Error(`valueLoss: clip must be a finite number > 0 (or null for no clipping), got ${p.clip}`);
  }
}

/**
 * Per-token loss, clip flag and ∂L/∂v before aggregation weights. vclip = v_old + clamp(v − v_old, ±ε)
 * is taken as exactly v inside the band: rounding in v_old + (v − v_old) would otherwise flip the
 * l2 > l1 flag at random and make the clip fraction depend on the float width.
 */
export function valueTokenRef(v: number, old: number, ret: number, clip: number | null) {
  const l1 = (v - ret) * (v - ret);
  if (clip === null) return { loss: 0.5 * l1, clipped: false, grad: v - ret };
  const dv = v - old;
  const inside = Math.abs(dv) < clip;
  const vclip = inside ? v : old + (dv > 0 ? clip : -clip);
  const l2 = (vclip - ret) * (vclip - ret);
  const clipped = l2 > l1;
  const grad = clipped ? (inside ? vclip - ret : 0) : v - ret;
  return { loss: 0.5 * Math.max(l1, l2), clipped, grad };
}

export function valueLossRef(
  values: ArrayLike<number>, // (B, A)
  oldValues: ArrayLike<number>, // (B, A)
  returns: ArrayLike<number>, // (B, A)
  mask: ArrayLike<number>, // (B, A)
  B: number,
  A: number,
  params: ValueLossParams,
): { stats: Float64Array; gradValues: Float64Array } {
  validateValueLossParams(params);
  const n = B * A;
  const w = aggWeights(mask, B, A, params.agg, params.normScale ?? 'per_seq');
  const clippedF = new Float64Array(n);
  const gradValues = new Float64Array(n);
  let loss = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const t = valueTokenRef(values[i], oldValues[i], returns[i], params.clip);
    loss += w[i] * t.loss;
    clippedF[i] = t.clipped ? 1 : 0;
    gradValues[i] = w[i] * t.grad;
  }
  return { stats: Float64Array.of(loss, maskedMeanRef(clippedF, mask)), gradValues };
}
