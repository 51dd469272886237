// Both engines' KL order for the group estimators (config groupKlOrder), in float64 against each
// engine's own code path: verl (tests/helpers/verl.ts: apply_kl_penalty, then the estimator, which
// sums the token rewards into the score) and OpenRLHF (tests/helpers/openrlhf.ts: the group baseline
// of the raw scores, then −β·KL per token as a reward-to-go). Also REINFORCE with γ < 1, which
// both engines discount. Tolerance 1e-9: the whitened estimators sum in another order than verl_F.masked_whiten.
import { describe, expect, it } from 'vitest';
import { GROUP_ESTIMATORS, type GroupEstimator } from '../../src/reference/groupAdvantages.ts';
import { GROUP_ESTIMATOR_SPECS, groupAdvantagesRef, type GroupKlOrder } from '../../src/reference/groupAdvantages.ts';
import { klValue } from '../../src/reference/kl.ts';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import { groupRefOn } from '../helpers/groupBatch.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';
import * as openrlhf from '../helpers/openrlhf.ts';
import * as verl from '../helpers/verl.ts';

interface Batch {
  B: number;
  A: number;
  n: number;
  scores: Float64Array;
  logp: Float64Array;
  ref: Float64Array;
  mask: Float64Array;
  group: number[];
}

/** n samples per prompt in consecutive rows (OpenRLHF's layout), right-padded, one length-1 row. */
function batch(salt: number, B = 12, A = 7, n = 4): Batch {
  const r = rng(salt);
  const mask = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = b === 3 ? 1 : r.int(2, A);
    for (let a = 0; a < len; a++) mask[b * A + a] = 1;
  }
  const logp = randn(r, B * A, 1).map((v) => -Math.abs(v));
  const ref = Float64Array.from(logp, (l) => l + r.normal() * 0.4);
  return { B, A, n, scores: randn(r, B, 1.5), logp, ref, mask, group: Array.from({ length: B }, (_, b) => 100 + Math.floor(b / n)) };
}

const project = (est: GroupEstimator, x: Batch, beta: number, klOrder: GroupKlOrder, gamma = 1, klEstimator: 'k1' | 'k3' = 'k1') =>
  groupRefOn(x, est, { beta, klEstimator, gamma, klOrder });

const OPENRLHF_GROUP_ESTIMATORS = GROUP_ESTIMATORS.filter((e): e is openrlhf.OpenRlhfEstimator => ['reinforce', 'rloo', 'reinforce_baseline', 'group_norm', 'dr_grpo'].includes(e));

const VERL_KL_NAME = { k1: 'kl', k3: 'low_var_kl' } as const;
const underMask = (xs: ArrayLike<number>, m: ArrayLike<number>) => Float64Array.from(xs, (v, i) => (m[i] ? v : 0));

describe("group KL order 'verl' = verl's apply_kl_penalty, then its estimator", () => {
  for (const klEstimator of ['k1', 'k3'] as const) {
    it.each(GROUP_ESTIMATORS.filter((e) => !GROUP_ESTIMATOR_SPECS[e].tokenKl))(`%s (${klEstimator}, β = 0.3)`, (est) => {
      const x = batch(7 + GROUP_ESTIMATORS.indexOf(est));
      const beta = 0.3;
      const tokenRewards = verl.applyKlPenalty(x.scores, x.logp, x.ref, x.mask, x.B, x.A, beta, VERL_KL_NAME[klEstimator]);
      // The project's GRPO std epsilon (1e-9) instead of verl's 1e-6, so only the order is compared.
      const want = {
        reinforce_baseline: () => verl.reinforcePlusPlusBaselineAdvantage(tokenRewards, x.mask, x.group, x.B, x.A),
        group_norm: () => verl.grpoAdvantage(tokenRewards, x.mask, x.group, x.B, x.A, true, 1e-9),
        dr_grpo: () => verl.grpoAdvantage(tokenRewards, x.mask, x.group, x.B, x.A, false),
        rloo: () => verl.rlooAdvantage(tokenRewards, x.mask, x.group, x.B, x.A),
        opo: () => verl.opoAdvantage(tokenRewards, x.mask, x.group, x.B, x.A),
        grpo_passk: () => verl.grpoPasskAdvantage(tokenRewards, x.mask, x.group, x.B, x.A),
      }[est as Exclude<GroupEstimator, 'reinforce' | 'remax'>]();
      expectClose(project(est, x, beta, 'verl', 1, klEstimator).advantages, want, 1e-9, 1e-9, `${est} verl order`);
      // The other order gives other advantages (the KL is not a constant shift within a group).
      const other = project(est, x, beta, 'openrlhf', 1, klEstimator).advantages;
      expect(Math.max(...other.map((v, i) => Math.abs(v - want[i])))).toBeGreaterThan(1e-3);
    });
  }

  it('REINFORCE is token-level in verl whatever the order (compute_reinforce_plus_plus_outcome_advantage)', () => {
    const x = batch(3);
    const tokenRewards = verl.applyKlPenalty(x.scores, x.logp, x.ref, x.mask, x.B, x.A, 0.2, 'kl');
    const want = verl.reinforcePlusPlusAdvantage(tokenRewards, x.mask, x.B, x.A, 1).advantages;
    for (const order of ['verl', 'openrlhf'] as const) expectClose(project('reinforce', x, 0.2, order).advantages, want, 1e-9, 1e-9, order);
  });

  it('ReMax is token-level in verl whatever the order (compute_remax_outcome_advantage: reverse cumsum − baseline)', () => {
    const x = batch(4);
    const baselines = randn(rng(44), x.B, 1);
    const tokenRewards = verl.applyKlPenalty(x.scores, x.logp, x.ref, x.mask, x.B, x.A, 0.2, 'low_var_kl');
    const want = verl.remaxAdvantage(tokenRewards, baselines, x.mask, x.B, x.A);
    for (const order of ['verl', 'openrlhf'] as const) {
      const got = groupAdvantagesRef({
        estimator: 'remax',
        scores: x.scores,
        group: x.group,
        logprobs: x.logp,
        refLogprobs: x.ref,
        actionMask: x.mask,
        B: x.B,
        A: x.A,
        beta: 0.2,
        klEstimator: 'k3',
        gamma: 1,
        klOrder: order,
        baselines,
      });
      expectClose(got.advantages, underMask(want.advantages, x.mask), 1e-9, 1e-9, `${order} advantages`);
      expectClose(underMask(got.returns, x.mask), underMask(want.returns, x.mask), 1e-9, 1e-9, `${order} returns`);
    }
  });
});

describe("group KL order 'openrlhf' = OpenRLHF's compute_advantages_and_returns", () => {
  for (const klEstimator of ['k1', 'k3'] as const) {
    // OpenRLHF has no OPO, GRPO pass@k or ReMax (its experience_maker names the others only).
    it.each(OPENRLHF_GROUP_ESTIMATORS)(`%s (${klEstimator}, β = 0.3)`, (est) => {
      const x = batch(21 + GROUP_ESTIMATORS.indexOf(est));
      const beta = 0.3;
      const kl = Float64Array.from(x.logp, (l, i) => (x.mask[i] ? klValue(l, x.ref[i], klEstimator) : 0));
      const want = openrlhf.advantagesAndReturns(est, x.scores, kl, x.mask, x.B, x.A, x.n, beta, 1);
      const got = project(est, x, beta, 'openrlhf', 1, klEstimator);
      expectClose(underMask(got.returns, x.mask), underMask(want.returns, x.mask), 1e-9, 1e-9, `${est} returns`);
      // Not whitened: advantages are the returns. The REINFORCE pair is whitened with verl's
      // Bessel-corrected variance here and OpenRLHF's biased one there, so only the returns are compared.
      if (est !== 'reinforce' && est !== 'reinforce_baseline') expectClose(got.advantages, underMask(want.advantages, x.mask), 1e-9, 1e-9, `${est} advantages`);
    });
  }
});

describe("docs/algorithms.md's example: four equal RLOO scores, β = 1", () => {
  const x = batch(5, 4, 6, 4);
  x.scores.fill(1);
  // Every sampled token a little likelier under the actor than under the reference (k1 ≥ 0.05), as
  // after a few updates: the penalty then has one sign, so "uncentred" cannot hold by luck alone.
  const drift = rng(55);
  x.ref = Float64Array.from(x.logp, (l) => l - 0.05 - Math.abs(drift.normal()) * 0.4);
  const rowMeans = (adv: Float64Array) => Array.from({ length: x.B }, (_, b) => adv[b * x.A]);
  it('OpenRLHF order: the group baseline cancels the equal scores, the KL reward-to-go stays, uncentred', () => {
    const advantages = project('rloo', x, 1, 'openrlhf').advantages;
    const rewardToGo = new Float64Array(x.B * x.A);
    for (let b = 0; b < x.B; b++) {
      let tail = 0;
      for (let a = x.A - 1; a >= 0; a--) {
        if (x.mask[b * x.A + a]) tail += x.logp[b * x.A + a] - x.ref[b * x.A + a];
        rewardToGo[b * x.A + a] = x.mask[b * x.A + a] ? -tail : 0;
      }
    }
    expectClose(underMask(advantages, x.mask), rewardToGo, 1e-12, 1e-12, 'advantages = −β·Σ_{t′≥t} KL');
    // Each row's first advantage is −(its whole KL) ≤ −0.05, so the group's sum is at most −0.2.
    expect(rowMeans(advantages).reduce((s, v) => s + v, 0)).toBeLessThan(-0.2);
  });
  it('verl order: score − β·ΣKL enters RLOO, so the group is centred (leave-one-out sums to 0)', () => {
    const first = rowMeans(project('rloo', x, 1, 'verl').advantages);
    expect(Math.abs(first.reduce((s, v) => s + v, 0))).toBeLessThan(1e-12);
  });
});

describe('REINFORCE with γ < 1, as both engines discount it', () => {
  const cfg = (over: Partial<PpoConfig>) => validateConfig({ ...DEFAULT_CONFIG, ...over } as PpoConfig & Record<string, unknown>);
  it('the config accepts γ < 1 for reinforce and still refuses it for the group estimators', () => {
    expect(cfg({ advantageEstimator: 'reinforce', gamma: 0.9 })).toEqual([]);
    for (const e of GROUP_ESTIMATORS.filter((g) => g !== 'reinforce')) expect(cfg({ advantageEstimator: e, gamma: 0.9 }).map((p) => p.field)).toEqual(['gamma']);
  });
  it.each([0.9, 0.5])("γ = %s: verl's advantages and OpenRLHF's returns", (gamma) => {
    const x = batch(11);
    const beta = 0.2;
    const got = project('reinforce', x, beta, 'openrlhf', gamma);
    const tokenRewards = verl.applyKlPenalty(x.scores, x.logp, x.ref, x.mask, x.B, x.A, beta, 'kl');
    expectClose(got.advantages, verl.reinforcePlusPlusAdvantage(tokenRewards, x.mask, x.B, x.A, gamma).advantages, 1e-9, 1e-9, 'verl advantages');
    const kl = Float64Array.from(x.logp, (l, i) => (x.mask[i] ? l - x.ref[i] : 0));
    const want = openrlhf.advantagesAndReturns('reinforce', x.scores, kl, x.mask, x.B, x.A, x.n, beta, gamma);
    expectClose(underMask(got.returns, x.mask), underMask(want.returns, x.mask), 1e-9, 1e-9, 'OpenRLHF returns');
  });
});
