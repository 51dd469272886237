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
