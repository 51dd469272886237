// The advantage stage both PPO loops share — the playground's trainer (experience.ts) and the
// own-model trainer (hf/hfPpo.ts): with a critic, GAE over the shaped rewards and the critic's
// values, the advantages whitened (mean shifted) and the returns taken before whitening
// (docs/algorithms.md, Numerical conventions); without one, the group estimators' advantages and
// returns from the scores (GRPO, RLOO, REINFORCE++, …: src/ops/groupAdvantages.ts).
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { gae } from '../ops/gae.ts';
import { groupAdvantages } from '../ops/groupAdvantages.ts';
import { whiten } from '../ops/whiten.ts';
import type { GroupEstimator, GroupKlOrder } from '../reference/groupAdvantages.ts';
import type { KlEstimator } from '../reference/kl.ts';

export interface AdvantageInputs {
  estimator: 'gae' | GroupEstimator;
  rewards: Tensor; // (B, A) shaped rewards, −β·KL_t + score at the last action token (GAE reads them)
  values: Tensor | null; // (B, A) the critic's values; required by gae
  actionMask: Tensor; // (B, A) the sampled tokens (the group estimators' KL penalty sums over them)
  /** (B, A) the tokens GAE and whitening count (rejection sampling's kept tokens); default actionMask. */
  trainMask?: Tensor;
  scores: Tensor; // (B) one score per response
  group: ArrayLike<number>; // (B) host group id per response
  logprobs: Tensor; // (B, A) old log-probs
  refLogprobs: Tensor; // (B, A)
  beta: number; // the KL coefficient the rewards carry
  klEstimator: KlEstimator;
  gamma: number;
  lam: number;
  klOrder?: GroupKlOrder;
  baselines?: Tensor | null; // (B) ReMax's greedy rewards
}

/** Advantages (B, A) and returns (B, A) of the estimator; the caller owns both. */
export function estimatorAdvantages(be: Backend, x: AdvantageInputs): { advantages: Tensor; returns: Tensor } {
  if (x.estimator === 'gae') {
    if (!x.values) throw new Error('the gae estimator needs the critic values');
    const mask = x.trainMask ?? x.actionMask;
    const g = gae(be, { rewards: x.rewards, values: x.values, actionMask: mask, gamma: x.gamma, lam: x.lam });
    const advantages = whiten(be, { x: g.advantages, actionMask: mask, shiftMean: true });
    be.dispose(g.advantages);
    return { advantages, returns: g.returns };
  }
  return groupAdvantages(be, {
    estimator: x.estimator,
    scores: x.scores,
    group: x.group,
    logprobs: x.logprobs,
    refLogprobs: x.refLogprobs,
    actionMask: x.actionMask,
    beta: x.beta,
    klEstimator: x.klEstimator,
    gamma: x.gamma,
    klOrder: x.klOrder,
    baselines: x.baselines,
  });
}
