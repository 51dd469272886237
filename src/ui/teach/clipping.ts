// The PPO clipped surrogate as the page draws it (docs/algorithms.md, Numerical conventions): with r the ratio and A the advantage,
// loss L = max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high)); for A < 0 dual clip caps L at −A·c.
// The objective the policy maximises is −L.
import { t } from '../../i18n/index.ts';

export interface ClipParams {
  clipLow: number;
  clipHigh: number;
  dualClip: number | null;
}

export function surrogateObjective(ratio: number, adv: number, p: ClipParams): number {
  const clipped = Math.min(Math.max(ratio, 1 - p.clipLow), 1 + p.clipHigh);
  let loss = Math.max(-adv * ratio, -adv * clipped);
  if (adv < 0 && p.dualClip !== null) loss = Math.min(loss, -adv * p.dualClip);
  return -loss;
}

/** True where the clipped term (or the dual clip) decides the loss, so the token gets no gradient. */
export function isClipped(ratio: number, adv: number, p: ClipParams): boolean {
  if (adv > 0) return ratio > 1 + p.clipHigh;
  if (adv < 0) return ratio < 1 - p.clipLow || (p.dualClip !== null && ratio > p.dualClip);
  return false;
}

export interface HistBin {
  x0: number;
  x1: number;
  kept: number;
  clipped: number;
}

/** Histogram of ratios on [lo, hi) (out-of-range values land in the edge bins), split by clipping. */
export function ratioHistogram(ratios: readonly number[], advs: readonly number[], sign: 1 | -1, p: ClipParams, lo: number, hi: number, bins: number): HistBin[] {
  const out: HistBin[] = Array.from({ length: bins }, (_, i) => ({ x0: lo + ((hi - lo) * i) / bins, x1: lo + ((hi - lo) * (i + 1)) / bins, kept: 0, clipped: 0 }));
  for (let i = 0; i < ratios.length; i++) {
    const a = advs[i];
    const r = ratios[i];
    if (!Number.isFinite(r) || !(sign > 0 ? a > 0 : a < 0)) continue;
    const b = Math.min(bins - 1, Math.max(0, Math.floor(((r - lo) / (hi - lo)) * bins)));
    if (isClipped(r, a, p)) out[b].clipped++;
    else out[b].kept++;
  }
  return out;
}

// ── The modern family beside PPO ──
// GSPO (verl compute_policy_loss_gspo): one ratio per sequence, s = exp(mean_t(logπ_new − logπ_old)),
// and the same clipped objective min(s·A, clip(s, 1−ε_low, 1+ε_high)·A) in s (no dual clip).
// CISPO (verl compute_policy_loss_cispo): J = sg(clip(r, 1−ε_low, 1+ε_high))·A·logπ, so the gradient
// weight on logπ is clip(r)·A at every token — clipping caps a token's weight but never drops it,
// where PPO's weight r·A falls to 0 once the token is clipped.

export function gspoObjective(seqRatio: number, adv: number, p: ClipParams): number {
  return surrogateObjective(seqRatio, adv, { ...p, dualClip: null });
}

/** ∂J/∂logπ of PPO's clipped surrogate at ratio r: r·A inside the trust region, 0 where clipped. */
export function ppoGradWeight(ratio: number, adv: number, p: ClipParams): number {
  return isClipped(ratio, adv, p) ? 0 : ratio * adv;
}

/** ∂J/∂logπ of CISPO at ratio r: the stop-gradient clipped ratio times A, never 0 for A ≠ 0. */
export function cispoGradWeight(ratio: number, adv: number, p: ClipParams): number {
  return Math.min(Math.max(ratio, 1 - p.clipLow), 1 + p.clipHigh) * adv;
}

// ── The batch's own clip settings beside the current ones ──

/** Tokens with an advantage of `sign` that `p` clips: the count a histogram coloured with `p` shows in red. */
export function clippedCount(ratios: readonly number[], advs: readonly number[], sign: 1 | -1, p: ClipParams): number {
  let n = 0;
  for (let i = 0; i < ratios.length; i++) {
    const a = advs[i];
    if (Number.isFinite(ratios[i]) && (sign > 0 ? a > 0 : a < 0) && isClipped(ratios[i], a, p)) n++;
  }
  return n;
}

/** "ε = 0.2", or "ε_low = 0.2, ε_high = 0.28" when they differ; then ", dual clip c = 3" when it is on. */
export function formatClip(p: ClipParams): string {
  const eps = p.clipLow === p.clipHigh ? `ε = ${p.clipLow}` : `ε_low = ${p.clipLow}, ε_high = ${p.clipHigh}`;
  return p.dualClip === null ? eps : t('teach:clipping.withDualClip', { eps, c: p.dualClip });
}

// ── Soft gate and geometric mean beside the hard clip ──
// The curves are drawn in the ratio r (the page's axis); the references in src/reference/policyLoss.ts
// work in log-probs, so the unit test checks these against sapoTokenRef / geoTokenLogRatio /
// geoMeanTokenRef at logp − old = log r.

/** SAPO's temperatures: τ_pos for tokens with A > 0, τ_neg for A ≤ 0 (verl actor.tau_pos / tau_neg). */
export interface SapoTemps {
  tauPos: number;
  tauNeg: number;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** The temperature SAPO gives a token of advantage `adv` (verl: τ_pos where A > 0, else τ_neg). */
export function sapoTau(adv: number, temps: SapoTemps): number {
  return adv > 0 ? temps.tauPos : temps.tauNeg;
}

/**
 * SAPO's gate-weighted objective (verl v0.9.0 core_algos.py compute_policy_loss_sapo, l. 1656–1680):
 * J = f(r)·A with the gate f(r) = σ(τ·(r − 1))·4/τ in place of PPO's clip(r). f'(1) = 1, so at
 * r = 1 the gate pushes exactly as hard as r itself; away from 1 its slope fades smoothly.
 */
export function sapoObjective(ratio: number, adv: number, temps: SapoTemps): number {
  const tau = sapoTau(adv, temps);
  return sigmoid(tau * (ratio - 1)) * (4 / tau) * adv;
}

/**
 * ∂J/∂logπ of SAPO at ratio r: f'(r)·r·A = 4·σ·(1 − σ)·r·A with σ = σ(τ·(r − 1)). Equal to PPO's
 * r·A at r = 1 and never exactly 0: where PPO's weight drops to 0 at the clip, SAPO's factor
 * 4σ(1 − σ) on r·A fades smoothly as r leaves 1 (at τ = 1 the weight itself peaks near r ≈ 2.06).
 */
export function sapoGradWeight(ratio: number, adv: number, temps: SapoTemps): number {
  const x = sapoTau(adv, temps) * (ratio - 1);
  // σ and 1 − σ each from their own exp, so 1 − σ does not cancel to 0 for large x
  return 4 * sigmoid(x) * sigmoid(-x) * ratio * adv;
}

/**
 * GMPO's token term ℓ(r) (verl v0.9.0 core_algos.py compute_policy_loss_geo_mean, l. 1974–1987):
 * the log-ratio clipped in log space on the side its advantage pushes — min(log r, ε_high) for
 * A > 0, max(log r, −ε_low) for A < 0, 0 for A = 0. A row's objective is Ā·exp(mean_t ℓ_t): the
 * geometric mean of its clipped ratios times its mean advantage.
 */
export function gmpoLogRatio(ratio: number, adv: number, p: ClipParams): number {
  if (adv === 0) return 0;
  const d = Math.log(ratio);
  return adv > 0 ? Math.min(d, p.clipHigh) : Math.max(d, -p.clipLow);
}

/**
 * GMPO's objective for a row of one token of advantage A: A·exp(ℓ(r)) — PPO's min(r·A, clip(r)·A)
 * with the bounds e^(−ε_low), e^(ε_high) in place of 1 − ε_low, 1 + ε_high. In a row of n tokens
 * a token moves the row's objective by its ratio to the power 1/n.
 */
export function gmpoObjective(ratio: number, adv: number, p: ClipParams): number {
  return adv * Math.exp(gmpoLogRatio(ratio, adv, p));
}

/** True where GMPO's ℓ(r) is flat (clipped in log space), so the token gives its row no gradient. */
export function gmpoIsClipped(ratio: number, adv: number, p: ClipParams): boolean {
  const d = Math.log(ratio);
  if (adv > 0) return d > p.clipHigh;
  if (adv < 0) return d < -p.clipLow;
  return false;
}
