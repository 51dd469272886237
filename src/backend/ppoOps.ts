// The PPO math ops (issue: foundation). Shapes: B sequences, A action (response) positions, V vocab.
// Every op follows the numerical conventions of DESIGN.md; each has a float64 reference in
// src/reference/ and a WGSL kernel in shaders/.
import type { Tensor } from './tensor.ts';

/**
 * Per-token KL estimators on d = logp − ref (DESIGN.md; verl core_algos.kl_penalty / kl_penalty_forward):
 * k1 = d, abs = |d|, k2 = ½d², k3 = clamp(e^{−d'} + d' − 1, ±10) with d' = clamp(d, ±20);
 * 'k1+' / 'k3+': the value of k1 / k3 with the gradient of k2 (d), verl's straight-through "+" suffix;
 * 'k1_clamped': max(d, 0), AlpacaFarm's one-sided penalty (gradient 1 where d > 0, else 0).
 */
export type KlEstimator = 'k1' | 'abs' | 'k2' | 'k3' | 'k1+' | 'k3+' | 'k1_clamped';
export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'abs', 'k2', 'k3', 'k1+', 'k3+', 'k1_clamped'];

/** Loss aggregation modes (verl core_algos.agg_loss); weights in src/reference/aggregate.ts. */
export type LossAgg = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-sum-norm';
export const LOSS_AGGS: readonly LossAgg[] = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'];

/**
 * Scale of seq-mean-token-sum-norm (ignored by the other modes):
 * 'per_seq' = (1/B)·Σ_b Σ_t m·x / A (the Dr. GRPO paper's per-sequence mean; this project's original form);
 * 'verl'    = Σ_b Σ_t m·x / A (verl agg_loss: sum over sequences, no 1/B), B× the per_seq value.
 */
export type NormScale = 'per_seq' | 'verl';
export const NORM_SCALES: readonly NormScale[] = ['per_seq', 'verl'];

/**
 * Policy-loss family: 'vanilla' PPO clip (verl compute_policy_loss_vanilla), 'gspo' sequence-level
 * ratio (compute_policy_loss_gspo), 'cispo' stop-gradient clipped IS weight × A × logπ
 * (compute_policy_loss_cispo). See src/reference/policyLoss.ts for the exact math.
 */
export type LossMode = 'vanilla' | 'gspo' | 'cispo';
export const LOSS_MODES: readonly LossMode[] = ['vanilla', 'gspo', 'cispo'];

export type GroupEstimator = 'reinforce' | 'reinforce_baseline' | 'group_norm' | 'rloo' | 'dr_grpo';
export const GROUP_ESTIMATORS: readonly GroupEstimator[] = ['reinforce', 'reinforce_baseline', 'group_norm', 'rloo', 'dr_grpo'];

/** Layout of the `stats` tensor returned by policyLoss. */
export const POLICY_STATS = { loss: 0, clipfrac: 1, clipfracLower: 2, ppoKl: 3 } as const;
/** Layout of the `stats` tensor returned by valueLoss. */
export const VALUE_STATS = { loss: 0, clipfrac: 1 } as const;

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

export interface ValueLossParams {
  /** ε_v > 0 clips v around v_old, or null for an unclipped value loss. */
  clip: number | null;
  agg: LossAgg;
  /** Default 'per_seq'; only read with agg = 'seq-mean-token-sum-norm'. */
  normScale?: NormScale;
}

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

  /** Per-token KL estimate on d = logp − ref (see DESIGN.md). (B,A) → (B,A). */
  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor;

  /** ∂kl/∂logp per token for the estimator (0 where a clamp is active). (B,A) → (B,A). */
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor;

  /**
   * kl = mask·KL_t; rewards = −β·kl, plus scores[b] at the last action position of row b
   * (a row with no action token gets no score). scores (B), others (B,A).
   */
  shapeRewards(
    scores: Tensor,
    logprobs: Tensor,
    refLogprobs: Tensor,
    actionMask: Tensor,
    beta: number,
    estimator: KlEstimator,
  ): { rewards: Tensor; kl: Tensor };

  /**
   * GAE reverse scan per row (parallel over B): where mask: δ = r + γ·next − v; last = δ + γλ·last;
   * next = v. Masked positions carry `next` and `last` through. advantages = last at each t
   * (not whitened); returns = advantages + values.
   */
  gae(rewards: Tensor, values: Tensor, actionMask: Tensor, gamma: number, lam: number): { advantages: Tensor; returns: Tensor };

  /**
   * Masked whitening over all action tokens of the batch: mean and Bessel-corrected variance over
   * mask = 1, out = (x − mean)·rsqrt(var + 1e-8) (+ mean when shiftMean is false), at every position.
   */
  whiten(x: Tensor, actionMask: Tensor, shiftMean: boolean): Tensor;

  /**
   * Outcome-reward estimators: score transform by group, then token rewards with KL
   * (as shapeRewards), then discounted cumulative returns (masked positions carry through) as
   * advantages; whitened (shift_mean) for reinforce and reinforce_baseline; advantages are 0 at
   * every masked position (verl multiplies by the response mask). `group` lives on the
   * host so that a group of one sample is rejected before any GPU work.
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
  }): { advantages: Tensor; returns: Tensor };

  /**
   * Policy loss of params.lossMode (vanilla clip with asymmetric and dual clip, GSPO, CISPO);
   * stats (4) as POLICY_STATS; gradLogprobs (B,A) = ∂loss/∂logprobs. isWeights (B,A), when given,
   * are stop-gradient per-token weights multiplied into the per-token loss before aggregation
   * (verl rollout_is_weights, e.g. tisWeights); they do not enter the clip fractions or ppo_kl.
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
   * Token-level truncated importance sampling weights (verl rollout correction, token TIS):
   * mask · min(exp(clamp(old − rollout, ±20)), cap). (B,A) each → (B,A); cap > 0.
   */
  tisWeights(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, cap: number): Tensor;

  /** ½·max((v−R)², (clip(v, v_old ± ε)−R)²); stats (2) as VALUE_STATS; gradValues (B,A). */
  valueLoss(values: Tensor, oldValues: Tensor, returns: Tensor, actionMask: Tensor, params: ValueLossParams): { stats: Tensor; gradValues: Tensor };

  /**
   * Aggregates per-token values x (B,A) under the mask with `agg`; returns the scalar (1) and
   * the weights ∂value/∂x (B,A) used to back-propagate KL-loss and entropy terms.
   */
  aggregate(x: Tensor, actionMask: Tensor, agg: LossAgg, normScale?: NormScale): { value: Tensor; weights: Tensor };
}
