// The ratios π_new/π_old the clipping view plots, for the last minibatch of an iteration.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { tisWeights } from '../ops/tisWeights.ts';
import { GSPO_LOG_RATIO_MAX, LOG_RATIO_CLAMP } from '../reference/policyLoss.ts';

/**
 * exp(clamp(logπ_new − logπ_old, ±LOG_RATIO_CLAMP)) per token on the device, 0 where the mask is:
 * the truncated importance weight of the two log-probs, with a cap the clamped ratio never exceeds.
 */
export function tokenRatios(be: Backend, newLogprobs: Tensor, oldLogprobs: Tensor, actionMask: Tensor): Tensor {
  return tisWeights(be, { oldLogprobs: newLogprobs, rolloutLogprobs: oldLogprobs, actionMask, cap: Math.exp(LOG_RATIO_CLAMP) }); // (n, A)
}

/** The masked tokens' ratios, each with its advantage. */
export function maskedRatios(ratio: ArrayLike<number>, adv: ArrayLike<number>, mask: ArrayLike<number>) {
  const ratios: number[] = [];
  const advantages: number[] = [];
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 0) {
      ratios.push(ratio[i]);
      advantages.push(adv[i]);
    }
  }
  return { ratios, advantages };
}

/**
 * GSPO's sequence ratios of the rows of a minibatch: exp(mean over action tokens of
 * logπ_new − logπ_old) (log-ratio clamped above at GSPO_LOG_RATIO_MAX as verl's
 * compute_policy_loss_gspo), with the row's token-mean advantage. Rows without action tokens are
 * left out.
 */
export function sequenceRatios(logp: ArrayLike<number>, old: ArrayLike<number>, adv: ArrayLike<number>, mask: ArrayLike<number>, A: number) {
  const ratios: number[] = [];
  const advantages: number[] = [];
  for (let b = 0; b * A < mask.length; b++) {
    let n = 0;
    let d = 0;
    let a = 0;
    for (let t = 0; t < A; t++) {
      const k = b * A + t;
      if (mask[k] === 0) continue;
      n++;
      d += logp[k] - old[k];
      a += adv[k];
    }
    if (n === 0) continue;
    ratios.push(Math.exp(Math.min(GSPO_LOG_RATIO_MAX, d / n)));
    advantages.push(a / n);
  }
  return { ratios, advantages };
}
