// Every derived per-token quantity of an iteration trace, recomputed in float64 by the project's
// references (src/reference/), under the trace's own knobs or under changed ones ("what if").
import { aggregateRef, aggWeights, maskedMeanRef } from '../../reference/aggregate.ts';
import { gaeRef } from '../../reference/gae.ts';
import {
  checkBaselines,
  compactGroups,
  discountedReturnsRef,
  klSummedIntoScore,
  responseLengthsRef,
  sequenceScoresRef,
  transformScoresRef,
  type GroupEstimator,
} from '../../reference/groupAdvantages.ts';
import { klGradRef, klRef } from '../../reference/kl.ts';
import { rolloutCorrectionRef, rsCriterion } from '../../reference/rolloutCorrection.ts';
import { rolloutCorrectionOf } from '../config.ts';
import { covSelectRef, covStepSeed, geoRowsRef, policyAgg, policyLossRef, type PolicyLossParams } from '../../reference/policyLoss.ts';
import { shapeRewardsRef } from '../../reference/rewards.ts';
import { valueLossRef } from '../../reference/valueLoss.ts';
import { maskedMeanVar, whitenRef, WHITEN_EPS } from '../../reference/whiten.ts';
import { klTokenMean } from '../klController.ts';
import { policyTokenTerms, valueTokenTerms, type ClipSide, type ValueTokenTerms } from './tokenTerms.ts';
import { actorPolicyParams } from '../policyParams.ts';
import { appliedKl, minibatchStatsOf, type InspectKnobs, type IterationTrace, type MinibatchStats } from './trace.ts';

/** Mean and spread of the advantages whitening used: x̂ = (x − mean)·scale, scale = 1/√(variance + 1e-8). */
export interface WhiteningStats {
  n: number;
  mean: number;
  variance: number;
  scale: number;
}

/** A group estimator's view of the batch: what replaces V_t and δ_t. */
export interface GroupStats {
  index: Int32Array; // (B) compacted group of each response
  size: Int32Array; // (G) members per group
  mean: Float64Array; // (G) mean score of the group
  std: Float64Array; // (G) unbiased std of the group's scores (0 for one member)
  transformedScores: Float64Array; // (B) the estimator's score (s − mean, (s − mean)/(std + ε), …)
}

/** One minibatch step of the update, recomputed with the step's own new log-probs and values. */
export interface MinibatchRecomputed {
  epoch: number;
  index: number;
  rows: Int32Array; // (n)
  ratio: Float64Array; // (n, A) the ratio the loss used (1 on masked positions)
  clipSide: ClipSide[]; // (n·A) 'none' on masked positions
  tokenLoss: Float64Array; // (n, A) the token's policy loss before weights
  /** (n, A) 1 where clip_cov / kl_cov acted (covSelectRef with the step's seed), null for other modes. */
  covPicked: Uint8Array | null;
  aggWeight: Float64Array; // (n, A) its weight in the aggregated policy loss (0 when masked)
  tisWeight: Float64Array | null; // (n, A) TIS weight multiplying it, null when off
  /** ∂(policy loss + KL loss)/∂logπ_new: the weight the token's log-prob gradient gets (entropy bonus aside). */
  gradWeight: Float64Array; // (n, A)
  klLossTerm: Float64Array | null; // (n, A) KL(π_new‖π_ref) per token with the loss estimator, null without the KL loss
  value: ValueTokenTerms[] | null; // (n·A) null without a critic
  stats: MinibatchStats;
}

/** Batch numbers the charts show, each the mean over the update's steps where it is per step. */
export interface TraceSummary {
  clipFraction: number;
  clipFractionLower: number;
  approxKl: number;
  /** Token-mean of β·KL_t, the penalty the rewards carry. */
  klPenaltyMean: number;
  /** Token-mean of KL_t (metric `kl`). */
  klMean: number;
  /** verl's scale: mean over responses of each response's token-mean KL (metric `kl_token_mean`). */
  klTokenMean: number;
  policyLoss: number;
  klLoss: number;
  valueLoss: number | null;
  vfClipFraction: number | null;
}

/**
 * Derived quantities of a trace. What the "what if" can move: everything computed from the
 * log-probs and values, never the log-probs and values themselves.
 */
export interface RecomputedTrace {
  knobs: InspectKnobs;
  B: number;
  A: number;
  actionMask: Float64Array; // (B, A) the trace's
  rewardBeta: number;
  klLossCoef: number;
  kl: Float64Array; // (B, A) mask·KL_t with knobs.klEstimator
  klReward: Float64Array; // (B, A) −β·KL_t, the KL part of r_t
  rewards: Float64Array; // (B, A) r_t: −β·KL_t + the raw score at the last action token
  /** The rewards the reverse scan ran on: r_t for GAE, the transformed score's for a group estimator. */
  scanRewards: Float64Array; // (B, A)
  /** −β·KL_t is in scanRewards token by token (false where verl's order sums it into the score first). */
  klInScan: boolean;
  delta: Float64Array | null; // (B, A) GAE's δ_t (0 on masked positions); null for a group estimator
  advantagesRaw: Float64Array; // (B, A) GAE or the returns scan, before whitening
  advantages: Float64Array; // (B, A) what the update used
  returns: Float64Array; // (B, A)
  whitening: WhiteningStats | null;
  group: GroupStats | null;
  tisWeights: Float64Array | null; // (B, A)
  rsMask: Float64Array | null; // (B, A) the mask after rejection sampling, null without it
  minibatches: MinibatchRecomputed[];
  summary: TraceSummary;
}

/** Rows of a (B, width) array, in the given order: (n, width). */
export function gatherRows(src: ArrayLike<number>, width: number, rows: ArrayLike<number>): Float64Array {
  const out = new Float64Array(rows.length * width);
  for (let i = 0; i < rows.length; i++) for (let a = 0; a < width; a++) out[i * width + a] = src[rows[i] * width + a];
  return out;
}

const meanOf = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length);

function groupAdvantageStage(t: IterationTrace, k: InspectKnobs, rewardBeta: number) {
  const { B, A, actionMask: mask } = t;
  const est = k.advantageEstimator as GroupEstimator;
  // The composition of groupAdvantagesRef, unrolled so the group statistics and the unwhitened
  // returns are visible and whitening can be switched.
  const groups = compactGroups(t.group, B, est);
  // verl's order sums −β·KL into each score before the group statistics (groupKlOrder 'verl').
  const summed = klSummedIntoScore(est, k.groupKlOrder, rewardBeta);
  const scores = summed ? sequenceScoresRef(t.scores, t.oldLogprobs, t.refLogprobs, mask, B, A, rewardBeta, k.klEstimator) : t.scores;
  const lengths = est === 'opo' ? responseLengthsRef(mask, B, A) : undefined;
  const transformedScores = transformScoresRef(scores, groups, est, lengths);
  const scanRewards = shapeRewardsRef(transformedScores, t.oldLogprobs, t.refLogprobs, mask, B, A, summed ? 0 : rewardBeta, k.klEstimator).rewards;
  const returns = discountedReturnsRef(scanRewards, mask, B, A, k.gamma);
  // ReMax: the advantages before whitening are the returns less the greedy baseline (verl's returns keep it).
  let raw = returns;
  if (est === 'remax') {
    checkBaselines(est, t.baselines, B);
    raw = Float64Array.from(returns, (g, i) => (mask[i] === 0 ? 0 : g - t.baselines![Math.floor(i / A)]));
  }
  const advantages = k.whiten ? whitenRef(raw, mask, true) : Float64Array.from(raw);
  for (let i = 0; i < advantages.length; i++) if (mask[i] === 0) advantages[i] = 0;
  const mean = new Float64Array(groups.count);
  const std = new Float64Array(groups.count);
  for (let g = 0; g < groups.count; g++) {
    const s = maskedMeanVar(
      scores,
      Float64Array.from(groups.index, (x) => (x === g ? 1 : 0)),
    );
    mean[g] = s.mean;
    std[g] = Math.sqrt(s.variance);
  }
  const group: GroupStats = { index: groups.index, size: groups.sizes, mean, std, transformedScores };
  return { scanRewards, klInScan: !summed, advantagesRaw: raw, advantages, returns, group, delta: null };
}

function gaeStage(t: IterationTrace, k: InspectKnobs, rewards: Float64Array) {
  const { B, A, actionMask: mask, values } = t;
  const g = gaeRef(rewards, values, mask, B, A, k.gamma, k.lam);
  // With λ = 0 the scan's running advantage at an action token is its δ_t alone.
  const delta = gaeRef(rewards, values, mask, B, A, k.gamma, 0).advantages.map((d, i) => (mask[i] === 0 ? 0 : d));
  const advantages = k.whiten ? whitenRef(g.advantages, mask, true) : Float64Array.from(g.advantages);
  return { scanRewards: rewards, klInScan: true, advantagesRaw: g.advantages, advantages, returns: g.returns, group: null, delta };
}

/** GMPO's per-response IS weight (the geometric mean of its tokens' weights), on each of its tokens. */
function geoRowIsWeights(
  old: ArrayLike<number>,
  logp: ArrayLike<number>,
  adv: ArrayLike<number>,
  mask: ArrayLike<number>,
  n: number,
  A: number,
  params: PolicyLossParams,
  tisW: ArrayLike<number>,
): Float64Array {
  const rows = geoRowsRef(old, logp, adv, mask, n, A, params, tisW).isW;
  return Float64Array.from({ length: n * A }, (_, i) => (mask[i] === 0 ? tisW[i] : rows[Math.floor(i / A)]));
}

function minibatchStage(t: IterationTrace, k: InspectKnobs, klLossCoef: number, advantages: Float64Array, returns: Float64Array, tis: Float64Array | null) {
  const { A } = t;
  const critic = k.advantageEstimator === 'gae';
  return t.minibatches.map((mb0): MinibatchRecomputed => {
    // clip_cov's choice is seeded per step, as the trainer seeded it (covStepSeed)
    const params = actorPolicyParams(k, covStepSeed(k.seed ?? 0, t.iter, mb0.epoch, mb0.index));
    const mb = mb0;
    const n = mb.rows.length;
    const rows = (x: ArrayLike<number>) => gatherRows(x, A, mb.rows);
    const mask = rows(t.actionMask);
    const old = rows(t.oldLogprobs);
    const adv = rows(advantages);
    const tisW = tis ? rows(tis) : null;
    const pol = policyLossRef(old, mb.newLogprobs, adv, mask, n, A, params, tisW);
    const terms = policyTokenTerms(old, mb.newLogprobs, adv, mask, n, A, params);
    // GMPO weights each response by the geometric mean of its tokens' TIS weights (verl geo_mean):
    // shown per token, so that Σ w·is·L is the loss for every mode.
    const tisShown = tisW && k.lossMode === 'geo_mean' ? geoRowIsWeights(old, mb.newLogprobs, adv, mask, n, A, params, tisW) : tisW;
    // GSPO and SAPO aggregate seq-mean-token-mean, GMPO over all rows, whatever the knob says, as policyLossRef does.
    const aggWeight = aggWeights(mask, n, A, policyAgg(params), k.normScale);
    const gradWeight = Float64Array.from(pol.gradLogprobs);
    let klLoss = 0;
    let klLossTerm: Float64Array | null = null;
    if (k.useKlLoss) {
      const ref = rows(t.refLogprobs);
      klLossTerm = klRef(mb.newLogprobs, ref, k.klLossEstimator);
      const agg = aggregateRef(klLossTerm, mask, n, A, k.lossAgg, k.normScale);
      klLoss = agg.value;
      const dKl = klGradRef(mb.newLogprobs, ref, k.klLossEstimator);
      // the same expression actorLossRef adds to the policy gradient
      for (let i = 0; i < n * A; i++) gradWeight[i] += 1 * (agg.weights[i] * (dKl[i] * klLossCoef));
    }
    let value: ValueTokenTerms[] | null = null;
    let valueStats: Float64Array | null = null;
    if (critic && mb.newValues) {
      const oldV = rows(t.values);
      const ret = rows(returns);
      valueStats = valueLossRef(mb.newValues, oldV, ret, mask, n, A, { clip: k.valueClip, agg: k.lossAgg, normScale: k.normScale }).stats;
      value = Array.from({ length: n * A }, (_, i) =>
        mask[i] === 0 ? { unclipped: 0, clippedTerm: 0, loss: 0, clipped: false, grad: 0 } : valueTokenTerms(mb.newValues![i], oldV[i], ret[i], k.valueClip),
      );
    }
    return {
      epoch: mb.epoch,
      index: mb.index,
      rows: mb.rows,
      ratio: Float64Array.from(terms, (x) => x.ratio),
      clipSide: terms.map((x) => x.side),
      tokenLoss: Float64Array.from(terms, (x) => x.loss),
      covPicked: k.lossMode === 'clip_cov' || k.lossMode === 'kl_cov' ? covSelectRef(old, mb.newLogprobs, adv, mask, n, A, params) : null,
      aggWeight,
      tisWeight: tisShown,
      gradWeight,
      klLossTerm,
      value,
      stats: minibatchStatsOf(pol.stats, valueStats, klLoss),
    };
  });
}

/** The rejection-sampled mask the knobs ask for (null without rejection sampling). */
function rejectionMask(trace: IterationTrace, knobs: InspectKnobs): Float64Array | null {
  const rs = knobs.rolloutRs ?? 'off';
  if (rs === 'off' || !trace.rolloutLogprobs) return null;
  const params = { isLevel: null, isUpper: 1, isLower: null, tisLower: null, rs: [rsCriterion(rs, knobs.rolloutRsThreshold ?? 2)] };
  return rolloutCorrectionRef(trace.oldLogprobs, trace.rolloutLogprobs, trace.actionMask, trace.B, trace.A, params).keep;
}

/**
 * Recomputes a trace under `knobs` (default: its own, which reproduces its stored quantities).
 * A "what if" holds the sampled batch and the models fixed: the responses, scores, π_rollout,
 * π_old, π_ref, V_t and each step's π_new and new values are what the iteration produced, so no
 * knob can change them. β and the KL estimator change KL_t and r_t; γ, λ, the estimator and
 * whitening change the advantages and returns; ε_low, ε_high, c, the value clip and the
 * aggregation change the losses, clip sides and gradient weights; the step's π_new stays the one
 * the trainer's weights gave, although those weights followed the iteration's own knobs. The
 * entropy bonus needs the logits, which a trace does not keep: gradient weights leave it out.
 */
export function recomputeTrace(trace: IterationTrace, knobs: InspectKnobs = trace.knobs): RecomputedTrace {
  const { B, A, actionMask: mask } = trace;
  const { rewardBeta, lossCoef } = appliedKl(knobs);
  const shaped = shapeRewardsRef(trace.scores, trace.oldLogprobs, trace.refLogprobs, mask, B, A, rewardBeta, knobs.klEstimator);
  const klReward = shapeRewardsRef(new Float64Array(B), trace.oldLogprobs, trace.refLogprobs, mask, B, A, rewardBeta, knobs.klEstimator).rewards;
  // Rejection sampling's mask is known before the advantages: GAE and its whitening run on it (as the
  // trainer's do), the group estimators on the whole response.
  const rsKeep = rejectionMask(trace, knobs);
  const adv =
    knobs.advantageEstimator === 'gae' ? gaeStage(rsKeep ? { ...trace, actionMask: rsKeep } : trace, knobs, shaped.rewards) : groupAdvantageStage(trace, knobs, rewardBeta);
  let whitening: WhiteningStats | null = null;
  if (knobs.whiten) {
    const s = maskedMeanVar(adv.advantagesRaw, knobs.advantageEstimator === 'gae' && rsKeep ? rsKeep : mask);
    whitening = { n: s.n, mean: s.mean, variance: s.variance, scale: 1 / Math.sqrt(s.variance + WHITEN_EPS) };
  }
  const rc = rolloutCorrectionOf({
    tisCap: knobs.tisCap,
    rolloutIs: knobs.rolloutIs ?? 'token',
    icepopLower: knobs.icepopLower ?? null,
    tisLower: knobs.tisLower ?? null,
    rolloutRs: knobs.rolloutRs ?? 'off',
    rolloutRsThreshold: knobs.rolloutRsThreshold ?? 2,
  });
  if (rc !== null && !trace.rolloutLogprobs) throw new Error('recomputeTrace: rollout correction (tisCap / rolloutRs) is set but the trace has no rollout log-probs');
  // Rollout correction as the trainer applies it (experience.ts): IS weights for the losses, and the
  // rejected tokens dropped from the update's mask.
  const corrected = rc && trace.rolloutLogprobs ? rolloutCorrectionRef(trace.oldLogprobs, trace.rolloutLogprobs, mask, B, A, rc) : null;
  const tisWeights = corrected?.weights ?? null;
  const trainTrace = rsKeep ? { ...trace, actionMask: rsKeep } : trace;
  const minibatches = minibatchStage(trainTrace, knobs, lossCoef, adv.advantages, adv.returns, tisWeights);
  const stats = minibatches.map((m) => m.stats);
  const values = stats.flatMap((s) => (s.valueLoss === null ? [] : [s]));
  const summary: TraceSummary = {
    clipFraction: meanOf(stats.map((s) => s.clipFraction)),
    clipFractionLower: meanOf(stats.map((s) => s.clipFractionLower)),
    approxKl: meanOf(stats.map((s) => s.approxKl)),
    klPenaltyMean: 0 - maskedMeanRef(klReward, mask), // 0 −, not unary −: β = 0 gives 0, not −0
    klMean: maskedMeanRef(shaped.kl, mask),
    klTokenMean: klTokenMean(shaped.kl, mask, B, A),
    policyLoss: meanOf(stats.map((s) => s.policyLoss)),
    klLoss: meanOf(stats.map((s) => s.klLoss)),
    valueLoss: values.length ? meanOf(values.map((s) => s.valueLoss!)) : null,
    vfClipFraction: values.length ? meanOf(values.map((s) => s.vfClipFraction!)) : null,
  };
  return {
    knobs,
    B,
    A,
    actionMask: mask,
    rewardBeta,
    klLossCoef: lossCoef,
    kl: shaped.kl,
    klReward,
    rewards: shaped.rewards,
    scanRewards: adv.scanRewards,
    klInScan: adv.klInScan,
    delta: adv.delta,
    advantagesRaw: adv.advantagesRaw,
    advantages: adv.advantages,
    returns: adv.returns,
    whitening,
    group: adv.group,
    tisWeights,
    rsMask: rsKeep,
    minibatches,
    summary,
  };
}

/** Largest |recomputed − stored| of each quantity the trace stored: how closely the device agrees. */
export function storedMismatch(trace: IterationTrace, rec: RecomputedTrace): Record<string, number> {
  const worst = (a: ArrayLike<number>, b: ArrayLike<number>) => {
    let m = 0;
    for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
    return m;
  };
  const out: Record<string, number> = {
    kl: worst(rec.kl, trace.stored.kl),
    rewards: worst(rec.rewards, trace.stored.rewards),
    advantages: worst(rec.advantages, trace.stored.advantages),
    returns: worst(rec.returns, trace.stored.returns),
  };
  if (rec.tisWeights && trace.stored.tisWeights) out.tisWeights = worst(rec.tisWeights, trace.stored.tisWeights);
  if (rec.rsMask && trace.stored.rsMask) out.rsMask = worst(rec.rsMask, trace.stored.rsMask);
  const keys = ['policyLoss', 'clipFraction', 'clipFractionLower', 'approxKl', 'klLoss', 'valueLoss', 'vfClipFraction'] as const;
  for (const key of keys) {
    let m = 0;
    trace.minibatches.forEach((mb, j) => {
      const s = mb.stored?.[key];
      const r = rec.minibatches[j].stats[key];
      if (s !== undefined && s !== null && r !== null) m = Math.max(m, Math.abs(s - r));
    });
    out[key] = m;
  }
  return out;
}
