// The float64 references of verl's newer policy losses (src/reference/policyLoss.ts: sapo, gpg,
// geo_mean) against verl's own functions transliterated op by op (tests/helpers/verl.ts, verl-project/verl
// v0.9.0, commit 483b8a0), in float64 on fresh random inputs (TEST_SEED) and edge cases: the loss and
// the clip/gate fractions and approx KL verl reports, to 1e-8 relative (both are float64; what is
// left is summation order and verl's +1e-8 in its token counts — masked_mean's Σm + 1e-8, GMPO's
// n_b + 1e-8 — a relative 1e-8/n). Gradients: tests/unit/ppo_grads.test.ts.
import { describe, expect, it } from 'vitest';
import { LOSS_AGGS } from '../../src/reference/aggregate.ts';
import { POLICY_STATS } from '../../src/ops/policyLoss.ts';
import type { LossMode, PolicyLossParams } from '../../src/reference/policyLoss.ts';
import {
  COV_DEFAULTS,
  covHash,
  covKnobs,
  covSelectRef,
  lowbias32,
  policyLossRef,
  SAPO_TAU_NEG_DEFAULT,
  SAPO_TAU_POS_DEFAULT,
  sapoTemperatures,
  validatePolicyLossParams,
} from '../../src/reference/policyLoss.ts';
import { Rng } from '../../src/util/rng.ts';
import { TEST_SEED } from '../helpers/random.ts';
import * as verl from '../helpers/verl.ts';

const rng = (salt: number) => new Rng((TEST_SEED + salt * 7919) >>> 0);
const RTOL = 1e-8;
const ATOL = 1e-12;

function near(got: ArrayLike<number>, want: ArrayLike<number>, what: string) {
  for (let i = 0; i < want.length; i++) {
    const tol = ATOL + RTOL * Math.abs(want[i]);
    if (!(Math.abs(got[i] - want[i]) <= tol)) throw new Error(`${what}[${i}]: reference ${got[i]}, verl ${want[i]} (seed ${TEST_SEED})`);
  }
}

function batch(salt: number, B: number, A: number, spread: number, emptyRows = false) {
  const r = rng(salt);
  const old = Float64Array.from({ length: B * A }, () => -Math.abs(r.normal() * 1.2) - 0.05);
  const logp = Float64Array.from(old, (o) => o + r.normal() * spread);
  const adv = Float64Array.from({ length: B * A }, () => r.normal());
  const mask = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = emptyRows && b % 3 === 2 ? 0 : r.int(1, A + 1);
    for (let a = 0; a < len; a++) mask[b * A + a] = 1;
  }
  const isW = Float64Array.from({ length: B * A }, () => r.uniform(0.2, 2));
  for (let i = 0; i < B * A; i++)
    if (!mask[i]) {
      old[i] = -7; // finite garbage under the mask
      logp[i] = 3;
    }
  return { old, logp, adv, mask, isW };
}

type Batch = ReturnType<typeof batch>;
const cfg = (agg: string): verl.VerlPolicyConfig => ({ clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3, lossAggMode: agg });

function verlStats(mode: LossMode, x: Batch, B: number, A: number, agg: string, tau: [number, number], isW: Float64Array | null): number[] {
  if (mode === 'sapo') {
    const v = verl.policyLossSapo(x.old, x.logp, x.adv, x.mask, B, A, tau[0], tau[1], isW);
    return [v.loss, v.clipfrac, v.clipfracLower, v.ppoKl];
  }
  if (mode === 'geo_mean') {
    const v = verl.policyLossGeoMean(x.old, x.logp, x.adv, x.mask, B, A, cfg(agg), isW);
    return [v.loss, v.clipfrac, v.clipfracLower, v.ppoKl];
  }
  // GPG: verl reports the loss only; the playground's clip fractions are 0 and its approx KL vanilla's
  const kl = verl.policyLossVanilla(x.old, x.logp, x.adv, x.mask, B, A, cfg(agg), isW).ppoKl;
  return [verl.policyLossGpg(x.logp, x.adv, x.mask, B, A, agg, isW).loss, 0, 0, kl];
}

describe("sapo, gpg, geo_mean references equal verl's functions in float64", () => {
  const modes: LossMode[] = ['sapo', 'gpg', 'geo_mean'];
  const taus: [number, number][] = [
    [SAPO_TAU_POS_DEFAULT, SAPO_TAU_NEG_DEFAULT],
    [0.5, 3],
    [8, 0.25],
  ];
  const cases = modes.flatMap((mode) => LOSS_AGGS.flatMap((agg) => [false, true].map((withIs) => [mode, agg, withIs] as const)));
  it.each(cases)('%s, agg %s, is_weights %s: loss, clip fractions, ppo_kl', (mode, agg, withIs) => {
    for (const [B, A, spread] of [
      [6, 9, 0.5],
      [33, 41, 0.3],
      [8, 5, 3],
    ] as const) {
      for (const tau of mode === 'sapo' ? taus : taus.slice(0, 1)) {
        const x = batch(B * A + modes.indexOf(mode), B, A, spread);
        const isW = withIs ? x.isW : null;
        const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg, lossMode: mode, normScale: 'verl', sapoTauPos: tau[0], sapoTauNeg: tau[1] };
        const got = policyLossRef(x.old, x.logp, x.adv, x.mask, B, A, params, isW).stats;
        const want = verlStats(mode, x, B, A, agg, tau, isW);
        near(got, want, `${mode} ${agg} B${B}A${A} τ${tau}`);
        if (mode === 'geo_mean') {
          expect(want[POLICY_STATS.clipfrac]).toBeGreaterThan(0);
          expect(want[POLICY_STATS.clipfracLower]).toBeGreaterThan(0);
        }
      }
    }
  });

  it('GMPO counts empty rows in its mean as verl does (torch.mean over B); its loss ignores loss_agg_mode', () => {
    const B = 9,
      A = 6;
    const x = batch(5, B, A, 0.6, true);
    for (const withIs of [false, true]) {
      const isW = withIs ? x.isW : null;
      const want = verlStats('geo_mean', x, B, A, 'token-mean', [1, 1], isW);
      const values = LOSS_AGGS.map((agg) => policyLossRef(x.old, x.logp, x.adv, x.mask, B, A, { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg, lossMode: 'geo_mean' }, isW).stats);
      for (const v of values) near(v, want, `geo_mean empty rows is ${withIs}`);
    }
  });

  it('SAPO at r = 1 gates to 2/τ with gradient −A (the on-policy PPO gradient); GPG is −A·logπ', () => {
    // one token per row, token-level; seq-mean-token-mean over 2 rows = mean of the two
    const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'sapo', sapoTauPos: 2, sapoTauNeg: 4 };
    const r = policyLossRef([-1, -2], [-1, -2], [1, -1], [1, 1], 2, 1, params);
    near([r.stats[0]], [(-(2 / 2) * 1 + (2 / 4) * 1) / 2], 'sapo value at r = 1');
    near(r.gradLogprobs, [-1 / 2, 1 / 2], 'sapo grad at r = 1');
    const g = policyLossRef([-1, -2], [-0.5, -3], [1, -1], [1, 1], 1, 2, { ...params, lossMode: 'gpg' });
    near([g.stats[0]], [(0.5 - 3) / 2], 'gpg value');
    near(g.gradLogprobs, [-1 / 2, 1 / 2], 'gpg grad');
  });

  it('rejects non-positive or non-finite SAPO temperatures', () => {
    const base: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'sapo' };
    expect(() => validatePolicyLossParams({ ...base, sapoTauPos: 0 })).toThrow(/sapoTauPos/);
    expect(() => validatePolicyLossParams({ ...base, sapoTauNeg: -1 })).toThrow(/sapoTauNeg/);
    expect(() => validatePolicyLossParams({ ...base, sapoTauNeg: Number.NaN })).toThrow(/sapoTauNeg/);
    expect(() => validatePolicyLossParams({ ...base, sapoTauPos: 1, sapoTauNeg: 1.05 })).not.toThrow();
  });

  it("sapoTemperatures reads a config's knobs, verl's defaults (1.0, 1.05) without them", () => {
    expect(sapoTemperatures({})).toEqual({ sapoTauPos: 1, sapoTauNeg: 1.05 });
    expect(sapoTemperatures({ sapoTauPos: 0.5 })).toEqual({ sapoTauPos: 0.5, sapoTauNeg: 1.05 });
    expect(sapoTemperatures({ sapoTauPos: 2, sapoTauNeg: 3 })).toEqual({ sapoTauPos: 2, sapoTauNeg: 3 });
  });
});

// clip_cov and kl_cov (verl v0.9.0 core_algos.py L1742–1924): the same batch-wide token choice,
// values and metrics. verl's clip_cov draws torch.randperm; the reference ranks the band by
// covHash(index, covSeed), and that order is injected into the transliteration as its permutation.
describe("clip_cov, kl_cov references equal verl's functions in float64 (the reference's choice injected)", () => {
  const hashOrder = (seed: number) => (band: number[]) => [...band].sort((x, y) => covHash(y, seed) - covHash(x, seed) || x - y);
  const knobs = [
    { clipCovRatio: COV_DEFAULTS.clipCovRatio, clipCovLb: 1, clipCovUb: 5, klCovRatio: COV_DEFAULTS.klCovRatio, ppoKlCoef: 0.1 },
    { clipCovRatio: 0.05, clipCovLb: 0.2, clipCovUb: 2, klCovRatio: 0.1, ppoKlCoef: 0.5 },
    { clipCovRatio: 0.3, clipCovLb: -0.5, clipCovUb: 0.5, klCovRatio: 0.4, ppoKlCoef: 2 },
  ];
  const cases = (['clip_cov', 'kl_cov'] as const).flatMap((mode) => LOSS_AGGS.flatMap((agg) => [false, true].map((withIs) => [mode, agg, withIs] as const)));
  it.each(cases)('%s, agg %s, is_weights %s: loss, pg_clipfrac, ppo_kl, picked tokens', (mode, agg, withIs) => {
    let pickedTotal = 0;
    for (const [B, A, spread] of [
      [6, 9, 0.5],
      [33, 41, 0.3],
      [8, 5, 1.5],
    ] as const) {
      for (const [j, k] of knobs.entries()) {
        const x = batch(B * A + 11 + j, B, A, spread);
        const isW = withIs ? x.isW : null;
        const seed = (B * 7 + j) >>> 0;
        const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg, lossMode: mode, normScale: 'verl', ...k, covSeed: seed };
        const got = policyLossRef(x.old, x.logp, x.adv, x.mask, B, A, params, isW).stats;
        const sel = covSelectRef(x.old, x.logp, x.adv, x.mask, B, A, params);
        const v =
          mode === 'clip_cov'
            ? verl.policyLossClipCov(x.old, x.logp, x.adv, x.mask, B, A, cfg(agg), { ratio: k.clipCovRatio, lb: k.clipCovLb, ub: k.clipCovUb }, hashOrder(seed), isW)
            : verl.policyLossKlCov(x.old, x.logp, x.logp, x.adv, x.mask, B, A, agg, { ratio: k.klCovRatio, coef: k.ppoKlCoef }, isW);
        near(got, [v.loss, v.clipfrac, v.clipfracLower, v.ppoKl], `${mode} ${agg} B${B}A${A} knobs ${j}`);
        expect(Array.from(sel)).toEqual(Array.from(v.picked));
        const n = x.mask.reduce((s, m) => s + m, 0);
        const count = sel.reduce((s, m) => s + m, 0);
        if (mode === 'kl_cov') expect(count).toBe(Math.max(1, Math.floor(n * k.klCovRatio)));
        else expect(count).toBeLessThanOrEqual(Math.max(1, Math.floor(n * k.clipCovRatio)));
        pickedTotal += count;
      }
    }
    expect(pickedTotal).toBeGreaterThan(10); // the choice is exercised, not empty
  });

  it('kl_cov ties go to the lower index; clip_cov skips tokens PPO already clips; nothing on an empty batch', () => {
    // four valid tokens with equal covariance 1·1: the top 2 are the first two
    const B = 2,
      A = 3;
    const mask = [1, 1, 0, 1, 1, 0];
    const adv = [1, -1, 9, 1, -1, 9];
    const logp = [-1, -3, 0, -1, -3, 0];
    const old = logp.slice();
    const p: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'kl_cov', klCovRatio: 0.5 };
    expect(Array.from(covSelectRef(old, logp, adv, mask, B, A, p))).toEqual([1, 1, 0, 0, 0, 0]);
    const v = verl.policyLossKlCov(old, logp, logp, adv, mask, B, A, 'token-mean', { ratio: 0.5, coef: 0.1 });
    expect(Array.from(v.picked)).toEqual([1, 1, 0, 0, 0, 0]);
    // clip_cov: the token with cov in the band whose ratio is clipped (A > 0, ratio > 1.2) is not eligible
    const oldC = [-1, -3, 0, -1.5, -3, 0]; // token 3: ratio e^0.5 > 1.2 with A = 1 → clipped by PPO
    const pc: PolicyLossParams = { ...p, lossMode: 'clip_cov', clipCovRatio: 1, clipCovLb: 0.5, clipCovUb: 2 };
    const sel = covSelectRef(oldC, logp, adv, mask, B, A, pc);
    expect(sel[3]).toBe(0);
    expect(sel.reduce((s, m) => s + m, 0)).toBe(3);
    const zero = [0, 0, 0, 0, 0, 0];
    for (const mode of ['clip_cov', 'kl_cov'] as const) {
      expect(Array.from(covSelectRef(old, logp, adv, zero, B, A, { ...pc, lossMode: mode }))).toEqual(zero);
      expect(Array.from(policyLossRef(old, logp, adv, zero, B, A, { ...pc, lossMode: mode }).stats)).toEqual([0, 0, 0, 0]);
    }
  });

  it('the seed changes which band tokens clip_cov picks, not how many', () => {
    const B = 16,
      A = 12;
    const x = batch(77, B, A, 0.8);
    const p: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'clip_cov', clipCovRatio: 0.02, clipCovLb: 0, clipCovUb: 50 };
    const picks = Array.from({ length: 16 }, (_, covSeed) => covSelectRef(x.old, x.logp, x.adv, x.mask, B, A, { ...p, covSeed }));
    const counts = picks.map((s) => s.reduce((a, m) => a + m, 0));
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeGreaterThan(0);
    // The band (every token a ratio of 1 would pick) holds more than the picks, so a seed has a choice:
    // with 16 seeds all picking the same tokens of a band of n > k, the hash would be broken.
    const band = covSelectRef(x.old, x.logp, x.adv, x.mask, B, A, { ...p, clipCovRatio: 1 }).reduce((a, m) => a + m, 0);
    expect(band).toBeGreaterThan(counts[0]);
    expect(new Set(picks.map((s) => Array.from(s).join(''))).size).toBeGreaterThan(1);
  });

  it('rejects bad covariance knobs; covKnobs falls back to verl defaults', () => {
    const base: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'clip_cov' };
    expect(() => validatePolicyLossParams({ ...base, clipCovRatio: 0 })).toThrow(/clipCovRatio/);
    expect(() => validatePolicyLossParams({ ...base, klCovRatio: -1 })).toThrow(/klCovRatio/);
    expect(() => validatePolicyLossParams({ ...base, ppoKlCoef: -0.1 })).toThrow(/ppoKlCoef/);
    expect(() => validatePolicyLossParams({ ...base, clipCovUb: Number.NaN })).toThrow(/clipCovUb/);
    expect(() => validatePolicyLossParams({ ...base, covSeed: 1.5 })).toThrow(/covSeed/);
    expect(covKnobs({})).toEqual({ clipCovRatio: 0.0002, clipCovLb: 1, clipCovUb: 5, klCovRatio: 0.0002, ppoKlCoef: 0.1 });
    expect(covKnobs({ ppoKlCoef: 1 }).ppoKlCoef).toBe(1);
  });

  it('lowbias32 gives the bits of an independent implementation (Python, u32 wraparound)', () => {
    expect(lowbias32(0)).toBe(0);
    expect(lowbias32(1)).toBe(1753845952);
    expect(lowbias32(0xdeadbeef)).toBe(3861431939);
    expect(covHash(5, 1)).not.toBe(covHash(5, 2));
  });
});
