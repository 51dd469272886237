// Per-token outputs the float64 references compute but do not return: which side of the clip a
// token took, its ratio, and the two terms of the clipped value loss. Each is read off the
// reference's own per-token result, so the inspector cannot drift from the loss that trained.
import { GSPO_LOG_RATIO_MAX, gspoSeqLogRatios, LOG_RATIO_CLAMP, policyTokensRef, type PolicyLossParams, type PolicyToken } from '../../reference/policyLoss.ts';
import { valueTokenRef } from '../../reference/valueLoss.ts';

/** Which bound decided a token's policy loss: 1 − ε_low, 1 + ε_high, the dual clip c, or none. */
export type ClipSide = 'low' | 'high' | 'dual' | 'none';

export interface PolicyTokenTerms extends PolicyToken {
  /** The ratio the loss used: π_new/π_old per token (log-ratio clamped ±20), GSPO's sequence ratio. */
  ratio: number;
  side: ClipSide;
}

/**
 * A clipped token had its ratio held at a bound: for vanilla PPO, A > 0 clips only above 1 + ε_high
 * and A < 0 only below 1 − ε_low; CISPO clips either way whatever A; the dual clip is its own flag.
 */
export function clipSide(t: PolicyToken, ratio: number): ClipSide {
  if (t.lower) return 'dual';
  if (!t.clipped) return 'none';
  return ratio > 1 ? 'high' : 'low';
}

/**
 * Per-token policy terms of (n, A) rows under the loss mode, as policyLossRef evaluates them
 * (policyTokensRef) before any IS weight; masked positions get a zero token (policyLossRef skips them).
 */
export function policyTokenTerms(
  oldLogprobs: ArrayLike<number>, // (n, A)
  logprobs: ArrayLike<number>, // (n, A)
  advantages: ArrayLike<number>, // (n, A)
  mask: ArrayLike<number>, // (n, A)
  n: number,
  A: number,
  params: PolicyLossParams,
): PolicyTokenTerms[] {
  const mode = params.lossMode ?? 'vanilla';
  const seq = mode === 'gspo' ? gspoSeqLogRatios(oldLogprobs, logprobs, mask, n, A) : null;
  const { tokens } = policyTokensRef(oldLogprobs, logprobs, advantages, mask, n, A, params);
  const out: PolicyTokenTerms[] = [];
  for (let i = 0; i < n * A; i++) {
    const t = tokens[i];
    if (t === null) {
      out.push({ loss: 0, clipped: false, lower: false, kl: 0, grad: 0, ratio: 1, side: 'none' });
      continue;
    }
    if (seq) {
      const ratio = Math.exp(Math.min(seq[Math.floor(i / A)], GSPO_LOG_RATIO_MAX));
      out.push({ ...t, ratio, side: clipSide(t, ratio) });
    } else if (mode === 'geo_mean') {
      // GMPO clips each token's log-ratio d = −t.kl to [−ε_low, ε_high] (flags split by the sign of A)
      const ratio = Math.exp(-t.kl);
      out.push({ ...t, ratio, side: t.clipped || t.lower ? (ratio > 1 ? 'high' : 'low') : 'none' });
    } else {
      // The exponent the loss used; not read off t.kl, which kl_cov reports as |logp − old|.
      const ratio = Math.exp(Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logprobs[i] - oldLogprobs[i])));
      out.push({ ...t, ratio, side: clipSide(t, ratio) });
    }
  }
  return out;
}

export interface ValueTokenTerms {
  /** ½(V − R)². */
  unclipped: number;
  /** ½(clip(V, V_old ± ε) − R)²; equal to `unclipped` without a value clip. */
  clippedTerm: number;
  /** ½·max of the two, the token's value loss. */
  loss: number;
  /** The clipped term was the larger (the token's gradient goes through the clip). */
  clipped: boolean;
  /** ∂loss/∂V before the aggregation weight. */
  grad: number;
}

/** The value held in the band V_old ± ε, exactly V inside it (as valueTokenRef takes it). */
export function clippedValue(v: number, old: number, clip: number | null): number {
  if (clip === null) return v;
  const dv = v - old;
  return Math.abs(dv) < clip ? v : old + (dv > 0 ? clip : -clip);
}

/** Both terms of the clipped value loss of one token, each by valueTokenRef. */
export function valueTokenTerms(v: number, old: number, ret: number, clip: number | null): ValueTokenTerms {
  const t = valueTokenRef(v, old, ret, clip);
  return {
    unclipped: valueTokenRef(v, old, ret, null).loss,
    clippedTerm: valueTokenRef(clippedValue(v, old, clip), old, ret, null).loss,
    loss: t.loss,
    clipped: t.clipped,
    grad: t.grad,
  };
}
