// gelu, add, mul, axpy, scale, fill on both backends against float64 loops / src/reference/nn/gelu.ts
// and src/reference/nn/elementwise.ts.
import { describe, expect, it } from 'vitest';
import { geluBackwardRef, geluRef } from '../../src/reference/nn/gelu.ts';
import { mulRef } from '../../src/reference/nn/elementwise.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { add, axpy, fill, gelu, geluBackward, mul, scale } from '../../src/ops/elementwise.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));

describe.each(BACKENDS)('element-wise ops on %s', (_name, makeBackend) => {
  for (const n of [7, 1000]) {
    it(`gelu forward/backward on ${n} random values`, async () => {
      const be = await makeBackend();
      const r = rng(n);
      const x = f32(randn(r, n, 3));
      const gy = f32(randn(r, n));
      const tx = be.tensor(x, [n]);
      const [y, gx] = await be.readMany([gelu(be, { x: tx }), geluBackward(be, { gradY: be.tensor(gy, [n]), x: tx })]);
      expectClose(y, geluRef(x), TOL.elem.rtol, TOL.elem.atol, 'gelu');
      expectClose(gx, geluBackwardRef(gy, x), TOL.elem.rtol, TOL.elem.atol, 'gelu grad');
    });
  }

  it('gelu at extreme inputs (±1e4, ±20, 0) is finite and exact', async () => {
    const be = await makeBackend();
    const x = [1e4, -1e4, 20, -20, 0, 1e-3, -5];
    const gy = [1, 1, 1, 1, 1, 1, 1];
    const tx = be.tensor(x, [7]);
    const [y, gx] = await be.readMany([gelu(be, { x: tx }), geluBackward(be, { gradY: be.tensor(gy, [7]), x: tx })]);
    expectClose(y, geluRef(x), TOL.elem.rtol, TOL.elem.atol, 'gelu');
    expectClose(gx, geluBackwardRef(gy, x), TOL.elem.rtol, TOL.elem.atol, 'gelu grad');
    expect(y[0]).toBe(1e4);
    expect(y[1] === 0).toBe(true); // −0 allowed
  });

  for (const n of [1, 1000]) {
    it(`mul on ${n} random values matches the float64 reference, inputs untouched`, async () => {
      const be = await makeBackend();
      const r = rng(700 + n);
      const a = f32(randn(r, n, 3));
      const b = f32(randn(r, n));
      const ta = be.tensor(a, [n]);
      const tb = be.tensor(b, [n]);
      const [y, ra, rb] = await be.readMany([mul(be, { a: ta, b: tb }), ta, tb]);
      expectClose(y, mulRef(a, b), TOL.elem.rtol, TOL.elem.atol, 'mul');
      expect(Array.from(ra)).toEqual(Array.from(a));
      expect(Array.from(rb)).toEqual(Array.from(b));
    });
  }

  it('mul: zeros (a masked weight), extremes, a view operand, the shape kept; IEEE 0·∞ = NaN', async () => {
    const be = await makeBackend();
    const a = f32([0, 0, -0, 1e30, 1e-30, -3.5, 2, Infinity, 0]);
    const b = f32([5, -5, 7, 1e30, 1e-30, 2, -0.25, 2, Infinity]);
    const flat = be.tensor(new Float64Array(64 + 9).fill(4), [64 + 9]);
    const tb = be.view(flat, 64, [3, 3]);
    be.write(tb, b);
    const out = mul(be, { a: be.tensor(a, [3, 3]), b: tb });
    expect(out.shape).toEqual([3, 3]);
    const y = await be.read(out);
    const want = mulRef(a, b);
    // float32 overflows 1e30·1e30 to ∞ and underflows 1e-30·1e-30 to 0, float64 does not.
    if (be.kind === 'webgpu') [want[3], want[4]] = [Infinity, 0];
    expect(Array.from(y.slice(0, 8))).toEqual(Array.from(want.slice(0, 8)));
    expect(y[0] === 0 && y[1] === 0 && y[2] === 0).toBe(true);
    expect(Number.isNaN(y[8])).toBe(true);
  });

  it('mul rejects mismatched shapes and i32 operands, naming the argument, before computing', async () => {
    const be = await makeBackend();
    const a = be.tensor([1, 2, 3, 4], [2, 2]);
    expect(() => mul(be, { a, b: be.tensor([1, 2, 3, 4], [4]) })).toThrow(/mul b/);
    expect(() => mul(be, { a, b: be.tensor([1, 2, 3, 4], [2, 2], 'i32') })).toThrow(/mul b: expected dtype f32/);
    expect(() => mul(be, { a: be.tensor([1, 2], [2], 'i32'), b: be.tensor([1, 2], [2]) })).toThrow(/mul a: expected dtype f32/);
  });

  it('add, axpy, scale, fill (f32 and i32), including views', async () => {
    const be = await makeBackend();
    const r = rng(5);
    const n = 300;
    const a = f32(randn(r, n));
    const b = f32(randn(r, n));
    const sum = await be.read(add(be, { a: be.tensor(a, [3, 100]), b: be.tensor(b, [3, 100]) }));
    expectClose(
      sum,
      a.map((v, i) => v + b[i]),
      TOL.elem.rtol,
      TOL.elem.atol,
      'add',
    );

    const flat = be.tensor(new Float64Array(64 + n).fill(9), [64 + n]);
    const y = be.view(flat, 64, [n]);
    be.write(y, b);
    axpy(be, { alpha: 0.75, x: be.tensor(a, [n]), y });
    scale(be, { x: y, alpha: -2 });
    const [ry, rflat] = await be.readMany([y, flat]);
    expectClose(
      ry,
      b.map((v, i) => -2 * (v + 0.75 * a[i])),
      TOL.elem.rtol,
      TOL.elem.atol,
      'axpy then scale',
    );
    expect(Array.from(rflat.slice(0, 64)).every((v) => v === 9)).toBe(true); // outside the view untouched

    fill(be, { x: y, value: 0 });
    const ti = be.tensor([1, 2, 3], [3], 'i32');
    fill(be, { x: ti, value: -7 });
    const [rz, ri] = await be.readMany([flat, ti]);
    expect(Array.from(rz.slice(64)).every((v) => v === 0)).toBe(true);
    expect(Array.from(rz.slice(0, 64)).every((v) => v === 9)).toBe(true);
    expect(Array.from(ri)).toEqual([-7, -7, -7]);
  });
});
