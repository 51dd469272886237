// rmsNorm / rmsNormBackward on WebGPU (both kernel choices) and the float64 CPU backend against
// src/reference/nn/rmsnorm.ts, on fresh random inputs (TEST_SEED) and edge rows.
// Tolerances, element by element, in units of u = 2^-24 of the size of what was summed (D terms
// per row, M rows). A float32 sum of n random terms is off by about √n·u of the terms' sizes (the
// worst case (n−1)·u is never approached: measured 10.5u at D = 1024 where it would be 1023u), so
// the bounds are 2√n·u plus a few u for the products, inverseSqrt's 2 ulp and the quotient:
//   rstd: (2√D + 6)·u relative;  y: rstd's + 3u relative (two products);
//   gradX: (2√D + 8)·u·(|r·g·w| + |x|·r³·Σ_d|g·w·x|/D) — the dot product may cancel, so its error
//          is measured against the sum of its terms' sizes;
//   gradWeight: (2√M + 2√D + 10)·u·(Σ_rows|g·x·r| + |initial value|) — the M-term sum, the
//          rstd the forward computed (its error enters every term) and the accumulation.
// Measured worst over these sizes (SwiftShader): 12u for y (thread-per-row kernels, D = 576),
// 4.6u with the workgroup tree. The float64 backend computes the reference itself: 1e-12 there.
import { expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { rmsNorm, rmsNormBackward } from '../../src/ops/rmsNorm.ts';
import { rmsNormBackwardRef, rmsNormRef } from '../../src/reference/nn/rmsnorm.ts';
import { describeVariants } from '../helpers/kernelVariants.ts';
import { randn, rng } from '../helpers/random.ts';
import { expectWithin, f32, U32 } from '../helpers/scaled.ts';

interface Case {
  M: number; // normalised rows
  D: number;
  xs: Float64Array; // (M, D)
  w: Float64Array; // (D)
  gy: Float64Array; // (M, D)
  eps: number;
}

/** Runs forward and backward (gradWeight accumulated onto `gw0`, gradX into `into` when given) and checks both. */
async function checkCase(be: Backend, isReference: boolean, c: Case, shape: number[], opts: { into?: Float64Array; gw0?: Float64Array } = {}): Promise<void> {
  const { M, D, xs, w, gy, eps } = c;
  const x = be.tensor(xs, shape);
  const weight = be.tensor(w, [D]);
  const { y, rstd } = rmsNorm(be, { x, weight, eps });
  expect(y.shape).toEqual(shape);
  expect(rstd.shape).toEqual([M]);
  const gw0 = opts.gw0 ?? new Float64Array(D);
  const gradWeight = be.tensor(gw0, [D]);
  const into = opts.into ? be.tensor(opts.into, shape) : null;
  const gradX = rmsNormBackward(be, { gradY: be.tensor(gy, shape), x, weight, rstd, gradWeight, into });
  if (into) expect(gradX).toBe(into);
  const [ry, rr, rgx, rgw] = await be.readMany([y, rstd, gradX, gradWeight]);

  const ref = rmsNormRef(xs, w, M, D, eps);
  const back = rmsNormBackwardRef(gy, xs, w, ref.rstd, M, D);
  const rel = (n: number) => (isReference ? 1e-12 : n * U32); // float32 bounds on WebGPU
  const rootD = 2 * Math.sqrt(D);
  const rstdTol = rel(rootD + 6);
  expectWithin(
    rr,
    ref.rstd,
    ref.rstd.map((r) => rstdTol * r),
    'rstd',
  );
  expectWithin(
    ry,
    ref.y,
    ref.y.map((v) => (rstdTol + rel(3)) * Math.abs(v) + 1e-37),
    'y',
  );
  const gxTol = new Float64Array(M * D);
  for (let m = 0; m < M; m++) {
    const r = ref.rstd[m];
    let s = 0;
    for (let d = 0; d < D; d++) s += Math.abs(gy[m * D + d] * w[d] * xs[m * D + d]);
    for (let d = 0; d < D; d++) {
      const i = m * D + d;
      gxTol[i] = rel(rootD + 8) * (Math.abs(r * gy[i] * w[d]) + Math.abs(xs[i]) * ((r * r * r * s) / D)) + 1e-37;
    }
  }
  const wantGx = opts.into ? back.gradX.map((v, i) => v + opts.into![i]) : back.gradX;
  if (opts.into) for (let i = 0; i < gxTol.length; i++) gxTol[i] += rel(1) * Math.abs(wantGx[i]);
  expectWithin(rgx, wantGx, gxTol, opts.into ? 'into + gradX' : 'gradX');
  const gwTol = new Float64Array(D);
  for (let d = 0; d < D; d++) {
    let s = 0;
    for (let m = 0; m < M; m++) s += Math.abs(gy[m * D + d] * xs[m * D + d] * ref.rstd[m]);
    gwTol[d] = rel(2 * Math.sqrt(M) + rootD + 10) * (s + Math.abs(gw0[d])) + 1e-37; // + the kernel's rstd's error
  }
  expectWithin(
    rgw,
    back.gradW.map((v, d) => v + gw0[d]),
    gwTol,
    'gradWeight',
  );
}

function randomCase(salt: number, M: number, D: number, eps = 1e-6): Case {
  const r = rng(salt);
  return {
    M,
    D,
    xs: f32(randn(r, M * D).map((v, i) => v * (1 + (i % 7)))), // rows of different scales
    w: f32(randn(r, D, 0.3).map((v) => 1 + v)),
    gy: f32(randn(r, M * D)),
    eps,
  };
}

describeVariants('rmsNorm', (makeBackend, isReference) => {
  const sizes: [number, number][] = [
    [7, 13],
    [37, 96],
    [3, 576],
    [2, 1024],
    [600, 24], // more rows than one block of the weight gradient (256)
    [1, 1],
  ];
  for (const [M, D] of sizes) {
    it(`M=${M} D=${D}: y, rstd, gradX and the accumulated gradWeight match the reference`, async () => {
      const be = await makeBackend();
      const r = rng(M * 7919 + D);
      const c = randomCase(M * 7919 + D, M, D);
      await checkCase(be, isReference, c, [M, D], { gw0: f32(randn(r, D)) });
    });
  }

  it("Qwen3's q_norm: (R, H·Dh) with a weight of Dh normalises each head", async () => {
    const be = await makeBackend();
    const [R, H, Dh] = [5, 3, 16];
    const c = randomCase(31, R * H, Dh);
    await checkCase(be, isReference, c, [R, H * Dh]);
  });

  it('into: gradX is added into the residual gradient in place', async () => {
    const be = await makeBackend();
    const c = randomCase(41, 9, 40);
    await checkCase(be, isReference, c, [9, 40], { into: f32(randn(rng(42), 9 * 40)) });
  });

  it('a frozen weight (gradWeight null) still gives gradX', async () => {
    const be = await makeBackend();
    const c = randomCase(51, 4, 10);
    const x = be.tensor(c.xs, [4, 10]);
    const weight = be.tensor(c.w, [10]);
    const { rstd } = rmsNorm(be, { x, weight, eps: c.eps });
    const gradX = rmsNormBackward(be, { gradY: be.tensor(c.gy, [4, 10]), x, weight, rstd, gradWeight: null });
    const want = rmsNormBackwardRef(c.gy, c.xs, c.w, rmsNormRef(c.xs, c.w, 4, 10, c.eps).rstd, 4, 10).gradX;
    const got = await be.read(gradX);
    const tol = isReference ? 1e-12 : 2e-6; // |gradX| ~ 1 here; the sized bounds are checked above
    expectWithin(
      got,
      want,
      want.map((v) => tol * (Math.abs(v) + 1)),
      'gradX',
    );
  });

  it('edge rows: all zero (eps alone), ±1e4, tiny values where eps dominates, one huge entry', async () => {
    const be = await makeBackend();
    const D = 8;
    const rows = [
      [0, 0, 0, 0, 0, 0, 0, 0],
      [1e4, -1e4, 1e4, -1e4, 3e3, -2e3, 1e4, 5],
      [1e-4, -2e-4, 3e-4, 0, 1e-4, 1e-4, -1e-4, 2e-4], // mean(x²) ~ 2e-8 ≪ eps = 1e-6
      [0, 0, 0, 3e4, 0, 0, 0, 0],
    ];
    const xs = f32(rows.flat());
    const M = rows.length;
    const c: Case = { M, D, xs, w: f32(randn(rng(61), D).map((v) => 1 + 0.1 * v)), gy: f32(randn(rng(62), M * D)), eps: 1e-6 };
    await checkCase(be, isReference, c, [M, D]);
    const y = await be.read(rmsNorm(be, { x: be.tensor(xs, [M, D]), weight: be.tensor(c.w, [D]), eps: 1e-6 }).y);
    expect(Array.from(y.slice(0, D))).toEqual(new Array(D).fill(0)); // a zero row stays zero
  });

  it('bad arguments are refused by name', async () => {
    const be = await makeBackend();
    const x = be.tensor(new Float64Array(12), [2, 6]);
    expect(() => rmsNorm(be, { x, weight: be.tensor(new Float64Array(4), [4]), eps: 1e-6 })).toThrow(/rmsNorm x: its last dimension 6 is not a multiple of the weight's 4/);
    expect(() => rmsNorm(be, { x, weight: be.tensor(new Float64Array(6), [6]), eps: -1 })).toThrow(/rmsNorm eps/);
    expect(() => rmsNorm(be, { x: be.tensor([1, 2], [2], 'i32'), weight: be.tensor([1, 1], [2]), eps: 0 })).toThrow(/rmsNorm x: expected dtype f32/);
    const weight = be.tensor(new Float64Array(6), [6]);
    expect(() => rmsNormBackward(be, { gradY: x, x, weight, rstd: be.tensor(new Float64Array(3), [3]), gradWeight: null })).toThrow(/rmsNormBackward rstd: expected shape \[2\]/);
  });
});
