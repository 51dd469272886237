// The rollout-correction reference (src/reference/rolloutCorrection.ts) against verl's own functions
// transliterated op by op in float64 (tests/helpers/verl.ts: compute_rollout_correction_weights with
// compute_is_metrics, compute_rollout_rejection_mask, compute_offpolicy_metrics, the two threshold
// parsers; verl-project/verl v0.9.0) and OpenRLHF's TIS / IcePop (openrlhf/models/loss.py, v0.11.0),
// on fresh random inputs (TEST_SEED) with an empty row, length-1 rows and ±50 log-prob gaps.
// Both sides are float64: weights, masks and metrics agree to 1e-12 relative (summation order only).
import { describe, expect, it } from 'vitest';
import {
  parseRolloutIsThreshold,
  parseRolloutRs,
  ROLLOUT_RS_OPTIONS,
  rolloutCorrectionRef,
  rolloutCorrMetricsRef,
  rsCriterion,
  type RolloutCorrectionParams,
} from '../../src/reference/rolloutCorrection.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';
import * as verl from '../helpers/verl.ts';

const RTOL = 1e-12;
const ATOL = 1e-12;

function batch(salt: number, B: number, A: number, spread: number, extreme: boolean) {
  const r = rng(salt);
  const mask = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = b === 0 ? 0 : b === 1 ? 1 : r.int(1, A + 1);
    for (let a = 0; a < len; a++) mask[b * A + a] = 1;
  }
  const old = randn(r, B * A, 1).map((v) => -Math.abs(v) - 0.05);
  const rollout = Float64Array.from(old, (o) => o + r.normal() * spread);
  if (extreme) {
    old[(B - 1) * A] = 0;
    rollout[(B - 1) * A] = -50;
    mask[(B - 1) * A] = 1;
  }
  for (let i = 0; i < B * A; i++) if (!mask[i]) old[i] = rollout[i] = 0; // verl reads padding; keep it finite
  return { old, rollout, mask, B, A };
}

/** verl's metrics with the rollout_corr/ prefix (compute_rollout_correction_and_rejection_mask step 6). */
const prefixed = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [`rollout_corr/${k}`, v]));

function expectMetrics(got: Record<string, number>, want: Record<string, number>, what: string) {
  expect(Object.keys(got).sort(), `${what} metric names`).toEqual(Object.keys(want).sort());
  for (const k of Object.keys(want)) {
    // verl's ESS is 1/0 = Infinity when IcePop zeroes every weight: equal, not close
    if (!Number.isFinite(want[k])) expect(got[k], `${what} ${k}`).toBe(want[k]);
    else expectClose([got[k]], [want[k]], RTOL, ATOL, `${what} ${k}`);
  }
}

describe('rollout correction reference = verl rollout_corr_helper (float64)', () => {
  const cases: [string, number, number, number, boolean][] = [
    ['small spread', 9, 12, 0.3, false],
    ['wide spread with a ±50 gap', 8, 7, 1.5, true],
  ];
  it.each(cases)('%s: IS weights and metrics, token and sequence, TIS and IcePop', (_what, B, A, spread, extreme) => {
    const x = batch(B * 31 + A, B, A, spread, extreme);
    const lr = Float64Array.from(x.old, (o, i) => o - x.rollout[i]);
    for (const level of ['token', 'sequence'] as const) {
      for (const spec of [2, 1.3, '0.5_2', '0.8_1.25'] as const) {
        const { upper, lower } = verl.parseRolloutIsThreshold(spec);
        const p: RolloutCorrectionParams = { isLevel: level, isUpper: upper, isLower: lower, tisLower: null, rs: [] };
        const ref = rolloutCorrectionRef(x.old, x.rollout, x.mask, B, A, p);
        const v = verl.rolloutCorrectionWeights(lr, x.mask, B, A, level, spec);
        expectClose(ref.weights as Float64Array, v.weights, RTOL, ATOL, `${level} ${spec} weights`);
        expect(Array.from(ref.keep)).toEqual(Array.from(x.mask));
        const want = prefixed({ ...v.metrics, ...verl.offpolicyMetrics(x.old, x.rollout, x.mask, B, A) });
        expectMetrics(rolloutCorrMetricsRef(x.old, x.rollout, x.mask, B, A, p), want, `${level} ${spec}`);
      }
    }
  });

  it.each(cases)('%s: rejection sampling, every option alone and chained, with its masked fractions', (_what, B, A, spread, extreme) => {
    const x = batch(B * 37 + A, B, A, spread, extreme);
    const lr = Float64Array.from(x.old, (o, i) => o - x.rollout[i]);
    const thresholds: Record<string, number> = { k1: 1.5, k2: spread * spread * 0.3, k3: spread * spread * 0.3 };
    const specs: [string, string | number][] = ROLLOUT_RS_OPTIONS.map((o) => [o, thresholds[o.slice(-2)] * (o.startsWith('seq_sum') && !o.endsWith('k1') ? A / 2 : 1)]);
    specs.push(['token_k1,seq_mean_k3,seq_max_k2', `0.7_1.6,${thresholds.k3},${thresholds.k2}`]);
    specs.push(['seq_sum_k1', '0.2_3']);
    let rejecting = 0;
    for (const [rs, spec] of specs) {
      const options = rs.split(',');
      const parsed = verl.parseRolloutRsThresholds(options, spec);
      const p: RolloutCorrectionParams = {
        isLevel: null,
        isUpper: 2,
        isLower: null,
        tisLower: null,
        rs: options.map((o) => ({ option: o as (typeof ROLLOUT_RS_OPTIONS)[number], lower: parsed[o].lower, upper: parsed[o].upper })),
      };
      const v = verl.rolloutRejectionMask(lr, x.mask, B, A, rs, spec);
      const ref = rolloutCorrectionRef(x.old, x.rollout, x.mask, B, A, p);
      expect(Array.from(ref.keep), `${rs} mask`).toEqual(Array.from(v.mask));
      if (v.mask.some((k, i) => k !== x.mask[i])) rejecting++;
      expect(ref.weights).toBeNull();
      // verl's per-option statistics (…_mean/_max/_std/_seq_*) are not computed by the page; its fractions are.
      const wantFractions = Object.fromEntries(Object.entries(prefixed(v.metrics)).filter(([k]) => k.endsWith('masked_fraction')));
      const got = rolloutCorrMetricsRef(x.old, x.rollout, x.mask, B, A, p);
      const gotFractions = Object.fromEntries(Object.entries(got).filter(([k]) => k.includes('rollout_rs_')));
      expectMetrics(gotFractions, wantFractions, rs);
      // a one-number k1 threshold u means [1/u, u] (rsCriterion, as _parse_rollout_rs_thresholds)
      if (typeof spec === 'number' && options[0].endsWith('k1')) expect(rsCriterion(p.rs[0].option, spec)).toEqual(p.rs[0]);
    }
    expect(rejecting, 'criteria that reject something').toBeGreaterThan(specs.length / 2);
  });

  it("the threshold specs parse as verl's parsers do", () => {
    for (const spec of [2, '1.5', '0.5_2', '0.25_4.0']) expect(parseRolloutIsThreshold(spec)).toEqual(verl.parseRolloutIsThreshold(spec));
    const cases: [string, number | string][] = [
      ['token_k1', 2],
      ['token_k1,seq_mean_k3', '0.5_1.5,0.01'],
      ['seq_sum_k1,seq_max_k2,token_k3', 3],
      ['seq_mean_k2,seq_mean_k2', '0.2'],
    ];
    for (const [rs, spec] of cases) {
      const options = [...new Set(rs.split(','))];
      const want = verl.parseRolloutRsThresholds(options, spec);
      expect(parseRolloutRs(rs, spec)).toEqual(options.map((o) => ({ option: o, ...want[o] })));
    }
    expect(() => parseRolloutRs('seq_max_k2', '0.1_2')).toThrow(/upper bound only/);
    expect(() => parseRolloutIsThreshold('3_2')).toThrow(/exceeds/);
  });

  it('TIS lower bound = OpenRLHF is_correction_type tis [low, high]; IcePop = OpenRLHF icepop', () => {
    const x = batch(77, 6, 8, 0.8, false);
    for (const [low, high] of [
      [0.5, 5],
      [0.8, 1.2],
      [0, 2],
    ]) {
      const tis = rolloutCorrectionRef(x.old, x.rollout, x.mask, 6, 8, { isLevel: 'token', isUpper: high, isLower: null, tisLower: low, rs: [] });
      const want = verl.openrlhfIsCorrection(x.old, x.rollout, 'tis', low, high).map((w, i) => w * x.mask[i]); // the loss is masked after
      expectClose(tis.weights as Float64Array, want, RTOL, ATOL, `tis [${low}, ${high}]`);
      if (low > 0) {
        const ice = rolloutCorrectionRef(x.old, x.rollout, x.mask, 6, 8, { isLevel: 'token', isUpper: high, isLower: low, tisLower: null, rs: [] });
        const wantIce = verl.openrlhfIsCorrection(x.old, x.rollout, 'icepop', low, high).map((w, i) => w * x.mask[i]);
        expectClose(ice.weights as Float64Array, wantIce, RTOL, ATOL, `icepop [${low}, ${high}]`);
      }
    }
  });
});
