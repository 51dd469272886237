// whiten: masked mean / Bessel-corrected variance over all action tokens, one-workgroup tree
// reduction on WebGPU, on both backends against the float64 reference (src/reference/whiten.ts).
// Tolerance: a reduction, so rtol 1e-4 with atol 1e-5 (TOL.reduce).
import { describe, expect, it } from 'vitest';
import { maskedMeanVar, whitenRef } from '../../src/reference/whiten.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL } from '../helpers/random.ts';
import { whiten } from '../../src/ops/whiten.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));
const { rtol, atol } = TOL.reduce;

describe.each(BACKENDS)('whiten on %s', (_name, makeBackend) => {
  // 3×5 leaves most of the 256 threads idle; 24×45 = 1080 makes each thread stride over 5 elements.
  const sizes: [number, number][] = [
    [3, 5],
    [24, 45],
  ];
  for (const [B, A] of sizes) {
    for (const shiftMean of [true, false]) {
      it(`matches the reference at B=${B}, A=${A}, shiftMean=${shiftMean}`, async () => {
        const be = await makeBackend();
        const r = rng(B * 10 + A + (shiftMean ? 1 : 0));
        const offset = r.uniform(-5, 5);
        const x = f32(randn(r, B * A, 2).map((v) => v + offset));
        const mask = rightPaddedMask(r, B, A, 0);
        mask[0] = 1; // at least two action tokens
        mask[A] = 1;
        const out = await be.read(whiten(be, { x: be.tensor(x, [B, A]), actionMask: be.tensor(mask, [B, A]), shiftMean }));
        expectClose(out, whitenRef(x, mask, shiftMean), rtol, atol, 'whitened');
        // Independent of the reference: over action tokens the result has mean 0 (or the old mean)
        // and unbiased variance var/(var + 1e-8) ≈ 1.
        const before = maskedMeanVar(x, mask);
        const after = maskedMeanVar(out, mask);
        expect(Math.abs(after.mean - (shiftMean ? 0 : before.mean))).toBeLessThan(1e-4 * (1 + Math.abs(before.mean)));
        expect(Math.abs(after.variance - 1)).toBeLessThan(1e-4);
      });
    }
  }

  it('a large common offset (mean 100, std 1) loses no precision: two-pass variance', async () => {
    const be = await makeBackend();
    const r = rng(99);
    const n = 700;
    const x = f32(randn(r, n).map((v) => v + 100));
    const mask = new Float64Array(n).fill(1);
    const out = await be.read(whiten(be, { x: be.tensor(x, [7, 100]), actionMask: be.tensor(mask, [7, 100]), shiftMean: true }));
    // The corrected two-pass mean keeps this at the element-wise float32 tolerance, not TOL.reduce.
    expectClose(out, whitenRef(x, mask, true), 1e-5, 1e-6, 'offset 100');
  });

  it('n = 0 (all masked): mean 0, var 0, out = x·rsqrt(1e-8)', async () => {
    const be = await makeBackend();
    const x = [1.5, -2, 0, 1e-3, 3, -4];
    const out = await be.read(whiten(be, { x: be.tensor(x, [2, 3]), actionMask: be.zeros([2, 3]), shiftMean: true }));
    expectClose(
      out,
      x.map((v) => v * 1e4),
      rtol,
      atol,
      'n=0',
    );
    const kept = await be.read(whiten(be, { x: be.tensor(x, [2, 3]), actionMask: be.zeros([2, 3]), shiftMean: false }));
    expectClose(
      kept,
      x.map((v) => v * 1e4),
      rtol,
      atol,
      'n=0 no shift',
    );
  });

  it('n = 1: var 0; the one action token maps to 0 (or to itself without the shift)', async () => {
    const be = await makeBackend();
    const x = [1.5, -2, 7, 1e-3, 3, -4];
    const mask = [0, 0, 1, 0, 0, 0];
    const t = () => ({ x: be.tensor(x, [2, 3]), actionMask: be.tensor(mask, [2, 3]) });
    const [out, kept] = await be.readMany([whiten(be, { ...t(), shiftMean: true }), whiten(be, { ...t(), shiftMean: false })]);
    expectClose(
      out,
      x.map((v) => (v - 7) * 1e4),
      rtol,
      atol,
      'n=1',
    );
    expectClose(
      kept,
      x.map((v) => (v - 7) * 1e4 + 7),
      rtol,
      atol,
      'n=1 no shift',
    );
    expect(out[2]).toBe(0);
  });

  it('n = 2: the two action tokens become ±1/√2', async () => {
    const be = await makeBackend();
    const x = [100, 3, -1, 42];
    const mask = [0, 1, 1, 0];
    const out = await be.read(whiten(be, { x: be.tensor(x, [1, 4]), actionMask: be.tensor(mask, [1, 4]), shiftMean: true }));
    // mean 1, var = ((2)² + (−2)²)/1 = 8, so (x − 1)/√(8 + 1e-8)
    const s = 1 / Math.sqrt(8 + 1e-8);
    expectClose(out, [99 * s, 2 * s, -2 * s, 41 * s], rtol, atol, 'n=2');
    expect(Math.abs(out[1] - Math.SQRT1_2)).toBeLessThan(1e-5);
  });

  it('extreme values ±1e4 stay finite and match', async () => {
    const be = await makeBackend();
    const x = [1e4, -1e4, 1e4, -1e4, 0, 5e3, -5e3, 1e4];
    const mask = [1, 1, 1, 1, 1, 1, 1, 0];
    const out = await be.read(whiten(be, { x: be.tensor(x, [2, 4]), actionMask: be.tensor(mask, [2, 4]), shiftMean: false }));
    expectClose(out, whitenRef(x, mask, false), rtol, atol, 'extremes');
  });
});
