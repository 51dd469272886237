// float64 reference: PPO clipped surrogate with asymmetric clip and dual clip (DESIGN.md).
// Matches shaders/policy_loss.wgsl + shaders/aggregate.wgsl (agg_finalize).
import type { PolicyLossParams } from '../backend/ppoOps.ts';
import { aggWeights, maskedMeanRef } from './aggregate.ts';

/** Throws before any GPU work when the clip parameters make no sense. */
export function validatePolicyLossParams(p: PolicyLossParams): void {
  if (!(Number.isFinite(p.clipLow) && p.clipLow > 0)) throw new Error(`policyLoss: clipLow must be a finite number > 0, got ${p.clipLow}`);
  if (!(Number.isFinite(p.clipHigh) && p.clipHigh > 0)) throw new Error(`policyLoss: clipHigh must be a finite number > 0, got ${p.clipHigh}`);
  if (p.clipC !== null && !(Number.isFinite(p.clipC) && p.clipC > 1)) {
    throw new Error(`policyLoss: dual-clip constant clipC must be a finite number > 1 (or null for no dual clip), got ${p.clipC}`);
  }
}

/** Per-token loss, flags and ∂L/∂logp (before aggregation weights). */
export function policyTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams) {
  const d = logp - old;
  const ratio = Math.exp(Math.min(20, Math.max(-20, d)));
  const pg1 = -adv * ratio;
  const pg2 = -adv * Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  const clipMax = Math.max(pg1, pg2);
  const clipped = pg2 > pg1;
  let loss = clipMax;
  let lower = false;
  if (p.clipC !== null && adv < 0) {
    const pg3 = -adv * p.clipC;
    lower = pg3 < clipMax;
    loss = Math.min(clipMax, pg3);
  }
  // Only the unclipped branch depends on logp, and only inside the ±20 ratio clamp.
  const grad = clipped || lower || !(Math.abs(d) < 20) ? 0 : -adv * ratio;
  return { loss, clipped, lower, grad };
}

export function policyLossRef(
  oldLogprobs: ArrayLike<number>, // (B, A)
  logprobs: ArrayLike<number>, // (B, A)
  advantages: ArrayLike<number>, // (B, A)
  mask: ArrayLike<number>, // (B, A)
  B: number,
  A: number,
  params: PolicyLossParams,
): { stats: Float64Array; gradLogprobs: Float64Array } {
  validatePolicyLossParams(params);
  const n = B * A;
  const w = aggWeights(mask, B, A, params.agg);
  const clippedF = new Float64Array(n);
  const lowerF = new Float64Array(n);
  const kl = new Float64Array(n);
  const gradLogprobs = new Float64Array(n);
  let loss = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue; // masked positions may hold anything; they contribute nothing
    const t = policyTokenRef(oldLogprobs[i], logprobs[i], advantages[i], params);
    loss += w[i] * t.loss;
    clippedF[i] = t.clipped ? 1 : 0;
    lowerF[i] = t.lower ? 1 : 0;
    kl[i] = oldLogprobs[i] - logprobs[i];
    gradLogprobs[i] = w[i] * t.grad;
  }
  const stats = Float64Array.of(loss, maskedMeanRef(clippedF, mask), maskedMeanRef(lowerF, mask), maskedMeanRef(kl, mask));
  return { stats, gradLogprobs };
}
