// groupAdvantages: group score transforms (REINFORCE, REINFORCE-baseline, GRPO, RLOO, Dr. GRPO,
// OPO, GRPO pass@k, ReMax with its reward baselines),
// KL-shaped token rewards, discounted returns, whitening for the REINFORCE pair; on both backends
// against the float64 reference (src/reference/groupAdvantages.ts) and hand-computed values.
// Tolerance: group statistics and whitening are reductions, so rtol 1e-4 with atol 1e-5 (TOL.reduce).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { GROUP_ESTIMATORS, type GroupEstimator } from '../../src/reference/groupAdvantages.ts';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { GROUPED_ESTIMATORS, groupAdvantagesRef, type GroupKlOrder } from '../../src/reference/groupAdvantages.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL } from '../helpers/random.ts';
import * as verl from '../helpers/verl.ts';
import { groupAdvantages } from '../../src/ops/groupAdvantages.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));
const { rtol, atol } = TOL.reduce;

interface Case {
  scores: ArrayLike<number>;
  group: number[];
  logp: ArrayLike<number>;
  ref: ArrayLike<number>;
  mask: ArrayLike<number>;
  B: number;
  A: number;
  beta: number;
  gamma: number;
  klEstimator: (typeof KL_ESTIMATORS)[number];
  klOrder?: GroupKlOrder;
  /** (B) ReMax's reward baselines; absent: baselinesOf(c). */
  baselines?: ArrayLike<number>;
}

/** A full-mask case without KL (β = 0, γ = 1): returns are the transformed score on every token. */
function noKlCase(B: number, A: number, scores: number[], group: number[], extra: Partial<Case> = {}): Case {
  const zeros = new Float64Array(B * A);
  return { B, A, scores, group, logp: zeros, ref: zeros, mask: new Float64Array(B * A).fill(1), beta: 0, gamma: 1, klEstimator: 'k1', ...extra };
}

/** A fixed float32 baseline per response for ReMax where a case gives none (every other estimator ignores it). */
const baselinesOf = (c: Case) => c.baselines ?? f32(Array.from({ length: c.B }, (_, b) => 0.3 * (b % 3) - 0.2));

/** The case's inputs as backend tensors, in groupAdvantages' argument shape. */
function argsOf(be: Backend, estimator: GroupEstimator, c: Case) {
  return {
    estimator,
    scores: be.tensor(c.scores, [c.B]),
    group: c.group,
    logprobs: be.tensor(c.logp, [c.B, c.A]),
    refLogprobs: be.tensor(c.ref, [c.B, c.A]),
    actionMask: be.tensor(c.mask, [c.B, c.A]),
    beta: c.beta,
    klEstimator: c.klEstimator,
    gamma: c.gamma,
    klOrder: c.klOrder,
    baselines: estimator === 'remax' ? be.tensor(baselinesOf(c), [c.B]) : null,
  };
}

function run(be: Backend, estimator: GroupEstimator, c: Case) {
  return groupAdvantages(be, argsOf(be, estimator, c));
}

function reference(estimator: GroupEstimator, c: Case) {
  return groupAdvantagesRef({
    estimator,
    scores: c.scores,
    group: c.group,
    logprobs: c.logp,
    refLogprobs: c.ref,
    actionMask: c.mask,
    B: c.B,
    A: c.A,
    beta: c.beta,
    klEstimator: c.klEstimator,
    gamma: c.gamma,
    klOrder: c.klOrder,
    baselines: estimator === 'remax' ? baselinesOf(c) : null,
  });
}

/** Non-contiguous, unordered group ids with `per` members each. */
function shuffledGroups(r: ReturnType<typeof rng>, B: number, per: number): number[] {
  const ids = [42, -3, 7, 1000, 5, -17, 64, 9];
  return r.shuffle(Array.from({ length: B }, (_, b) => ids[Math.floor(b / per) % ids.length]));
}

describe.each(BACKENDS)('groupAdvantages on %s', (_name, makeBackend) => {
  const sizes: [number, number, number][] = [
    [4, 5, 2],
    [12, 23, 4],
  ];
  for (const [B, A, per] of sizes) {
    for (const gamma of [1, 0.9]) {
      it.each(GROUP_ESTIMATORS)(`%s matches the reference at B=${B}, A=${A}, groups of ${per}, γ=${gamma}`, async (est) => {
        const be = await makeBackend();
        const r = rng(B * 100 + A + gamma * 10 + GROUP_ESTIMATORS.indexOf(est));
        const c: Case = {
          B,
          A,
          scores: f32(randn(r, B, 2)),
          group: shuffledGroups(r, B, per),
          logp: f32(randn(r, B * A, 1.5).map((x) => -Math.abs(x))),
          ref: f32(randn(r, B * A, 1.5).map((x) => -Math.abs(x))),
          mask: rightPaddedMask(r, B, A, 1),
          beta: Math.fround(r.uniform(0.01, 0.2)),
          gamma,
          klEstimator: KL_ESTIMATORS[r.int(0, KL_ESTIMATORS.length)],
        };
        if (B > 4) {
          const m = c.mask as Float64Array;
          for (let t = 0; t < A; t++) m[3 * A + t] = 0; // an empty row
          for (let t = 0; t < A; t++) m[A + t] = t % 3 === 0 ? 1 : 0; // holes inside a row
        }
        const want = reference(est, c);
        const out = run(be, est, c);
        expect(out.advantages.shape).toEqual([B, A]);
        const [adv, ret] = await be.readMany([out.advantages, out.returns]);
        expectClose(ret, want.returns, rtol, atol, `${est} returns`);
        expectClose(adv, want.advantages, rtol, atol, `${est} advantages`);
      });
    }
  }

  it.each(GROUP_ESTIMATORS)('%s: hand-computed score transforms (β = 0, γ = 1, full mask: returns = transformed score)', async (est) => {
    const be = await makeBackend();
    // groups: id 9 = {1, 3} (size 2), id −4 = {2, 4, 9}; non-contiguous ids, interleaved members
    const group = [9, -4, 9, -4, -4];
    const scores = [1, 2, 3, 4, 9];
    const B = 5,
      A = 3;
    const c = noKlCase(B, A, scores, group);
    const expected: Record<GroupEstimator, number[]> = {
      reinforce: scores,
      reinforce_baseline: [-1, -3, 1, -1, 4],
      dr_grpo: [-1, -3, 1, -1, 4],
      // group 9: mean 2, std √2; group −4: mean 5, std √13
      group_norm: [-1 / Math.SQRT2, -3 / Math.sqrt(13), 1 / Math.SQRT2, -1 / Math.sqrt(13), 4 / Math.sqrt(13)],
      // s − mean of the others
      rloo: [1 - 3, 2 - 6.5, 3 - 1, 4 - 5.5, 9 - 3],
      // equal lengths: the length-weighted mean is the mean
      opo: [-1, -3, 1, -1, 4],
      // only each group's best: (3 − 1)/(√2 + 1e-6) and (9 − 4)/(√13 + 1e-6)
      grpo_passk: [0, 0, 2 / (Math.SQRT2 + 1e-6), 0, 5 / (Math.sqrt(13) + 1e-6)],
      // returns are the raw scores; the advantages subtract the baselines (below)
      remax: scores,
    };
    const out = run(be, est, c);
    const [adv, ret] = await be.readMany([out.advantages, out.returns]);
    const perToken = (v: ArrayLike<number>) => Array.from(v).flatMap((s) => [s, s, s]);
    expectClose(ret, perToken(expected[est]), rtol, atol, `${est} returns`);
    if (est === 'remax') {
      const base = baselinesOf(c);
      expectClose(adv, perToken(scores.map((s, b) => s - base[b])), rtol, atol, 'remax advantages = score − baseline');
    } else if (est === 'reinforce' || est === 'reinforce_baseline') {
      expectClose(adv, reference(est, c).advantages, rtol, atol, `${est} whitened advantages`);
      const mean = adv.reduce((a, b) => a + b, 0) / adv.length;
      expect(Math.abs(mean)).toBeLessThan(1e-5); // whitened with shift_mean
    } else {
      expectClose(adv, perToken(expected[est]), rtol, atol, `${est} advantages`);
    }
  });

  it('GRPO on a group of equal scores gives exactly zero, never a blown-up 0/0', async () => {
    const be = await makeBackend();
    const B = 6,
      A = 2;
    const scores = [0.1, 0.1, 0.1, 0.7, 0.3, -0.2];
    const group = [1, 1, 1, 2, 2, 2];
    const c: Case = {
      B,
      A,
      scores: f32(scores),
      group,
      logp: new Float64Array(B * A),
      ref: new Float64Array(B * A),
      mask: new Float64Array(B * A).fill(1),
      beta: 0,
      gamma: 1,
      klEstimator: 'k3',
    };
    const out = run(be, 'group_norm', c);
    const adv = await be.read(out.advantages);
    expectClose(adv.slice(0, 6), [0, 0, 0, 0, 0, 0], 0, 1e-6, 'equal-score group');
    expectClose(adv, reference('group_norm', c).advantages, rtol, atol, 'group_norm');
  });

  it('edge cases: empty row, length-1 row, one token in the middle, extreme logits, groups of 2', async () => {
    const be = await makeBackend();
    const A = 5;
    const mask = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1];
    const logp = [-1, -2, -3, -4, -5, -0.5, -1, -1, -1, -1, -1, -1, -1.5, -1, -1, 0, -1e4, -1e4, 0, -3];
    const ref = [-2, -2, -2, -2, -2, -1.5, -1, -1, -1, -1, -1, -1, -0.5, -1, -1, -1e4, 0, -1e4, -1e-4, -3];
    for (const est of GROUP_ESTIMATORS) {
      for (const klEstimator of KL_ESTIMATORS) {
        const c: Case = { B: 4, A, scores: [1, 0, 0.5, 2], group: [3, 8, 8, 3], logp, ref, mask, beta: 0.05, gamma: 0.95, klEstimator };
        const out = run(be, est, c);
        const [adv, ret] = await be.readMany([out.advantages, out.returns]);
        const want = reference(est, c);
        expectClose(ret, want.returns, rtol, atol, `${est}/${klEstimator} returns`);
        expectClose(adv, want.advantages, rtol, atol, `${est}/${klEstimator} advantages`);
        expectClose(ret.slice(0, 5), [0, 0, 0, 0, 0], 0, 0, 'empty row returns');
      }
    }
  });

  // verl multiplies every outcome estimator's advantages by the response mask, so padding holds
  // exactly 0 (the page's token views and histograms read every position). Compared everywhere,
  // not only under the mask, against the verl transliterations (tests/helpers/verl.ts).
  it.each(GROUP_ESTIMATORS)("%s: advantages equal verl's at every position, padding included", async (est) => {
    const be = await makeBackend();
    const r = rng(131 + GROUP_ESTIMATORS.indexOf(est));
    const B = 12,
      A = 9;
    const group = shuffledGroups(r, B, 4);
    const lengths = Array.from({ length: B }, (_, b) => (b === 5 ? 1 : r.int(2, A))); // every row padded; one length-1 row
    const mask = new Float64Array(B * A);
    lengths.forEach((len, b) => {
      for (let a = 0; a < len; a++) mask[b * A + a] = 1;
    });
    const logp = f32(randn(r, B * A, 1).map((v) => -Math.abs(v)));
    const ref = f32(Float64Array.from(logp, (l) => l + r.normal() * 0.3));
    const scores = f32(randn(r, B, 2));
    // verl's outcome estimators other than REINFORCE++ sum the token rewards into one score, so they
    // are compared with the KL outside the reward (β = 0, γ = 1); REINFORCE++ with KL in the reward and γ < 1.
    const withKl = est === 'reinforce';
    const c: Case = { B, A, scores, group, logp, ref, mask, beta: withKl ? 0.1 : 0, gamma: withKl ? 0.9 : 1, klEstimator: 'k1' };
    const out = run(be, est, c);
    const [adv] = await be.readMany([out.advantages]);
    const tokenRewards = new Float64Array(B * A);
    lengths.forEach((len, b) => {
      for (let a = 0; a < len; a++) tokenRewards[b * A + a] = -c.beta * (logp[b * A + a] - ref[b * A + a]);
      tokenRewards[b * A + len - 1] += scores[b];
    });
    const want = {
      reinforce: () => verl.reinforcePlusPlusAdvantage(tokenRewards, mask, B, A, c.gamma).advantages,
      reinforce_baseline: () => verl.reinforcePlusPlusBaselineAdvantage(tokenRewards, mask, group, B, A),
      group_norm: () => verl.grpoAdvantage(tokenRewards, mask, group, B, A, true),
      dr_grpo: () => verl.grpoAdvantage(tokenRewards, mask, group, B, A, false),
      rloo: () => verl.rlooAdvantage(tokenRewards, mask, group, B, A),
      opo: () => verl.opoAdvantage(tokenRewards, mask, group, B, A),
      grpo_passk: () => verl.grpoPasskAdvantage(tokenRewards, mask, group, B, A),
      remax: () => verl.remaxAdvantage(tokenRewards, baselinesOf(c), mask, B, A).advantages,
    }[est]();
    expectClose(adv, want, rtol, atol, `${est} advantages (all B·A positions)`);
    for (let i = 0; i < B * A; i++) if (!mask[i]) expect(adv[i], `${est} padded position ${i}`).toBe(0);
  });

  // Group KL order 'verl': the KL is summed into each score before the group statistics
  // (tests/unit/group_kl_order.test.ts checks the reference against verl's own functions).
  it.each(GROUP_ESTIMATORS)("%s with KL order 'verl': the reference, and verl's apply_kl_penalty + estimator", async (est) => {
    const be = await makeBackend();
    const r = rng(171 + GROUP_ESTIMATORS.indexOf(est));
    const B = 12,
      A = 9;
    const group = shuffledGroups(r, B, 4);
    const mask = rightPaddedMask(r, B, A, 1);
    const logp = f32(randn(r, B * A, 1).map((v) => -Math.abs(v)));
    const ref = f32(Float64Array.from(logp, (l) => l + r.normal() * 0.3));
    const scores = f32(randn(r, B, 2));
    const c: Case = { B, A, scores, group, logp, ref, mask, beta: 0.2, gamma: 1, klEstimator: 'k3', klOrder: 'verl' };
    const out = run(be, est, c);
    const [adv, ret] = await be.readMany([out.advantages, out.returns]);
    const want = reference(est, c);
    expectClose(adv, want.advantages, rtol, atol, `${est} advantages`);
    expectClose(ret, want.returns, rtol, atol, `${est} returns`);
    if (est !== 'reinforce') {
      const tokenRewards = verl.applyKlPenalty(scores, logp, ref, mask, B, A, c.beta, 'low_var_kl');
      const v = {
        reinforce_baseline: () => verl.reinforcePlusPlusBaselineAdvantage(tokenRewards, mask, group, B, A),
        group_norm: () => verl.grpoAdvantage(tokenRewards, mask, group, B, A, true),
        dr_grpo: () => verl.grpoAdvantage(tokenRewards, mask, group, B, A, false),
        rloo: () => verl.rlooAdvantage(tokenRewards, mask, group, B, A),
        opo: () => verl.opoAdvantage(tokenRewards, mask, group, B, A),
        grpo_passk: () => verl.grpoPasskAdvantage(tokenRewards, mask, group, B, A),
        // ReMax keeps the KL per token in verl too: its reverse cumsum is the reward-to-go.
        remax: () => verl.remaxAdvantage(tokenRewards, baselinesOf(c), mask, B, A).advantages,
      }[est]();
      expectClose(adv, v, rtol, atol, `${est} vs verl`);
    }
  });

  it('all tokens masked: zero returns', async () => {
    const be = await makeBackend();
    const B = 4,
      A = 3;
    for (const est of GROUP_ESTIMATORS) {
      const c: Case = {
        B,
        A,
        scores: [1, 2, 3, 4],
        group: [0, 0, 1, 1],
        logp: new Float64Array(B * A).fill(-1),
        ref: new Float64Array(B * A).fill(-2),
        mask: new Float64Array(B * A),
        beta: 0.1,
        gamma: 1,
        klEstimator: 'k2',
      };
      const out = run(be, est, c);
      const [adv, ret] = await be.readMany([out.advantages, out.returns]);
      expectClose(ret, new Float64Array(B * A), 0, 0, `${est} returns`);
      expectClose(adv, new Float64Array(B * A), 0, 0, `${est} advantages`);
    }
  });

  it.each(GROUP_ESTIMATORS.filter((e) => GROUPED_ESTIMATORS.has(e)))('%s rejects a group of one, naming it, before any GPU work', async (est) => {
    const be = await makeBackend();
    const B = 5,
      A = 2;
    const c = noKlCase(B, A, [1, 2, 3, 4, 5], [7, 7, 42, 9, 9]);
    const args = argsOf(be, est, c);
    const before = { ...be.counters() };
    expect(() => groupAdvantages(be, args)).toThrow(/group 42 has 1 sample/);
    expect(be.counters()).toEqual(before);
  });

  it('reinforce accepts groups of one; a group list of the wrong length is rejected', async () => {
    const be = await makeBackend();
    const B = 3,
      A = 2;
    const c = noKlCase(B, A, [1, -2, 0.5], [0, 1, 2]);
    const ret = await be.read(run(be, 'reinforce', c).returns);
    expectClose(ret, [1, 1, -2, -2, 0.5, 0.5], rtol, atol, 'reinforce returns');
    expect(() => run(be, 'rloo', { ...c, group: [0, 0] })).toThrow(/2 ids for 3 sequences/);
  });

  it('grpo_passk: ties and equal scores give exactly 0; a unique best of a tie below gets the gap', async () => {
    const be = await makeBackend();
    const B = 9,
      A = 2;
    // group 1: tie at the top (0 everywhere); group 2: all equal (0, never 0/1e-6 blown up);
    // group 3: best 2 unique, runner-up tie 1, 1 → (2 − 1)/(std + 1e-6) for the best only
    const scores = [0.5, 1, 1, 0.3, 0.3, 0.3, 1, 2, 1];
    const group = [1, 1, 1, 2, 2, 2, 3, 3, 3];
    const c = noKlCase(B, A, scores, group);
    const adv = await be.read(run(be, 'grpo_passk', c).advantages);
    const std3 = Math.sqrt(((1 - 4 / 3) ** 2 * 2 + (2 - 4 / 3) ** 2) / 2);
    const best = 1 / (std3 + 1e-6);
    expectClose(adv, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, best, best, 0, 0], rtol, atol, 'grpo_passk ties');
    const tokenRewards = new Float64Array(B * A);
    for (let b = 0; b < B; b++) tokenRewards[b * A + A - 1] = scores[b];
    expectClose(adv, verl.grpoPasskAdvantage(tokenRewards, c.mask, group, B, A), rtol, atol, 'grpo_passk vs verl');
  });

  it('opo: the baseline weights each score by its response length (length-1 and empty rows)', async () => {
    const be = await makeBackend();
    const B = 4,
      A = 4;
    // group 5: lengths 1 and 3; group 6: lengths 0 and 2 (the empty row keeps advantage 0)
    const mask = [1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0];
    const c: Case = { B, A, scores: [2, -1, 4, 1], group: [5, 5, 6, 6], logp: new Float64Array(B * A), ref: new Float64Array(B * A), mask, beta: 0, gamma: 1, klEstimator: 'k1' };
    const adv = await be.read(run(be, 'opo', c).advantages);
    const b5 = (1 * 2 + 3 * -1) / 4; // −0.25
    const b6 = (0 * 4 + 2 * 1) / 2; // 1
    expectClose(adv, [2 - b5, 0, 0, 0, -1 - b5, -1 - b5, -1 - b5, 0, 0, 0, 0, 0, 1 - b6, 1 - b6, 0, 0], rtol, atol, 'opo');
  });

  it('remax: groups of one are fine; a missing or misshapen baseline is rejected before any GPU work', async () => {
    const be = await makeBackend();
    const B = 3,
      A = 2;
    const c = noKlCase(B, A, [1, 0, 0.5], [0, 1, 2], { baselines: [0.5, 0.5, 1] });
    const adv = await be.read(run(be, 'remax', c).advantages);
    expectClose(adv, [0.5, 0.5, -0.5, -0.5, -0.5, -0.5], rtol, atol, 'remax, one sample per prompt');
    const args = { ...argsOf(be, 'remax', c), baselines: null };
    const twoBaselines = be.tensor([1, 2], [2]);
    const before = { ...be.counters() };
    expect(() => groupAdvantages(be, args)).toThrow(/needs a reward baseline/);
    expect(() => groupAdvantages(be, { ...args, baselines: twoBaselines })).toThrow(/baselines/);
    expect(be.counters()).toEqual(before);
  });
});
