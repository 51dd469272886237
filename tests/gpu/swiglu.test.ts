// swiglu / swigluBackward and the fused (M, 2F) gate|up forms on WebGPU and the float64 CPU
// backend against src/reference/nn/swiglu.ts, on fresh random inputs (TEST_SEED) and extreme gates.
// Tolerances per element, u = 2^-24, from WGSL's accuracy of exp ((3 + 2|g|) ulp) plus the
// quotient (2.5 ulp) and a few products, with |g| capped at 90 (beyond it e = exp(−|g|) is 0 or
// subnormal and no longer matters):
//   y, gradUp: (8 + 2|g|)·u of |silu(g)·u| (|gradY·silu(g)|);
//   gradGate: (10 + 3|g|)·u·|gradY·u|·σ·(1 + |g|(1 − σ)) — silu' crosses zero at g ≈ −1.28, so it
//             is judged by the size of its terms, not by its own;
//   plus 1e-30 absolute for the flushed subnormals of g < −87.
// Measured worst (SwiftShader, 2·10^5 gates from N(0, 4²)): 18u at |g| near 16, at most
// 3.7u·(1 + |g|) anywhere: exp's error does grow with |g|. The fused forms give the very bits of the
// separate ones.
import { expect, it } from 'vitest';
import { swiglu, swigluBackward, swigluFused, swigluFusedBackward } from '../../src/ops/swiglu.ts';
import { sigmoid, swigluBackwardRef, swigluRef } from '../../src/reference/nn/swiglu.ts';
import { describeVariants } from '../helpers/kernelVariants.ts';
import { randn, rng } from '../helpers/random.ts';
import { expectWithin, f32, U32 } from '../helpers/scaled.ts';

const EXTREME_GATES = [0, -0, 1e-3, -1e-3, 1.2784645, -1.2784645, 5, -5, 20, -20, 80, -80, 87.5, -87.5, 89, -89, 1e4, -1e4, 1e30, -1e30];

function tolerances(g: ArrayLike<number>, u: ArrayLike<number>, gy: ArrayLike<number>, isReference: boolean) {
  const n = g.length;
  const y = new Float64Array(n);
  const gate = new Float64Array(n);
  const up = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = Math.min(Math.abs(g[i]), 90);
    const s = sigmoid(g[i]);
    const silu = Math.abs(g[i] * s);
    const rel = (k: number) => (isReference ? 1e-12 : k * U32);
    y[i] = rel(8 + 2 * a) * silu * Math.abs(u[i]) + 1e-30;
    up[i] = rel(8 + 2 * a) * silu * Math.abs(gy[i]) + 1e-30;
    gate[i] = rel(10 + 3 * a) * Math.abs(gy[i] * u[i]) * s * (1 + Math.abs(g[i]) * (1 - s)) + 1e-30;
  }
  return { y, gate, up };
}

describeVariants('swiglu', (makeBackend, isReference) => {
  const sizes: [number, number][] = [
    [7, 13],
    [33, 384],
    [1, 1],
    [4, EXTREME_GATES.length],
  ];
  for (const [M, F] of sizes) {
    it(`M=${M} F=${F}: y, gradGate, gradUp match the reference; the fused gate|up form gives the same bits`, async () => {
      const be = await makeBackend();
      const r = rng(M * 977 + F);
      const g = f32(randn(r, M * F, 3));
      if (F === EXTREME_GATES.length)
        for (let m = 0; m < M; m++)
          g.set(
            EXTREME_GATES.map((v) => (m % 2 ? -v : v)),
            m * F,
          );
      const u = f32(randn(r, M * F));
      const gy = f32(randn(r, M * F));
      const gate = be.tensor(g, [M, F]);
      const up = be.tensor(u, [M, F]);
      const y = swiglu(be, { gate, up });
      const { gradGate, gradUp } = swigluBackward(be, { gradY: be.tensor(gy, [M, F]), gate, up });
      const gu = new Float64Array(M * 2 * F);
      for (let m = 0; m < M; m++) {
        gu.set(g.subarray(m * F, (m + 1) * F), m * 2 * F);
        gu.set(u.subarray(m * F, (m + 1) * F), m * 2 * F + F);
      }
      const gateUp = be.tensor(gu, [M, 2 * F]);
      const yFused = swigluFused(be, { gateUp });
      const gradFused = swigluFusedBackward(be, { gradY: be.tensor(gy, [M, F]), gateUp });
      expect(yFused.shape).toEqual([M, F]);
      expect(gradFused.shape).toEqual([M, 2 * F]);
      const [ry, rgg, rgu, ryf, rgf] = await be.readMany([y, gradGate, gradUp, yFused, gradFused]);
      const tol = tolerances(g, u, gy, isReference);
      const back = swigluBackwardRef(gy, g, u);
      expectWithin(ry, swigluRef(g, u), tol.y, 'y');
      expectWithin(rgg, back.gradGate, tol.gate, 'gradGate');
      expectWithin(rgu, back.gradUp, tol.up, 'gradUp');
      expect(Array.from(ryf)).toEqual(Array.from(ry));
      const joined = new Float64Array(M * 2 * F);
      for (let m = 0; m < M; m++) {
        joined.set(rgg.subarray(m * F, (m + 1) * F), m * 2 * F);
        joined.set(rgu.subarray(m * F, (m + 1) * F), m * 2 * F + F);
      }
      expect(Array.from(rgf)).toEqual(Array.from(joined));
    });
  }

  it('(B, S, F) activations keep their shape', async () => {
    const be = await makeBackend();
    const y = swiglu(be, { gate: be.tensor([1, 2, 3, 4, 5, 6], [1, 2, 3]), up: be.tensor([1, 1, 1, 1, 1, 1], [1, 2, 3]) });
    expect(y.shape).toEqual([1, 2, 3]);
    const yf = swigluFused(be, { gateUp: be.tensor([1, 2, 1, 1, 3, 4, 1, 1], [1, 2, 4]) });
    expect(yf.shape).toEqual([1, 2, 2]);
    expect(Array.from(await be.read(yf))).toEqual(Array.from(await be.read(swiglu(be, { gate: be.tensor([1, 2, 3, 4], [1, 2, 2]), up: be.tensor([1, 1, 1, 1], [1, 2, 2]) }))));
  });

  it('bad arguments are refused by name', async () => {
    const be = await makeBackend();
    const a = be.tensor(new Float64Array(6), [2, 3]);
    expect(() => swiglu(be, { gate: a, up: be.tensor(new Float64Array(6), [3, 2]) })).toThrow(/swiglu up: expected shape \[2, 3\]/);
    expect(() => swigluFused(be, { gateUp: a })).toThrow(/swigluFused gateUp: expected \(M, 2F\)/);
    expect(() => swigluFusedBackward(be, { gradY: a, gateUp: be.tensor(new Float64Array(8), [2, 4]) })).toThrow(/swigluFusedBackward gradY: expected shape \[2, 2\]/);
    expect(() => swigluBackward(be, { gradY: a, gate: a, up: be.tensor([1, 2, 3, 4, 5, 6], [2, 3], 'i32') })).toThrow(/swigluBackward up: expected dtype f32/);
  });
});
