// Host-side reduction of one iteration's read-back tensors into the snake_case metrics the UI,
// the exports and the headless runner share (names as verl / TRL report them).
import { POLICY_STATS } from '../ops/policyLoss.ts';
import { VALUE_STATS } from '../ops/valueLoss.ts';
import { distinctN } from '../tasks/metrics.ts';
import type { TaskSample } from '../tasks/task.ts';
import { klTokenMean } from './klController.ts';
import { rolloutCorrMetricsRef, type RolloutCorrectionParams } from '../reference/rolloutCorrection.ts';

/** Per-token (B,A) host arrays of the experience, read back at the end of the iteration. */
export interface ExperienceHost {
  B: number;
  A: number;
  mask: Float32Array; // (B, A)
  kl: Float64Array; // (B, A) mask·KL_t
  rewards: Float64Array; // (B, A) shaped token rewards
  advantages: Float64Array; // (B, A)
  returns: Float64Array; // (B, A)
  values: Float64Array; // (B, A)
  refLogprobs: Float64Array; // (B, A)
  scores: Float64Array; // (B)
  /** π_old log-probs of the actor at the experience pass (B, A). */
  oldLogprobs?: Float64Array;
  /** The sampler's log-probs π_rollout (B, A), when the rollout kept them. */
  rolloutLogprobs?: Float64Array | null;
  /** The action mask after rejection sampling (B, A), as the update used it; null without rejection. */
  rsMask?: Float64Array | null;
  /** The rollout correction the iteration applied, null when none. */
  rolloutCorrection?: RolloutCorrectionParams | null;
}

/** The KL coefficients the iteration applied (0 for a switched-off term). */
export interface AppliedKl {
  rewardBeta: number;
  lossCoef: number;
}

/** Per-minibatch statistics of the update, each already read back. */
export interface UpdateHost {
  policy: Float64Array[]; // (4) each
  entropy: Float64Array[]; // (1) each
  klLoss: Float64Array[]; // (1) each, empty without the KL loss
  actorGradNorm: Float64Array[]; // (1) each
  value: Float64Array[]; // (2) each, empty without a critic
  criticGradNorm: Float64Array[]; // (1) each
}

/** Optimiser steps skipped because the gradient norm was not finite (their AdamW left the weights alone). */
export function skippedSteps(norms: Float64Array[]): number {
  return norms.filter((x) => !Number.isFinite(x[0])).length;
}

const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length);

function maskedStats(x: ArrayLike<number>, mask: ArrayLike<number>): { mean: number; std: number; variance: number; n: number } {
  let n = 0;
  let s = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 0) {
      n++;
      s += x[i];
    }
  }
  const m = n > 0 ? s / n : 0;
  let v = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) v += (x[i] - m) ** 2;
  const variance = n > 1 ? v / (n - 1) : 0;
  return { mean: m, std: Math.sqrt(variance), variance, n };
}

/** Per-row sums of a (B,A) array. */
export function rowSums(x: ArrayLike<number>, B: number, A: number): number[] {
  return Array.from({ length: B }, (_, b) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += x[b * A + a];
    return s;
  });
}

/**
 * Rollout-vs-old mismatch ("three policies"): rollout_old_kl = masked token-mean of
 * (log π_rollout − log π_old), the k1 estimate of KL(π_rollout‖π_old) on tokens π_rollout sampled
 * (≥ 0 in expectation); rollout_old_max_abs_diff = max |log π_old − log π_rollout| over action tokens.
 */
export function rolloutOldMetrics(old: ArrayLike<number>, rollout: ArrayLike<number>, mask: ArrayLike<number>): { rollout_old_kl: number; rollout_old_max_abs_diff: number } {
  let n = 0;
  let s = 0;
  let mx = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    const d = rollout[i] - old[i];
    n++;
    s += d;
    mx = Math.max(mx, Math.abs(d));
  }
  return { rollout_old_kl: n > 0 ? s / n : 0, rollout_old_max_abs_diff: mx };
}

/**
 * verl's rollout_corr/ metrics, named with '_' for the '/' (rollout_corr/kl is rollout_corr_kl: the
 * bare names would collide with the page's own kl) for the
 * correction this iteration applied, from the read-back log-probs: the float64 formulas of
 * src/reference/rolloutCorrection.ts, which the kernel matches (tests/gpu/rollout_correction.test.ts).
 * rollout_rs_masked_fraction is read off the trainer's own mask. verl's effective sample size is
 * 1/0 when IcePop zeroes every weight; it is reported as 0 (no effective samples) to stay finite.
 */
export function rolloutCorrMetrics(e: ExperienceHost): Record<string, number> {
  const rc = e.rolloutCorrection;
  if (!rc || !e.oldLogprobs || !e.rolloutLogprobs || !e.mask.some((x) => x !== 0)) return {};
  const all = rolloutCorrMetricsRef(e.oldLogprobs, e.rolloutLogprobs, e.mask, e.B, e.A, rc);
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(all)) out[k.replace('/', '_')] = Number.isFinite(v) ? v : 0;
  if (e.rsMask) {
    let kept = 0;
    let n = 0;
    for (let i = 0; i < e.mask.length; i++) {
      if (e.mask[i] === 0) continue;
      n++;
      kept += e.rsMask[i];
    }
    out.rollout_corr_rollout_rs_masked_fraction = n > 0 ? 1 - kept / n : 0;
  }
  return out;
}

export function experienceMetrics(e: ExperienceHost, samples: TaskSample[], applied: AppliedKl, withText: boolean): Record<string, number> {
  const beta = applied.rewardBeta;
  const { B, A, mask } = e;
  const scores = Array.from(e.scores);
  const klSeq = rowSums(e.kl, B, A);
  const lengths = rowSums(mask, B, A);
  const adv = maskedStats(e.advantages, mask);
  const ret = maskedStats(e.returns, mask);
  const klTok = maskedStats(e.kl, mask);
  // explained variance of the critic's values for the returns over action tokens
  const resid = maskedStats(
    e.returns.map((r, i) => r - e.values[i]),
    mask,
  );
  const explained = ret.variance > 0 ? 1 - resid.variance / ret.variance : 0;
  const m: Record<string, number> = {
    reward_mean: mean(scores),
    reward_min: scores.length ? Math.min(...scores) : 0,
    reward_max: scores.length ? Math.max(...scores) : 0,
    shaped_reward_mean: mean(scores.map((s, b) => s - beta * klSeq[b])),
    token_reward_sum_mean: mean(rowSums(e.rewards, B, A)),
    kl: klTok.mean,
    kl_seq: mean(klSeq),
    kl_token_mean: klTokenMean(e.kl, mask, B, A),
    beta,
    kl_loss_coef: applied.lossCoef,
    advantages_mean: adv.mean,
    advantages_std: adv.std,
    returns_mean: ret.mean,
    values_mean: maskedStats(e.values, mask).mean,
    explained_variance: explained,
    response_length_mean: mean(lengths),
    eos_rate: samples.length ? samples.filter((s) => s.endedWithEos).length / samples.length : 0,
  };
  if (e.oldLogprobs && e.rolloutLogprobs) Object.assign(m, rolloutOldMetrics(e.oldLogprobs, e.rolloutLogprobs, mask), rolloutCorrMetrics(e));
  if (withText) {
    m.fluency = maskedStats(e.refLogprobs, mask).mean;
    const texts = samples.map((s) => s.response);
    m.distinct_1 = distinctN(texts, 1);
    m.distinct_2 = distinctN(texts, 2);
  }
  return m;
}

export function updateMetrics(u: UpdateHost): Record<string, number> {
  const pick = (xs: Float64Array[], i: number) => mean(xs.map((x) => x[i]));
  // A skipped step's norm is not finite by definition; it is counted, not averaged in.
  const finiteNorm = (xs: Float64Array[]) => mean(xs.map((x) => x[0]).filter(Number.isFinite));
  return {
    policy_loss: pick(u.policy, POLICY_STATS.loss),
    clipfrac: pick(u.policy, POLICY_STATS.clipfrac),
    clipfrac_lower: pick(u.policy, POLICY_STATS.clipfracLower),
    approx_kl: pick(u.policy, POLICY_STATS.ppoKl),
    entropy: pick(u.entropy, 0),
    kl_loss: pick(u.klLoss, 0),
    actor_grad_norm: finiteNorm(u.actorGradNorm),
    value_loss: pick(u.value, VALUE_STATS.loss),
    vf_clipfrac: pick(u.value, VALUE_STATS.clipfrac),
    critic_grad_norm: finiteNorm(u.criticGradNorm),
    actor_skipped_steps: skippedSteps(u.actorGradNorm),
    critic_skipped_steps: skippedSteps(u.criticGradNorm),
    update_steps: u.policy.length,
  };
}
