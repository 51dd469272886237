// The iteration trace: one PPO iteration's batch as host arrays, captured by the trainer on an
// inspected iteration, from which the inspector derives everything else (recompute.ts).
// Where each field comes from in the trainer: the experience's per-token arrays and each
// minibatch step's statistics are read back on every iteration already; an inspected iteration
// also reads each step's new log-probs (ActorStepStats.logprobs; otherwise only the last step's
// are read), the critic's new values of each step (criticStep computes them but does not return
// them), the TIS weights, and takes the response tokens, groups and π_rollout from the host
// RolloutBatch.
import { POLICY_STATS } from '../../ops/policyLoss.ts';
import { VALUE_STATS } from '../../ops/valueLoss.ts';
import { covKnobs } from '../../reference/policyLoss.ts';
import { GROUP_ESTIMATOR_SPECS } from '../../reference/groupAdvantages.ts';
import type { PpoConfig } from '../config.ts';

/**
 * The knobs one iteration's experience and update used, under PpoConfig's names. `klCoef` and
 * `klLossCoef` are the coefficients the iteration held (the adaptive controller's β, not the
 * config's starting value); each applies only when its switch (`klInReward`, `useKlLoss`) is on.
 * `whiten` is the inspector's own: the trainer always whitens GAE advantages, and the group
 * estimators whiten as GROUP_ESTIMATOR_SPECS says.
 */
export type InspectKnobs = Pick<
  PpoConfig,
  | 'klCoef'
  | 'klEstimator'
  | 'klInReward'
  | 'useKlLoss'
  | 'klLossCoef'
  | 'klLossEstimator'
  | 'advantageEstimator'
  | 'gamma'
  | 'lam'
  | 'clipLow'
  | 'clipHigh'
  | 'dualClip'
  | 'valueClip'
  | 'lossMode'
  | 'lossAgg'
  | 'normScale'
  | 'tisCap'
> & {
  whiten: boolean;
  /** Where the in-reward KL enters a group estimator; absent in traces stored before the knob (= 'openrlhf'). */
  groupKlOrder?: PpoConfig['groupKlOrder'];
  /** Rollout correction beyond token TIS; absent in traces stored before these knobs (= token TIS, no rejection). */
  rolloutIs?: PpoConfig['rolloutIs'];
  icepopLower?: PpoConfig['icepopLower'];
  tisLower?: PpoConfig['tisLower'];
  rolloutRs?: PpoConfig['rolloutRs'];
  rolloutRsThreshold?: PpoConfig['rolloutRsThreshold'];
} & Partial<Pick<PpoConfig, 'sapoTauPos' | 'sapoTauNeg' | 'clipCovRatio' | 'clipCovLb' | 'clipCovUb' | 'klCovRatio' | 'ppoKlCoef' | 'seed'>>;

/** The knobs the trainer ran an iteration with, `beta` the KL controller's β at that iteration. */
export function knobsFromConfig(cfg: PpoConfig, beta: number): InspectKnobs {
  // β drives the KL-loss coefficient when the KL is only in the loss (klController.ts controlsKlLoss).
  const betaDrivesLoss = cfg.klController === 'adaptive' && !cfg.klInReward && cfg.useKlLoss;
  return {
    klCoef: betaDrivesLoss ? cfg.klCoef : beta,
    klEstimator: cfg.klEstimator,
    klInReward: cfg.klInReward,
    useKlLoss: cfg.useKlLoss,
    klLossCoef: betaDrivesLoss ? beta : cfg.klLossCoef,
    klLossEstimator: cfg.klLossEstimator,
    advantageEstimator: cfg.advantageEstimator,
    gamma: cfg.gamma,
    lam: cfg.lam,
    clipLow: cfg.clipLow,
    clipHigh: cfg.clipHigh,
    dualClip: cfg.dualClip,
    valueClip: cfg.valueClip,
    lossMode: cfg.lossMode,
    lossAgg: cfg.lossAgg,
    normScale: cfg.normScale,
    tisCap: cfg.tisCap,
    groupKlOrder: cfg.groupKlOrder,
    ...covKnobs(cfg),
    // the run's seed: clip_cov's choice is seeded per step from it (covStepSeed)
    seed: cfg.seed,
    rolloutIs: cfg.rolloutIs,
    icepopLower: cfg.icepopLower,
    tisLower: cfg.tisLower,
    rolloutRs: cfg.rolloutRs,
    rolloutRsThreshold: cfg.rolloutRsThreshold,
    whiten: cfg.advantageEstimator === 'gae' ? true : GROUP_ESTIMATOR_SPECS[cfg.advantageEstimator].whitened,
  };
}

/** The β the rewards get and the KL-loss coefficient: 0 for a switched-off term (as klCoefsApplied). */
export function appliedKl(k: InspectKnobs): { rewardBeta: number; lossCoef: number } {
  return { rewardBeta: k.klInReward ? k.klCoef : 0, lossCoef: k.useKlLoss ? k.klLossCoef : 0 };
}

/** One minibatch step's statistics (policy loss and clip fractions, KL loss, value loss). */
export interface MinibatchStats {
  policyLoss: number;
  clipFraction: number;
  /** Fraction of action tokens where the dual clip bound. */
  clipFractionLower: number;
  /** Masked mean of old − new log-prob (verl's ppo_kl). */
  approxKl: number;
  /** agg(KL(π_new‖π_ref)) with the loss estimator; 0 without the KL loss. */
  klLoss: number;
  /** null without a critic. */
  valueLoss: number | null;
  vfClipFraction: number | null;
}

/** Statistics from the device's packed vectors: policy (4) as POLICY_STATS, value (2) as VALUE_STATS. */
export function minibatchStatsOf(policy: ArrayLike<number>, value: ArrayLike<number> | null, klLoss: number | null): MinibatchStats {
  return {
    policyLoss: policy[POLICY_STATS.loss],
    clipFraction: policy[POLICY_STATS.clipfrac],
    clipFractionLower: policy[POLICY_STATS.clipfracLower],
    approxKl: policy[POLICY_STATS.ppoKl],
    klLoss: klLoss ?? 0,
    valueLoss: value ? value[VALUE_STATS.loss] : null,
    vfClipFraction: value ? value[VALUE_STATS.clipfrac] : null,
  };
}

/** One actor (and critic) step of the update, over rows of the batch. */
export interface MinibatchTrace {
  epoch: number;
  /** Minibatch index within its epoch. */
  index: number;
  rows: Int32Array; // (n) batch rows, in the minibatch's order
  newLogprobs: Float64Array; // (n, A) π_new at this step's forward, before its AdamW step
  newValues: Float64Array | null; // (n, A) critic values at this step's forward; null without a critic
  /** What the device reported for this step, when read back. */
  stored: MinibatchStats | null;
}

/** The device's results of the experience stage, kept to check the recomputation against. */
export interface StoredExperience {
  kl: Float64Array; // (B, A) mask·KL_t with the reward's estimator
  rewards: Float64Array; // (B, A) −β·KL_t + score at the last action token
  advantages: Float64Array; // (B, A) after whitening where the estimator whitens
  returns: Float64Array; // (B, A)
  tisWeights: Float64Array | null; // (B, A) rollout-correction IS weights, null when off
  /** (B, A) the action mask after rejection sampling, as the trainer used it; null/absent without rejection. */
  rsMask?: Float64Array | null;
}

/** One PPO iteration as the inspector sees it. */
export interface IterationTrace {
  iter: number;
  B: number;
  A: number;
  knobs: InspectKnobs;
  responseTokens: Int32Array; // (B, A) sampled token ids (padding after EOS)
  actionMask: Float64Array; // (B, A) 1 on action tokens, the first EOS included
  group: Int32Array; // (B) prompt group of each response
  scores: Float64Array; // (B) task score as the reward got it (clipped, penalties added)
  /** (B) ReMax's baselines (each prompt's greedy reward); absent for the other estimators and in older traces. */
  baselines?: Float64Array | null;
  rolloutLogprobs: Float64Array | null; // (B, A) π_rollout, the sampler's; null when not kept
  oldLogprobs: Float64Array; // (B, A) π_old, the actor at the experience pass
  refLogprobs: Float64Array; // (B, A) π_ref, the frozen SFT policy
  values: Float64Array; // (B, A) critic V_t; zeros for the group estimators
  stored: StoredExperience;
  /** Every step of the update, in the order the trainer took them. */
  minibatches: MinibatchTrace[];
}

/** Throws, naming the array, when a trace's shapes disagree with its B and A. */
export function checkTraceShapes(t: IterationTrace): void {
  const { B, A } = t;
  const want = (name: string, a: ArrayLike<number> | null, n: number) => {
    if (a && a.length !== n) throw new Error(`iteration trace: ${name} has ${a.length} values, expected ${n}`);
  };
  want('responseTokens', t.responseTokens, B * A);
  want('actionMask', t.actionMask, B * A);
  want('group', t.group, B);
  want('scores', t.scores, B);
  want('baselines', t.baselines ?? null, B);
  want('rolloutLogprobs', t.rolloutLogprobs, B * A);
  want('oldLogprobs', t.oldLogprobs, B * A);
  want('refLogprobs', t.refLogprobs, B * A);
  want('values', t.values, B * A);
  for (const k of ['kl', 'rewards', 'advantages', 'returns', 'tisWeights', 'rsMask'] as const) want(`stored.${k}`, t.stored[k] ?? null, B * A);
  for (const mb of t.minibatches) {
    const n = mb.rows.length;
    for (const r of mb.rows) if (!(r >= 0 && r < B)) throw new Error(`iteration trace: minibatch ${mb.epoch}/${mb.index} has row ${r} outside [0, ${B})`);
    want(`minibatch ${mb.epoch}/${mb.index} newLogprobs`, mb.newLogprobs, n * A);
    want(`minibatch ${mb.epoch}/${mb.index} newValues`, mb.newValues, n * A);
  }
}
