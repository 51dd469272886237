// The PPO math ops. Shapes: B sequences, A action (response) positions, V vocab.
// Every op follows the numerical conventions of docs/algorithms.md; each has a float64 reference in
// src/reference/ and a WGSL kernel in shaders/.
import type { Tensor } from './tensor.ts';
// The math's own vocabulary (estimator names, aggregation modes, loss parameters) is defined beside
// its float64 reference, the lowest layer; the op interface re-exports it for its callers.
import type { LossAgg, NormScale } from '../reference/aggregate.ts';
import type { GroupEstimator, GroupKlOrder } from '../reference/groupAdvantages.ts';
import type { KlEstimator } from '../reference/kl.ts';
import type { PolicyLossParams } from '../reference/policyLoss.ts';
import type { ValueLossParams } from '../reference/valueLoss.ts';
import type { RolloutCorrectionParams } from '../reference/rolloutCorrection.ts';
import type { ActorLossParams } from '../reference/actorLoss.ts';
export type { ActorLossParams } from '../reference/actorLoss.ts';
export { LOSS_AGGS, NORM_SCALES, type LossAgg, type NormScale } from '../reference/aggregate.ts';
export { GROUP_ESTIMATORS, type GroupEstimator } from '../reference/groupAdvantages.ts';
export { KL_ESTIMATORS, type KlEstimator } from '../reference/kl.ts';
export { COV_LOSS_MODES, LOSS_MODES, type LossMode, type PolicyLossParams } from '../reference/policyLoss.ts';
export type { ValueLossParams } from '../reference/valueLoss.ts';

/** Layout of the `stats` tensor returned by policyLoss. */
export const POLICY_STATS = { loss: 0, clipfrac: 1, clipfracLower: 2, ppoKl: 3 } as const;
/** Layout of the `stats` tensor returned by valueLoss. */
export const VALUE_STATS = { loss: 0, clipfrac: 1 } as const;

export interface PpoOps {
  /**
   * z = logits / T; logprobs[b,a] = z[b,a,tokens[b,a]] − logsumexp(z[b,a,:]);
   * entropy[b,a] = logsumexp(z) − Σ_v softmax(z)_v · z_v.
   * logits (B,A,V) f32, tokens (B,A) i32 → logprobs (B,A), entropy (B,A).
   */
  logprobs(logits: Tensor, tokens: Tensor, temperature: number): { logprobs: Tensor; entropy: Tensor };

  /**
   * Gradient wrt logits: (1/T)·[gLogp·(onehot − p) − gEnt·p·(z − Σ p z)].
   * gradLogprobs (B,A), gradEntropy (B,A) or null → (B,A,V).
   */
  logprobsBackward(logits: Tensor, tokens: Tensor, temperature: number, gradLogprobs: Tensor, gradEntropy: Tensor | null): Tensor;

  /** Per-token KL estimate on d = logp − ref (docs/algorithms.md, Numerical conventions). (B,A) → (B,A). */
  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor;

  /** ∂kl/∂logp per token for the estimator (0 where a clamp is active). (B,A) → (B,A). */
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor;

  /**
   * kl = mask·KL_t; rewards = −β·kl, plus scores[b] at the last action position of row b
   * (a row with no action token gets no score). scores (B), others (B,A).
   */
  shapeRewards(scores: Tensor, logprobs: Tensor, refLogprobs: Tensor, actionMask: Tensor, beta: number, estimator: KlEstimator): { rewards: Tensor; kl: Tensor };

  /**
   * Masked whitening over all action tokens of the batch: mean and Bessel-corrected variance over
   * mask = 1, out = (x − mean)·rsqrt(var + 1e-8) (+ mean when shiftMean is false), at every position.
   */
  whiten(x: Tensor, actionMask: Tensor, shiftMean: boolean): Tensor;

  /**
   * Outcome-reward estimators: score transform by group, then token rewards with KL
   * (as shapeRewards; with klOrder 'verl' the KL is summed into the score before the transform
   * instead, and the token rewards carry none), then discounted cumulative returns (masked positions carry through) as
   * advantages; whitened (shift_mean) for reinforce and reinforce_baseline; remax subtracts its
   * baseline from the returns; advantages are 0 at every masked position (verl multiplies by the
   * response mask). `group` lives on the host so that a group of one sample is rejected before any
   * GPU work.
   */
  groupAdvantages(args: {
    estimator: GroupEstimator;
    scores: Tensor;
    group: ArrayLike<number>;
    logprobs: Tensor;
    refLogprobs: Tensor;
    actionMask: Tensor;
    beta: number;
    klEstimator: KlEstimator;
    gamma: number;
    /** 'verl': score − β·ΣKL per response before the group statistics (GROUP_KL_ORDERS); default 'openrlhf'. */
    klOrder?: GroupKlOrder;
    /** (B) reward baseline per response: required by remax (its prompt's greedy reward), ignored otherwise. */
    baselines?: Tensor | null;
  }): { advantages: Tensor; returns: Tensor };

  /**
   * Policy loss of params.lossMode (vanilla clip with asymmetric and dual clip, GSPO, CISPO, SAPO,
   * GPG, GMPO, Clip-Cov, KL-Cov — the last two choose their tokens over this whole (B, A)); stats (4) as POLICY_STATS; gradLogprobs (B,A) = ∂loss/∂logprobs. isWeights (B,A),
   * when given, are stop-gradient per-token weights multiplied into the per-token loss before
   * aggregation (verl rollout_is_weights, e.g. tisWeights; GMPO multiplies each row's loss by their
   * geometric mean over the row, as verl); they do not enter the clip fractions or ppo_kl.
   */
  policyLoss(
    oldLogprobs: Tensor,
    logprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: PolicyLossParams,
    isWeights?: Tensor | null,
  ): { stats: Tensor; gradLogprobs: Tensor };

  /**
   * The tokens clip_cov / kl_cov act on (1, else 0; (B,A) each → (B,A)), chosen batch-wide by the
   * covariance of (A − Ā) and (logp − mean logp) over the valid tokens: kl_cov's top-k, clip_cov's
   * seeded pick from its band. All 0 for the other modes. policyLoss makes the same choice itself;
   * this op is for showing it. Reference: src/reference/policyLoss.ts covSelectRef.
   */
  covSelect(oldLogprobs: Tensor, logprobs: Tensor, advantages: Tensor, actionMask: Tensor, params: PolicyLossParams): Tensor;

  /**
   * Token-level truncated importance sampling weights (verl rollout correction, token TIS):
   * mask · min(exp(clamp(old − rollout, ±20)), cap). (B,A) each → (B,A); cap > 0.
   */
  tisWeights(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, cap: number): Tensor;

  /**
   * verl rollout correction (token or sequence IS with a TIS cap, OpenRLHF's TIS lower bound or the
   * IcePop band; rejection sampling by token / sequence k1, k2, k3): (B,A) each → weights (B,A)
   * (null when params.isLevel is null) and keep (B,A), the action mask with rejected tokens zeroed.
   */
  rolloutCorrection(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, params: RolloutCorrectionParams): { weights: Tensor | null; keep: Tensor };

  /** ½·max((v−R)², (clip(v, v_old ± ε)−R)²); stats (2) as VALUE_STATS; gradValues (B,A). */
  valueLoss(values: Tensor, oldValues: Tensor, returns: Tensor, actionMask: Tensor, params: ValueLossParams): { stats: Tensor; gradValues: Tensor };

  /**
   * Aggregates per-token values x (B,A) under the mask with `agg`; returns the scalar (1) and
   * the weights ∂value/∂x (B,A) used to back-propagate KL-loss and entropy terms.
   */
  aggregate(x: Tensor, actionMask: Tensor, agg: LossAgg, normScale?: NormScale): { value: Tensor; weights: Tensor };

  /**
   * The actor's loss on its logits in one op (one pass over the logits on WebGPU): log-probs of
   * the action tokens at `temperature` (logits rows start … start + A − 1 of each sequence score
   * them), the policy loss (as policyLoss), the entropy bonus −entropyCoef·agg(H) and, with
   * params.kl, the KL loss coef·agg(KL(logp‖ref)) (agg = the loss aggregation), and the gradient of
   * their sum wrt the logits. logits (B,S,V), tokens (B,A) i32, the rest (B,A); refLogprobs is
   * required with params.kl. Returns gradLogits (B,S,V) (0 outside the action rows), logprobs
   * (B,A), policy (4) as POLICY_STATS, entropy (1) and klLoss (1) (0 without a KL loss).
   * Reference: src/reference/actorLoss.ts (the per-op composition it replaces).
   */
  actorLoss(
    logits: Tensor,
    start: number,
    tokens: Tensor,
    temperature: number,
    oldLogprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: ActorLossParams,
    isWeights: Tensor | null,
    refLogprobs: Tensor | null,
  ): { gradLogits: Tensor; logprobs: Tensor; policy: Tensor; entropy: Tensor; klLoss: Tensor };
}
