// gelu, add, axpy, scale, fill on both backends against float64 loops / src/reference/nn/gelu.ts.
import { describe, expect, it } from 'vitest';
import { geluBackwardRef, geluRef } from '../../src/reference/nn/gelu.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));

describe.each(BACKENDS)('element-wise ops on %s', (_name, makeBackend) => {
  for (const n of [7, 1000]) {
    it(`gelu forward/backward on ${n} random values`, async () => {
      const be = await makeBackend();
      const r = rng(n);
      const x = f32(randn(r, n, 3));
      const gy = f32(randn(r, n));
      const tx = be.tensor(x, [n]);
      const [y, gx] = await be.readMany([be.nn.gelu(tx), be.nn.geluBackward(be.tensor(gy, [n]), tx)]);
      expectClose(y, geluRef(x), TOL.elem.rtol, TOL.elem.atol, 'gelu');
      expectClose(gx, geluBackwardRef(gy, x), TOL.elem.rtol, TOL.elem.atol, 'gelu grad');
    });
  }

  it('gelu at extreme inputs (±1e4, ±20, 0) is finite and exact', async () => {
    const be = await makeBackend();
    const x = [1e4, -1e4, 20, -20, 0, 1e-3, -5];
    const gy = [1, 1, 1, 1, 1, 1, 1];
    const tx = be.tensor(x, [7]);
    const [y, gx] = await be.readMany([be.nn.gelu(tx), be.nn.geluBackward(be.tensor(gy, [7]), tx)]);
    expectClose(y, geluRef(x), TOL.elem.rtol, TOL.elem.atol, 'gelu');
    expectClose(gx, geluBackwardRef(gy, x), TOL.elem.rtol, TOL.elem.atol, 'gelu grad');
    expect(y[0]).toBe(1e4);
    expect(y[1] === 0).toBe(true); // −0 allowed
  });

  it('add, axpy, scale, fill (f32 and i32), including views', async () => {
    const be = await makeBackend();
    const r = rng(5);
    const n = 300;
    const a = f32(randn(r, n));
    const b = f32(randn(r, n));
    const sum = await be.read(be.nn.add(be.tensor(a, [3, 100]), be.tensor(b, [3, 100])));
    expectClose(sum, a.map((v, i) => v + b[i]), TOL.elem.rtol, TOL.elem.atol, 'add');

    const flat = be.tensor(new Float64Array(64 + n).fill(9), [64 + n]);
    const y = be.view(flat, 64, [n]);
    be.write(y, b);
    be.nn.axpy(0.75, be.tensor(a, [n]), y);
    be.nn.scale(y, -2);
    const [ry, rflat] = await be.readMany([y, flat]);
    expectClose(ry, b.map((v, i) => -2 * (v + 0.75 * a[i])), TOL.elem.rtol, TOL.elem.atol, 'axpy then scale');
    expect(Array.from(rflat.slice(0, 64)).every((v) => v === 9)).toBe(true); // outside the view untouched

    be.nn.fill(y, 0);
    const ti = be.tensor([1, 2, 3], [3], 'i32');
    be.nn.fill(ti, -7);
    const [rz, ri] = await be.readMany([flat, ti]);
    expect(Array.from(rz.slice(64)).every((v) => v === 0)).toBe(true);
    expect(Array.from(rz.slice(0, 64)).every((v) => v === 9)).toBe(true);
    expect(Array.from(ri)).toEqual([-7, -7, -7]);
  });
});
