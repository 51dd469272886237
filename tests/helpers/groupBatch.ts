// A batch of group-estimator inputs as the unit tests build it, and the float64 reference on it.
import { groupAdvantagesRef, type GroupAdvantagesInputs } from '../../src/reference/groupAdvantages.ts';

/** (B) scores and group ids, (B, A) log-probs, reference log-probs and action mask. */
export interface GroupBatch {
  B: number;
  A: number;
  scores: ArrayLike<number>;
  group: ArrayLike<number>;
  logp: ArrayLike<number>;
  ref: ArrayLike<number>;
  mask: ArrayLike<number>;
}

/** groupAdvantagesRef on a batch; the KL and discount settings (and ReMax's baselines) as given. */
export function groupRefOn(
  x: GroupBatch,
  estimator: GroupAdvantagesInputs['estimator'],
  settings: Pick<GroupAdvantagesInputs, 'beta' | 'klEstimator' | 'gamma' | 'klOrder' | 'baselines'>,
): { advantages: Float64Array; returns: Float64Array } {
  return groupAdvantagesRef({ estimator, scores: x.scores, group: x.group, logprobs: x.logp, refLogprobs: x.ref, actionMask: x.mask, B: x.B, A: x.A, ...settings });
}
