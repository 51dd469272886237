// float64 reference: outcome-reward advantage estimators (REINFORCE, REINFORCE-baseline, GRPO,
// RLOO, Dr. GRPO, OPO, GRPO pass@k, ReMax), plus the host-side group validation that both backends
// share.
import type { KlEstimator } from './kl.ts';
import { shapeRewardsRef } from './rewards.ts';
import { whitenRef } from './whiten.ts';

/**
 * One row per outcome-reward estimator: everything about it except its score transform (below, in
 * transformScoresRef, and in shaders/group_advantages.wgsl under the same code) and its verl/OpenRLHF
 * names (src/export/engines.ts). The config's choices, validation and both backends derive from it.
 *   code      the `estimator` value the WGSL kernel branches on (as `ADV_<NAME>`, src/reference/kernelCodes.ts)
 *   whitened  advantages are whitened (shift_mean) after the returns scan
 *   needsGroup compares samples of one prompt, so every group needs at least 2 samples
 *   tokenKl   the in-reward KL stays a per-token reward-to-go under both KL orders, because verl's
 *             own estimator scans the token rewards (reinforce: compute_reinforce_plus_plus_outcome_
 *             advantage; remax: compute_remax_outcome_advantage's reverse cumsum, core_algos.py
 *             735–769 at v0.9.0); the others sum the token rewards into one score per response
 *   baseline  takes a per-response reward baseline (remax: the reward of the prompt's greedy
 *             response, verl ray_trainer reward_baselines), subtracted after the returns scan
 */
export const GROUP_ESTIMATOR_SPECS = {
  reinforce: { code: 0, whitened: true, needsGroup: false, tokenKl: true, baseline: false },
  reinforce_baseline: { code: 1, whitened: true, needsGroup: true, tokenKl: false, baseline: false },
  group_norm: { code: 2, whitened: false, needsGroup: true, tokenKl: false, baseline: false },
  rloo: { code: 3, whitened: false, needsGroup: true, tokenKl: false, baseline: false },
  dr_grpo: { code: 4, whitened: false, needsGroup: true, tokenKl: false, baseline: false },
  opo: { code: 5, whitened: false, needsGroup: true, tokenKl: false, baseline: false },
  grpo_passk: { code: 6, whitened: false, needsGroup: true, tokenKl: false, baseline: false },
  remax: { code: 7, whitened: false, needsGroup: false, tokenKl: true, baseline: true },
} as const satisfies Record<string, { code: number; whitened: boolean; needsGroup: boolean; tokenKl: boolean; baseline: boolean }>;

export type GroupEstimator = keyof typeof GROUP_ESTIMATOR_SPECS;
export const GROUP_ESTIMATORS = Object.keys(GROUP_ESTIMATOR_SPECS) as readonly GroupEstimator[];

/**
 * Where the in-reward KL enters the group estimators (all but plain REINFORCE and ReMax, which are
 * token-level in verl, spec row `tokenKl`): 'openrlhf' = group statistics of the raw scores, then −β·KL_t per token as a
 * reward-to-go (OpenRLHF experience_maker.compute_advantages_and_returns); 'verl' = score − β·Σ_t KL_t
 * per response first (verl ray_trainer.apply_kl_penalty, then the estimator sums the token rewards),
 * then the group statistics, one advantage for every token of the response.
 */
export const GROUP_KL_ORDERS = ['openrlhf', 'verl'] as const;
export type GroupKlOrder = (typeof GROUP_KL_ORDERS)[number];

/** True when the estimator sums the KL into the score first under `order` (so β leaves the token rewards). */
export const klSummedIntoScore = (estimator: GroupEstimator, order: GroupKlOrder | undefined, beta: number): boolean =>
  order === 'verl' && !GROUP_ESTIMATOR_SPECS[estimator].tokenKl && beta !== 0;

/** Added to the group std in GRPO's normalisation. */
export const GROUP_STD_EPS = 1e-9;

/**
 * Added to the group std in GRPO pass@k's normalisation: verl's compute_grpo_passk_outcome_advantage
 * default `epsilon` (core_algos.py 472–536 at v0.9.0), which compute_advantage does not override.
 */
export const PASSK_STD_EPS = 1e-6;

/** Estimators that need a reward baseline per response (ReMax's greedy reward). */
export const BASELINE_ESTIMATORS: ReadonlySet<GroupEstimator> = new Set(GROUP_ESTIMATORS.filter((e) => GROUP_ESTIMATOR_SPECS[e].baseline));

/** Estimators whose advantages are whitened (shift_mean) after the returns scan. */
export const WHITENED_GROUP_ESTIMATORS: ReadonlySet<GroupEstimator> = new Set(GROUP_ESTIMATORS.filter((e) => GROUP_ESTIMATOR_SPECS[e].whitened));

/** Estimators that compare samples of one prompt: each group needs at least 2 samples. */
export const GROUPED_ESTIMATORS: ReadonlySet<GroupEstimator> = new Set(GROUP_ESTIMATORS.filter((e) => GROUP_ESTIMATOR_SPECS[e].needsGroup));

export interface CompactGroups {
  /** Compacted group index 0..count−1 per sequence (B), in order of first appearance. */
  index: Int32Array;
  /** Members per compacted group (count). */
  sizes: Int32Array;
  count: number;
}

/**
 * Maps arbitrary integer group ids to 0..G−1 and rejects a group of one sample for every
 * estimator that needs group statistics (all but plain REINFORCE), naming the offending id.
 */
export function compactGroups(group: ArrayLike<number>, B: number, estimator: GroupEstimator): CompactGroups {
  if (group.length !== B) throw new Error(`groupAdvantages: group has ${group.length} ids for ${B} sequences`);
  const byId = new Map<number, number>();
  const index = new Int32Array(B);
  const sizes: number[] = [];
  for (let b = 0; b < B; b++) {
    const id = group[b];
    if (!Number.isInteger(id)) throw new Error(`groupAdvantages: group id ${id} of sequence ${b} is not an integer`);
    let g = byId.get(id);
    if (g === undefined) {
      g = sizes.length;
      byId.set(id, g);
      sizes.push(0);
    }
    sizes[g]++;
    index[b] = g;
  }
  if (GROUPED_ESTIMATORS.has(estimator)) {
    for (const [id, g] of byId) {
      if (sizes[g] < 2) {
        throw new Error(`groupAdvantages (${estimator}): group ${id} has ${sizes[g]} sample; every group needs at least 2`);
      }
    }
  }
  return { index, sizes: Int32Array.from(sizes), count: sizes.length };
}

/**
 * Per-sequence score transform with its group g (n members, mean over g, unbiased std):
 * reinforce s; reinforce_baseline s − mean; group_norm (s − mean)/(std + 1e-9);
 * rloo s − mean of the other members; dr_grpo s − mean;
 * opo s − Σ_j ℓ_j·s_j / Σ_j ℓ_j with ℓ_j the response length Σ_t mask (verl
 * compute_opo_outcome_advantage, core_algos.py 640–690 at v0.9.0: the length-weighted group mean;
 * a group whose responses are all empty gets baseline 0 where verl divides 0 by 0 — its advantages
 * are masked to 0 anyway);
 * grpo_passk: only the group's best member (the first of equal maxima, which matters only when the
 * advantage is 0) gets (s_max − s_second)/(std + 1e-6), every other member 0 (verl
 * compute_grpo_passk_outcome_advantage with norm_adv_by_std_in_grpo true, its default);
 * remax s (its baseline is subtracted after the returns scan, groupAdvantagesRef).
 * scores (B), groups from compactGroups; lengths (B) the response lengths, needed by opo.
 */
export function transformScoresRef(scores: ArrayLike<number>, groups: CompactGroups, estimator: GroupEstimator, lengths?: ArrayLike<number>): Float64Array {
  const B = scores.length;
  if (estimator === 'reinforce' || estimator === 'remax') return Float64Array.from(scores);
  const sum = new Float64Array(groups.count);
  for (let b = 0; b < B; b++) sum[groups.index[b]] += scores[b];
  const mean = Float64Array.from(sum, (s, g) => s / groups.sizes[g]);
  const ssd = new Float64Array(groups.count);
  for (let b = 0; b < B; b++) ssd[groups.index[b]] += (scores[b] - mean[groups.index[b]]) ** 2;
  const out = new Float64Array(B);
  if (estimator === 'opo') {
    if (!lengths) throw new Error('transformScoresRef (opo): needs the response lengths');
    const wsum = new Float64Array(groups.count);
    const lsum = new Float64Array(groups.count);
    for (let b = 0; b < B; b++) {
      wsum[groups.index[b]] += lengths[b] * scores[b];
      lsum[groups.index[b]] += lengths[b];
    }
    for (let b = 0; b < B; b++) {
      const g = groups.index[b];
      out[b] = scores[b] - (lsum[g] > 0 ? wsum[g] / lsum[g] : 0);
    }
    return out;
  }
  if (estimator === 'grpo_passk') {
    // Best and runner-up per group, in batch order: strict > keeps the first of equal maxima.
    const best = new Int32Array(groups.count).fill(-1);
    const second = new Float64Array(groups.count).fill(-Infinity);
    for (let b = 0; b < B; b++) {
      const g = groups.index[b];
      if (best[g] < 0) best[g] = b;
      else if (scores[b] > scores[best[g]]) {
        second[g] = scores[best[g]];
        best[g] = b;
      } else if (scores[b] > second[g]) second[g] = scores[b];
    }
    for (let g = 0; g < groups.count; g++) {
      const n = groups.sizes[g];
      out[best[g]] = (scores[best[g]] - second[g]) / (Math.sqrt(ssd[g] / (n - 1)) + PASSK_STD_EPS);
    }
    return out;
  }
  for (let b = 0; b < B; b++) {
    const g = groups.index[b];
    const n = groups.sizes[g];
    const s = scores[b];
    switch (estimator) {
      case 'reinforce_baseline':
      case 'dr_grpo':
        out[b] = s - mean[g];
        break;
      case 'group_norm':
        out[b] = (s - mean[g]) / (Math.sqrt(ssd[g] / (n - 1)) + GROUP_STD_EPS);
        break;
      case 'rloo':
        out[b] = s - (sum[g] - s) / (n - 1);
        break;
    }
  }
  return out;
}

/** Response length per row, Σ_t mask (B): OPO's weights (verl response_mask.sum(-1)). */
export function responseLengthsRef(mask: ArrayLike<number>, B: number, A: number): Float64Array {
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) for (let t = 0; t < A; t++) out[b] += mask[b * A + t];
  return out;
}

/**
 * verl's sequence score with the KL in the reward: Σ_t of the shaped token rewards, i.e.
 * score − β·Σ_t mask·KL_t (a row without action tokens keeps no score: 0, as shapeRewardsRef).
 */
export function sequenceScoresRef(
  scores: ArrayLike<number>,
  logp: ArrayLike<number>,
  refLogp: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  beta: number,
  klEstimator: KlEstimator,
): Float64Array {
  const { rewards } = shapeRewardsRef(scores, logp, refLogp, mask, B, A, beta, klEstimator);
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) for (let t = 0; t < A; t++) out[b] += rewards[b * A + t];
  return out;
}

/**
 * G_t = r_t + γ·G_{t+1} per row in reverse, G = 0 past the end; masked positions carry G through
 * unchanged (as GAE does). rewards / mask (B,A) → returns (B,A).
 */
export function discountedReturnsRef(rewards: ArrayLike<number>, mask: ArrayLike<number>, B: number, A: number, gamma: number): Float64Array {
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    let g = 0;
    for (let t = A - 1; t >= 0; t--) {
      const i = b * A + t;
      if (mask[i] !== 0) g = rewards[i] + gamma * g;
      out[i] = g;
    }
  }
  return out;
}

export interface GroupAdvantagesInputs {
  estimator: GroupEstimator;
  scores: ArrayLike<number>;
  group: ArrayLike<number>;
  logprobs: ArrayLike<number>;
  refLogprobs: ArrayLike<number>;
  actionMask: ArrayLike<number>;
  B: number;
  A: number;
  beta: number;
  klEstimator: KlEstimator;
  gamma: number;
  /** Where the KL enters (GROUP_KL_ORDERS); default 'openrlhf'. */
  klOrder?: GroupKlOrder;
  /** (B) reward baseline per response; required by remax (the greedy response's reward), unused otherwise. */
  baselines?: ArrayLike<number> | null;
}

/** Rejects a missing or misshapen baseline for an estimator that needs one (remax). */
export function checkBaselines(estimator: GroupEstimator, baselines: { length: number } | null | undefined, B: number): void {
  if (!BASELINE_ESTIMATORS.has(estimator)) return;
  if (!baselines) throw new Error(`groupAdvantages (${estimator}): needs a reward baseline per response (the greedy response's reward)`);
  if (baselines.length !== B) throw new Error(`groupAdvantages (${estimator}): ${baselines.length} baselines for ${B} sequences`);
}

/**
 * Score transform → shaped token rewards → discounted returns → whitening for the REINFORCE pair →
 * advantages set to 0 at every masked position (verl core_algos multiplies each outcome estimator's
 * advantages by response_mask: compute_reinforce_plus_plus_outcome_advantage,
 * compute_reinforce_plus_plus_baseline_outcome_advantage, compute_grpo_outcome_advantage, ...).
 * Returns keep the scan's carried values (masked positions carry G through).
 * ReMax: the returns are the scan of the raw token rewards (verl's `returns`, the reverse cumsum of
 * token_level_rewards·mask) and the advantages are returns − baseline at every action token (verl
 * subtracts reward_baselines·mask; the project also zeroes the masked positions, where verl leaves
 * the carried return of a mid-response mask, which no loss reads).
 */
export function groupAdvantagesRef(a: GroupAdvantagesInputs): { advantages: Float64Array; returns: Float64Array } {
  const groups = compactGroups(a.group, a.B, a.estimator);
  checkBaselines(a.estimator, a.baselines, a.B);
  const summed = klSummedIntoScore(a.estimator, a.klOrder, a.beta);
  const raw = summed ? sequenceScoresRef(a.scores, a.logprobs, a.refLogprobs, a.actionMask, a.B, a.A, a.beta, a.klEstimator) : a.scores;
  const lengths = a.estimator === 'opo' ? responseLengthsRef(a.actionMask, a.B, a.A) : undefined;
  const scores = transformScoresRef(raw, groups, a.estimator, lengths);
  const { rewards } = shapeRewardsRef(scores, a.logprobs, a.refLogprobs, a.actionMask, a.B, a.A, summed ? 0 : a.beta, a.klEstimator);
  const returns = discountedReturnsRef(rewards, a.actionMask, a.B, a.A, a.gamma);
  const advantages = WHITENED_GROUP_ESTIMATORS.has(a.estimator) ? whitenRef(returns, a.actionMask, true) : Float64Array.from(returns);
  if (a.baselines && BASELINE_ESTIMATORS.has(a.estimator)) for (let i = 0; i < advantages.length; i++) advantages[i] -= a.baselines[Math.floor(i / a.A)];
  for (let i = 0; i < advantages.length; i++) if (a.actionMask[i] === 0) advantages[i] = 0;
  return { advantages, returns };
}
