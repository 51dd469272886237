// float64 reference: the policy-loss family, mirroring verl verl/trainer/ppo/core_algos.py
//   'vanilla' compute_policy_loss_vanilla: PPO clipped surrogate, asymmetric clip, dual clip (docs/algorithms.md, Numerical conventions)
//   'gspo'    compute_policy_loss_gspo:    sequence-level ratio with a stop-gradient token combination
//   'cispo'   compute_policy_loss_cispo:   stop-gradient clipped IS weight × A × logπ
// each multiplied, when given, by per-token stop-gradient weights (verl rollout_is_weights).
// Matches shaders/lib_policy_term.wgsl (per token), policy_loss.wgsl and aggregate.wgsl (agg_finalize).
import { aggWeights, maskedMeanRef, type LossAgg, type NormScale } from './aggregate.ts';

/**
 * Policy-loss family: 'vanilla' PPO clip (verl compute_policy_loss_vanilla), 'gspo' sequence-level
 * ratio (compute_policy_loss_gspo), 'cispo' stop-gradient clipped IS weight × A × logπ
 * (compute_policy_loss_cispo). The exact math is below.
 */
export type LossMode = 'vanilla' | 'gspo' | 'cispo';
export const LOSS_MODES: readonly LossMode[] = ['vanilla', 'gspo', 'cispo'];

export interface PolicyLossParams {
  /** ε_low > 0: ratio is clipped below at 1 − ε_low. */
  clipLow: number;
  /** ε_high > 0: ratio is clipped above at 1 + ε_high. */
  clipHigh: number;
  /** Dual-clip constant c > 1 for A < 0, or null for no dual clip. */
  clipC: number | null;
  /** Ignored by 'gspo', which always aggregates seq-mean-token-mean (as verl does). */
  agg: LossAgg;
  /** Default 'vanilla'. Dual clip (clipC) applies to vanilla only. */
  lossMode?: LossMode;
  /** Default 'per_seq'; only read with agg = 'seq-mean-token-sum-norm'. */
  normScale?: NormScale;
}

/** verl clamps GSPO's log sequence ratio from above at 10 before exp. */
export const GSPO_LOG_RATIO_MAX = 10;
/** verl clamps the token log-ratio to ±20 before exp (vanilla, CISPO). */
export const LOG_RATIO_CLAMP = 20;

/** Throws before any GPU work when the clip parameters make no sense. */
export function validatePolicyLossParams(p: PolicyLossParams): void {
  if (!(Number.isFinite(p.clipLow) && p.clipLow > 0)) throw new Error(`policyLoss: clipLow must be a finite number > 0, got ${p.clipLow}`);
  if (!(Number.isFinite(p.clipHigh) && p.clipHigh > 0)) throw new Error(`policyLoss: clipHigh must be a finite number > 0, got ${p.clipHigh}`);
  if (p.clipC !== null && !(Number.isFinite(p.clipC) && p.clipC > 1)) {
    throw new Error(`policyLoss: dual-clip constant clipC must be a finite number > 1 (or null for no dual clip), got ${p.clipC}`);
  }
  const modes: readonly LossMode[] = ['vanilla', 'gspo', 'cispo'];
  if (p.lossMode !== undefined && !modes.includes(p.lossMode)) throw new Error(`policyLoss: lossMode must be one of ${modes.join(', ')}, got ${String(p.lossMode)}`);
  if (p.normScale !== undefined && p.normScale !== 'per_seq' && p.normScale !== 'verl') {
    throw new Error(`policyLoss: normScale must be per_seq or verl, got ${String(p.normScale)}`);
  }
}

/** A per-token result: loss, clip flags, ppo_kl term and ∂loss/∂logp (before weights). */
export interface PolicyToken {
  loss: number;
  clipped: boolean;
  lower: boolean;
  /** The token's contribution to ppo_kl (old − logp, clamped as verl clamps it). */
  kl: number;
  grad: number;
}

/** Vanilla PPO per token (verl compute_policy_loss_vanilla). */
export function policyTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams): PolicyToken {
  const d = logp - old;
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d));
  const ratio = Math.exp(dc);
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
  const grad = clipped || lower || !(Math.abs(d) < LOG_RATIO_CLAMP) ? 0 : -adv * ratio;
  return { loss, clipped, lower, kl: -dc, grad };
}

/**
 * CISPO per token: r = exp(clamp(d, ±20)), r̂ = sg(clamp(r, 1 − ε_low, 1 + ε_high));
 * loss = −r̂·A·logp, ∂/∂logp = −r̂·A (every token keeps its gradient); clipped = r ≠ r̂.
 */
export function cispoTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams): PolicyToken {
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logp - old));
  const ratio = Math.exp(dc);
  const r = Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  return { loss: -r * adv * logp, clipped: ratio !== r, lower: false, kl: -dc, grad: -r * adv };
}

/**
 * GSPO per token given its row's length-normalised log-ratio s_b = Σ_t m·(logp − old) / max(n_b, 1):
 * log s_{b,t} = logp − sg(logp) + sg(s_b), clamped above at 10, so the value is ratio = exp(min(s_b, 10))
 * and ∂ratio/∂logp_t = ratio (0 once the clamp binds); loss = max(−A·ratio, −A·clamp(ratio, 1 ± ε)),
 * ∂loss/∂logp_t = −A·ratio on the unclipped branch, else 0. ppo_kl uses the unclamped old − logp.
 */
export function gspoTokenRef(old: number, logp: number, adv: number, seqLogRatio: number, p: PolicyLossParams): PolicyToken {
  const ratio = Math.exp(Math.min(seqLogRatio, GSPO_LOG_RATIO_MAX));
  const pg1 = -adv * ratio;
  const pg2 = -adv * Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  const clipped = pg2 > pg1;
  const grad = clipped || seqLogRatio > GSPO_LOG_RATIO_MAX ? 0 : -adv * ratio;
  return { loss: Math.max(pg1, pg2), clipped, lower: false, kl: old - logp, grad };
}

/** s_b per row (B): masked mean of logp − old over the row, 0 for a row with no token. */
export function gspoSeqLogRatios(old: ArrayLike<number>, logp: ArrayLike<number>, mask: ArrayLike<number>, B: number, A: number): Float64Array {
  const s = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let sum = 0;
    let n = 0;
    for (let a = 0; a < A; a++) {
      const i = b * A + a;
      if (mask[i] === 0) continue;
      sum += mask[i] * (logp[i] - old[i]);
      n += mask[i];
    }
    s[b] = sum / Math.max(n, 1);
  }
  return s;
}

export function policyLossRef(
  oldLogprobs: ArrayLike<number>, // (B, A)
  logprobs: ArrayLike<number>, // (B, A)
  advantages: ArrayLike<number>, // (B, A)
  mask: ArrayLike<number>, // (B, A)
  B: number,
  A: number,
  params: PolicyLossParams,
  isWeights: ArrayLike<number> | null = null, // (B, A) or none
): { stats: Float64Array; gradLogprobs: Float64Array } {
  validatePolicyLossParams(params);
  const mode = params.lossMode ?? 'vanilla';
  const n = B * A;
  // GSPO aggregates seq-mean-token-mean whatever params.agg says (as verl does).
  const w = mode === 'gspo' ? aggWeights(mask, B, A, 'seq-mean-token-mean') : aggWeights(mask, B, A, params.agg, params.normScale ?? 'per_seq');
  const seq = mode === 'gspo' ? gspoSeqLogRatios(oldLogprobs, logprobs, mask, B, A) : null;
  const clippedF = new Float64Array(n);
  const lowerF = new Float64Array(n);
  const kl = new Float64Array(n);
  const gradLogprobs = new Float64Array(n);
  let loss = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue; // masked positions may hold anything; they contribute nothing
    const o = oldLogprobs[i];
    const l = logprobs[i];
    const a = advantages[i];
    const t = mode === 'gspo' ? gspoTokenRef(o, l, a, seq![Math.floor(i / A)], params) : mode === 'cispo' ? cispoTokenRef(o, l, a, params) : policyTokenRef(o, l, a, params);
    const is = isWeights ? isWeights[i] : 1;
    loss += w[i] * is * t.loss;
    clippedF[i] = t.clipped ? 1 : 0;
    lowerF[i] = t.lower ? 1 : 0;
    kl[i] = t.kl;
    gradLogprobs[i] = w[i] * is * t.grad;
  }
  const stats = Float64Array.of(loss, maskedMeanRef(clippedF, mask), maskedMeanRef(lowerF, mask), maskedMeanRef(kl, mask));
  return { stats, gradLogprobs };
}

/**
 * Token-level truncated importance sampling (verl rollout correction, token TIS):
 * w = mask · min(exp(clamp(old − rollout, ±20)), cap). (B,A) each → (B,A).
 */
export function tisWeightsRef(old: ArrayLike<number>, rollout: ArrayLike<number>, mask: ArrayLike<number>, cap: number): Float64Array {
  validateTisCap(cap);
  const out = new Float64Array(old.length);
  for (let i = 0; i < out.length; i++) {
    if (mask[i] === 0) continue;
    const d = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, old[i] - rollout[i]));
    out[i] = mask[i] * Math.min(Math.exp(d), cap);
  }
  return out;
}

export function validateTisCap(cap: number): void {
  if (!(Number.isFinite(cap) && cap > 0)) throw new Error(`tisWeights: cap must be a finite number > 0, got ${cap}`);
}
