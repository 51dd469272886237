// aggregate: masked loss aggregation (every mode, both norm scales) and its weights, on both backends, against the
// float64 reference. Tolerances: value 1e-4 relative (a reduction), weights 1e-5 relative.
import { describe, expect, it } from 'vitest';
import { LOSS_AGGS } from '../../src/reference/aggregate.ts';
import { aggregateRef } from '../../src/reference/aggregate.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL } from '../helpers/random.ts';
import { aggregate } from '../../src/ops/aggregate.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));

describe.each(BACKENDS)('aggregate on %s', (_name, makeBackend) => {
  // 300 rows exercise the finalising workgroup's stride over B (> 256 threads); 3×7 is below one WG.
  const sizes: [number, number][] = [
    [3, 7],
    [300, 13],
  ];
  for (const [B, A] of sizes) {
    it.each(LOSS_AGGS)(`%s matches the reference at B=${B}, A=${A} with empty rows`, async (agg) => {
      const be = await makeBackend();
      const r = rng(B * 31 + A);
      const x = f32(randn(r, B * A, 3));
      const mask = rightPaddedMask(r, B, A, 1);
      for (let b = 0; b < B; b += 3) for (let a = 0; a < A; a++) mask[b * A + a] = 0; // all-masked rows
      const want = aggregateRef(x, mask, B, A, agg);
      const out = aggregate(be, { x: be.tensor(x, [B, A]), actionMask: be.tensor(mask, [B, A]), agg });
      const [value, weights] = await be.readMany([out.value, out.weights]);
      expect(out.value.shape).toEqual([1]);
      expectClose(value, [want.value], TOL.reduce.rtol, TOL.reduce.atol, `${agg} value`);
      expectClose(weights, want.weights, TOL.elem.rtol, TOL.elem.atol, `${agg} weights`);
      // the weights are ∂value/∂x: Σ w·x reproduces the value
      let dot = 0;
      for (let i = 0; i < B * A; i++) dot += weights[i] * x[i];
      expect(Math.abs(dot - value[0])).toBeLessThan(TOL.reduce.atol + TOL.reduce.rtol * Math.abs(want.value));
    });
  }

  it.each(LOSS_AGGS)('%s: hand-computed values on a 2×3 batch', async (agg) => {
    const be = await makeBackend();
    const x = [1, 2, 100, 4, 0, 0];
    const mask = [1, 1, 0, 1, 0, 0]; // row 0 has two tokens, row 1 one
    const expected = { 'token-mean': 7 / 3, 'seq-mean-token-mean': (1.5 + 4) / 2, 'seq-mean-token-sum': (3 + 4) / 2, 'seq-mean-token-sum-norm': 7 / 6 }[agg];
    const out = aggregate(be, { x: be.tensor(x, [2, 3]), actionMask: be.tensor(mask, [2, 3]), agg });
    const [value] = await be.readMany([out.value]);
    expectClose(value, [expected], TOL.reduce.rtol, TOL.reduce.atol, `${agg} hand value`);
  });

  it.each(LOSS_AGGS)('%s: masked positions holding NaN/Inf contribute nothing', async (agg) => {
    const be = await makeBackend();
    const B = 4,
      A = 5;
    const r = rng(7);
    const x = f32(randn(r, B * A));
    const mask = rightPaddedMask(r, B, A, 1);
    mask[A - 1] = 0;
    const dirty = Float64Array.from(x, (v, i) => (mask[i] ? v : i % 2 ? NaN : Infinity));
    const want = aggregateRef(x, mask, B, A, agg);
    const out = aggregate(be, { x: be.tensor(dirty, [B, A]), actionMask: be.tensor(mask, [B, A]), agg });
    const [value, weights] = await be.readMany([out.value, out.weights]);
    expectClose(value, [want.value], TOL.reduce.rtol, TOL.reduce.atol, `${agg} value`);
    expectClose(weights, want.weights, TOL.elem.rtol, TOL.elem.atol, `${agg} weights`);
  });

  it.each(LOSS_AGGS)('%s: everything masked gives 0 and zero weights; one token gives that token', async (agg) => {
    const be = await makeBackend();
    const B = 3,
      A = 4;
    const x = f32(randn(rng(9), B * A, 5));
    const none = aggregate(be, { x: be.tensor(x, [B, A]), actionMask: be.zeros([B, A]), agg });
    const [v0, w0] = await be.readMany([none.value, none.weights]);
    expect(Array.from(v0)).toEqual([0]);
    expect(Array.from(w0)).toEqual(new Array(B * A).fill(0));

    const one = new Float64Array(B * A);
    one[6] = 1;
    const single = aggregate(be, { x: be.tensor(x, [B, A]), actionMask: be.tensor(one, [B, A]), agg });
    const [v1, w1] = await be.readMany([single.value, single.weights]);
    const want = aggregateRef(x, one, B, A, agg);
    expect(want.value).not.toBe(0);
    expectClose(v1, [want.value], TOL.reduce.rtol, TOL.reduce.atol, `${agg} one-token value`);
    expectClose(w1, want.weights, TOL.elem.rtol, TOL.elem.atol, `${agg} one-token weights`);
  });

  it('seq-mean-token-sum-norm: normScale verl is Σ m·x / A (verl agg_loss), B× per_seq', async () => {
    const be = await makeBackend();
    const x = [1, 2, 100, 4, 0, 0];
    const mask = [1, 1, 0, 1, 0, 0];
    const verl = aggregate(be, { x: be.tensor(x, [2, 3]), actionMask: be.tensor(mask, [2, 3]), agg: 'seq-mean-token-sum-norm', normScale: 'verl' });
    const perSeq = aggregate(be, { x: be.tensor(x, [2, 3]), actionMask: be.tensor(mask, [2, 3]), agg: 'seq-mean-token-sum-norm', normScale: 'per_seq' });
    const [v, w, p] = await be.readMany([verl.value, verl.weights, perSeq.value]);
    expectClose(v, [7 / 3], TOL.reduce.rtol, TOL.reduce.atol, 'verl value');
    expectClose(w, [1 / 3, 1 / 3, 0, 1 / 3, 0, 0], TOL.elem.rtol, TOL.elem.atol, 'verl weights');
    expectClose(p, [7 / 6], TOL.reduce.rtol, TOL.reduce.atol, 'per_seq value');
    // random batch with empty rows against the reference
    const B = 37,
      A = 11;
    const r = rng(B * A + 5);
    const xr = f32(randn(r, B * A, 2));
    const mr = rightPaddedMask(r, B, A, 1);
    for (let a = 0; a < A; a++) mr[4 * A + a] = 0;
    const want = aggregateRef(xr, mr, B, A, 'seq-mean-token-sum-norm', 'verl');
    const out = aggregate(be, { x: be.tensor(xr, [B, A]), actionMask: be.tensor(mr, [B, A]), agg: 'seq-mean-token-sum-norm', normScale: 'verl' });
    const [vr, wr] = await be.readMany([out.value, out.weights]);
    expectClose(vr, [want.value], TOL.reduce.rtol, TOL.reduce.atol, 'random verl value');
    expectClose(wr, want.weights, TOL.elem.rtol, TOL.elem.atol, 'random verl weights');
  });

  it('rejects mismatched shapes', async () => {
    const be = await makeBackend();
    expect(() => aggregate(be, { x: be.zeros([2, 3]), actionMask: be.zeros([3, 2]), agg: 'token-mean' })).toThrow(/action_mask/);
  });
});
