// Rollout correction (shaders/tis.wgsl rollout_correction) on both backends against the float64
// reference (src/reference/rolloutCorrection.ts), on fresh random inputs (TEST_SEED) and edges:
// an all-masked row, length-1 rows, rows longer than the workgroup, ±50 log-prob gaps, NaN/Inf
// under the mask. Tolerances: token-level weights TOL.elem (1e-5 relative, 1e-6 absolute);
// sequence-level weights are exp of a float32 row sum, so TOL.reduce (1e-4 relative). The keep
// mask must match exactly: every threshold is placed midway between two distinct float64
// statistics of the batch (relative gap ≥ 1e-3), so no float32 rounding can cross it.
import { describe, expect, it } from 'vitest';
import {
  ROLLOUT_RS_OPTIONS,
  rolloutCorrectionRef,
  rsDivergences,
  rsIsK1,
  rsIsTokenLevel,
  type RolloutCorrectionParams,
  type RolloutIsLevel,
  type RolloutRsCriterion,
  type RolloutRsOption,
} from '../../src/reference/rolloutCorrection.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { rolloutCorrection } from '../../src/ops/rolloutCorrection.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));

interface Batch {
  old: Float64Array;
  rollout: Float64Array;
  mask: Float64Array;
  B: number;
  A: number;
}

/** Random batch: rows of 0..A tokens (row 0 empty, row 1 one token), log-ratios of spread `spread`, two ±50 gaps. */
function batch(salt: number, B: number, A: number, spread: number): Batch {
  const r = rng(salt);
  const mask = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = b === 0 ? 0 : b === 1 ? 1 : r.int(1, A + 1);
    for (let a = 0; a < len; a++) mask[b * A + a] = 1;
  }
  const old = f32(randn(r, B * A, 1).map((v) => -Math.abs(v) - 0.05));
  const rollout = f32(Float64Array.from(old, (o) => o + r.normal() * spread));
  const last = B - 1;
  old[last * A] = 0;
  rollout[last * A] = -50; // ratio e^50: clamped at ±20 before exp
  mask[last * A] = 1;
  if (B > 3) {
    old[2 * A] = -50;
    rollout[2 * A] = 0;
    mask[2 * A] = 1;
  }
  for (let i = 0; i < B * A; i++)
    if (!mask[i]) {
      old[i] = Number.NaN;
      rollout[i] = Number.POSITIVE_INFINITY;
    }
  return { old, rollout, mask, B, A };
}

/** Midway between two distinct values near quantile q (relative gap ≥ 1e-3), so float32 cannot cross it. */
function between(values: number[], q: number): number {
  const u = [...new Set(values.filter(Number.isFinite))].sort((x, y) => x - y);
  const start = Math.min(u.length - 2, Math.max(0, Math.floor(q * (u.length - 1))));
  for (let d = 0; d < u.length; d++) {
    for (const i of [start + d, start - d]) {
      if (i < 0 || i + 1 >= u.length) continue;
      if (u[i + 1] - u[i] >= 1e-3 * Math.max(Math.abs(u[i]), Math.abs(u[i + 1]), 1e-3)) return (u[i] + u[i + 1]) / 2;
    }
  }
  throw new Error('no gap to place a threshold');
}

const lrOf = (x: Batch) => Array.from(x.old, (o, i) => (x.mask[i] ? o - x.rollout[i] : Number.NaN));

/** The statistic each row / token shows one option, float64 (to place its thresholds). */
function optionStats(x: Batch, option: RolloutRsOption): number[] {
  const lr = lrOf(x);
  const k = Number(option[option.length - 1]) - 1;
  if (rsIsTokenLevel(option)) return lr.filter(Number.isFinite).map((l) => rsDivergences(l)[k]);
  const out: number[] = [];
  for (let b = 0; b < x.B; b++) {
    const ks: number[] = [];
    for (let a = 0; a < x.A; a++) if (x.mask[b * x.A + a]) ks.push(rsDivergences(lr[b * x.A + a])[k]);
    if (ks.length === 0) continue;
    const sum = ks.reduce((s, v) => s + v, 0);
    out.push(option.startsWith('seq_sum') ? sum : option.startsWith('seq_mean') ? sum / (ks.length + 1e-8) : Math.max(...ks));
  }
  return out;
}

/** A criterion for `option` that rejects some but not all: k1 keeps [q 0.15, q 0.85] of −lr', k2 / k3 below q 0.7. */
function criterion(x: Batch, option: RolloutRsOption): RolloutRsCriterion {
  const s = optionStats(x, option);
  if (rsIsK1(option)) return { option, lower: Math.exp(between(s, 0.15)), upper: Math.exp(between(s, 0.85)) };
  return { option, lower: null, upper: between(s, 0.7) };
}

/** The raw ratios the IS level shows (to place the IS thresholds). */
function rawRatios(x: Batch, level: RolloutIsLevel): number[] {
  const lr = lrOf(x);
  const c = (v: number) => Math.exp(Math.min(20, Math.max(-20, v)));
  if (level === 'token') return lr.filter(Number.isFinite).map(c);
  const out: number[] = [];
  for (let b = 0; b < x.B; b++) {
    let s = 0;
    let any = false;
    for (let a = 0; a < x.A; a++) {
      if (!x.mask[b * x.A + a]) continue;
      s += lr[b * x.A + a];
      any = true;
    }
    if (any) out.push(c(s));
  }
  return out;
}

describe.each(BACKENDS)('rolloutCorrection on %s', (_name, makeBackend) => {
  async function check(x: Batch, p: RolloutCorrectionParams, what: string) {
    const be = await makeBackend();
    const t = (v: Float64Array) => be.tensor(v, [x.B, x.A]);
    const out = rolloutCorrection(be, { oldLogprobs: t(x.old), rolloutLogprobs: t(x.rollout), actionMask: t(x.mask), params: p });
    const want = rolloutCorrectionRef(x.old, x.rollout, x.mask, x.B, x.A, p);
    const keep = await be.read(out.keep);
    expect(Array.from(keep), `${what} keep`).toEqual(Array.from(want.keep));
    if (p.isLevel === null) expect(out.weights).toBeNull();
    else {
      expect(out.weights).not.toBeNull();
      const w = await be.read(out.weights as NonNullable<typeof out.weights>);
      const tol = p.isLevel === 'token' ? TOL.elem : TOL.reduce;
      expectClose(w, want.weights as Float64Array, tol.rtol, tol.atol, `${what} weights`);
      expect(Array.from(w).every((v, i) => (x.mask[i] ? v >= 0 : v === 0))).toBe(true);
    }
    return { keep, want };
  }

  const shapes: [number, number, number][] = [
    [7, 9, 0.6],
    [5, 150, 0.05], // rows longer than the 64-thread workgroup
  ];
  it.each(shapes)('IS weights: token and sequence, TIS cap, OpenRLHF lower bound, IcePop band (B=%i, A=%i)', async (B, A, spread) => {
    for (const level of ['token', 'sequence'] as const) {
      const x = batch(11 + A, B, A, spread);
      const rho = rawRatios(x, level);
      const upper = between(rho, 0.75);
      const lower = between(rho, 0.25);
      await check(x, { isLevel: level, isUpper: upper, isLower: null, tisLower: null, rs: [] }, `${level} TIS`);
      await check(x, { isLevel: level, isUpper: upper, isLower: null, tisLower: lower, rs: [] }, `${level} TIS [lower, upper]`);
      const { want } = await check(x, { isLevel: level, isUpper: upper, isLower: lower, tisLower: null, rs: [] }, `${level} IcePop`);
      // IcePop zeroes some valid tokens and keeps others (the thresholds sit inside the spread)
      const valid = Array.from(want.weights as Float64Array).filter((_, i) => x.mask[i]);
      expect(valid.some((v) => v === 0)).toBe(true);
      expect(valid.some((v) => v > 0)).toBe(true);
    }
  });

  it.each(shapes)('rejection sampling: every verl option alone, and four together (B=%i, A=%i)', async (B, A, spread) => {
    const x = batch(23 + A, B, A, spread);
    for (const option of ROLLOUT_RS_OPTIONS) {
      const c = criterion(x, option);
      const { keep } = await check(x, { isLevel: null, isUpper: 2, isLower: null, tisLower: null, rs: [c] }, option);
      const valid = Array.from(keep).filter((_, i) => x.mask[i]);
      expect(
        valid.some((v) => v === 0),
        `${option} rejects some`,
      ).toBe(true);
      expect(
        valid.some((v) => v === 1),
        `${option} keeps some`,
      ).toBe(true);
    }
    const four = (['token_k1', 'seq_mean_k3', 'seq_max_k2', 'seq_sum_k1'] as const).map((o) => criterion(x, o));
    await check(x, { isLevel: 'sequence', isUpper: 2, isLower: null, tisLower: 0.5, rs: four }, 'four criteria with sequence IS');
  });

  it('edges: an all-masked batch, one token, equal policies; no NaN', async () => {
    const be = await makeBackend();
    const B = 3,
      A = 4;
    const empty: Batch = { old: new Float64Array(B * A).fill(Number.NaN), rollout: new Float64Array(B * A), mask: new Float64Array(B * A), B, A };
    const all = ROLLOUT_RS_OPTIONS.slice(0, 4).map((o) => ({ option: o, lower: rsIsK1(o) ? 0.5 : null, upper: 2 }));
    const { keep } = await check(empty, { isLevel: 'sequence', isUpper: 2, isLower: 0.5, tisLower: null, rs: all }, 'all masked');
    expect(Array.from(keep).every((v) => v === 0)).toBe(true);
    // one token per row, equal policies: every weight 1, every criterion passes
    const one: Batch = { old: f32(randn(rng(5), B * A).map((v) => -Math.abs(v))), rollout: new Float64Array(B * A), mask: new Float64Array(B * A), B, A };
    for (let b = 0; b < B; b++) one.mask[b * A] = 1;
    one.rollout = Float64Array.from(one.old);
    for (const level of ['token', 'sequence'] as const) {
      const p = {
        isLevel: level,
        isUpper: 2,
        isLower: null,
        tisLower: null,
        rs: ROLLOUT_RS_OPTIONS.slice(7).map((o) => ({ option: o, lower: rsIsK1(o) ? 0.5 : null, upper: 1e-3 })),
      };
      const out = rolloutCorrection(be, {
        oldLogprobs: be.tensor(one.old, [B, A]),
        rolloutLogprobs: be.tensor(one.rollout, [B, A]),
        actionMask: be.tensor(one.mask, [B, A]),
        params: p,
      });
      const [w, k] = await be.readMany([out.weights as NonNullable<typeof out.weights>, out.keep]);
      expect(Array.from(w)).toEqual(Array.from(one.mask));
      expect(Array.from(k)).toEqual(Array.from(one.mask));
    }
    // invalid parameters are refused with the knob named
    const t = be.tensor(one.old, [B, A]);
    expect(() =>
      rolloutCorrection(be, { oldLogprobs: t, rolloutLogprobs: t, actionMask: t, params: { isLevel: 'token', isUpper: 2, isLower: 3, tisLower: null, rs: [] } }),
    ).toThrow(/IcePop lower bound 3 exceeds/);
    expect(() =>
      rolloutCorrection(be, {
        oldLogprobs: t,
        rolloutLogprobs: t,
        actionMask: t,
        params: { isLevel: 'token', isUpper: 2, isLower: null, tisLower: null, rs: [{ option: 'seq_max_k2', lower: 0.5, upper: 2 }] },
      }),
    ).toThrow(/upper bound only/);
    expect(() =>
      rolloutCorrection(be, { oldLogprobs: t, rolloutLogprobs: t, actionMask: t, params: { isLevel: 'token', isUpper: 0, isLower: null, tisLower: null, rs: [] } }),
    ).toThrow(/rollout_is_threshold/);
  });
});
