// The float64 references of verl's newer policy losses (src/reference/policyLoss.ts: sapo, gpg,
// geo_mean) against verl's own functions transliterated op by op (tests/helpers/verl.ts, verl-project/verl
// v0.9.0, commit 483b8a0), in float64 on fresh random inputs (TEST_SEED) and edge cases: the loss and
// the clip/gate fractions and approx KL verl reports, to 1e-8 relative (both are float64; what is
// left is summation order and verl's +1e-8 in its token counts — masked_mean's Σm + 1e-8, GMPO's
// n_b + 1e-8 — a relative 1e-8/n). Gradients: tests/unit/ppo_grads.test.ts.
import { describe, expect, it } from 'vitest';
import { LOSS_AGGS, POLICY_STATS, type LossMode, type PolicyLossParams } from '../../src/backend/ppoOps.ts';
import { policyLossRef, SAPO_TAU_NEG_DEFAULT, SAPO_TAU_POS_DEFAULT, sapoTemperatures, validatePolicyLossParams } from '../../src/reference/policyLoss.ts';
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
