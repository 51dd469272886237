// LayerNorm kernel selection: small rows run shaders/layernorm_rows.wgsl (one thread per row), wide
// or large tensors the per-row-workgroup layernorm.wgsl. Both paths, across the selection bounds
// (D ≤ 256 and M·D ≤ 2^18 pick the rows kernel), against the float64 reference on fresh random
// inputs, plus extreme ±1e4 rows; tolerance: reductions (TOL.reduce).
import { describe, expect, it } from 'vitest';
import { layerNormBackwardRef, layerNormRef } from '../../src/reference/nn/layernorm.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { axpy } from '../../src/ops/elementwise.ts';
import { layerNorm, layerNormBackward } from '../../src/ops/layerNorm.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));
const EPS = 1e-5;

async function check(M: number, D: number, scale: number, seed: number) {
  const be = await webgpuBackend();
  const r = rng(seed);
  const x = f32(randn(r, M * D, scale).map((v, i) => v + (i % 7) * scale));
  const gamma = f32(randn(r, D));
  const beta = f32(randn(r, D));
  const gy = f32(randn(r, M * D));
  const tx = be.tensor(x, [M, D]);
  const tgamma = be.tensor(gamma, [D]);
  const { y, mean, rstd } = layerNorm(be, { x: tx, gamma: tgamma, beta: be.tensor(beta, [D]), eps: EPS });
  const gGamma = be.zeros([D]);
  const gBeta = be.zeros([D]);
  const gx = layerNormBackward(be, { gradY: be.tensor(gy, [M, D]), x: tx, gamma: tgamma, mean, rstd, gradGamma: gGamma, gradBeta: gBeta });
  const [ry, rm, rr, rgx] = await be.readMany([y, mean, rstd, gx]);
  const ref = layerNormRef(x, gamma, beta, M, D, EPS);
  const bref = layerNormBackwardRef(gy, x, gamma, ref.mean, ref.rstd, M, D);
  for (const [name, got] of [
    ['y', ry],
    ['gradX', rgx],
  ] as const) {
    expect(got.every(Number.isFinite), `${name} finite`).toBe(true);
  }
  expectClose(rm, ref.mean, TOL.reduce.rtol, TOL.reduce.atol * scale, 'mean');
  expectClose(rr, ref.rstd, TOL.reduce.rtol, TOL.reduce.atol, 'rstd');
  expectClose(ry, ref.y, TOL.reduce.rtol, TOL.reduce.atol, 'y');
  expectClose(rgx, bref.gradX, TOL.reduce.rtol, TOL.reduce.atol, 'gradX');
  be.dispose(tx, tgamma, y, mean, rstd, gGamma, gBeta, gx);
}

describe('layerNorm kernel selection on webgpu', () => {
  // [M, D]: rows kernel with several workgroups and a ragged last one; the workgroup-per-row
  // kernel for D > 256 and for M·D > 2^18.
  for (const [M, D] of [
    [130, 64],
    [1, 256],
    [5, 300],
    [1025, 256],
  ] as const) {
    it(`M=${M} D=${D} matches the float64 reference`, { timeout: 60_000 }, async () => {
      await check(M, D, 1, M * 7 + D);
    });
  }

  it('±1e4 inputs on the rows kernel stay finite and match', async () => {
    await check(9, 32, 1e4, 5);
  });
});

// The backward's fused residual (`into`: gradX added to the residual stream's gradient in place)
// must give the bits of gradX followed by axpy(1, gradX, into), on both the rows kernel and the
// workgroup-per-row kernel; the parameter gradients take a one-thread-per-column kernel on CPU
// adapters (rt.cpuAdapter, true here on SwiftShader) and the tree kernel on GPUs: both against the
// float64 reference.
describe('layerNormBackward into the residual gradient on webgpu', () => {
  for (const [M, D] of [
    [37, 64],
    [3, 300],
  ] as const) {
    it(`M=${M} D=${D}: into = prior + gradX bit for bit; gamma/beta gradients from both column kernels`, async () => {
      const be = await webgpuBackend();
      const r = rng(M + D);
      const x = f32(randn(r, M * D, 2));
      const gamma = f32(randn(r, D));
      const gy = f32(randn(r, M * D));
      const prior = f32(randn(r, M * D));
      const tx = be.tensor(x, [M, D]);
      const tgamma = be.tensor(gamma, [D]);
      const tgy = be.tensor(gy, [M, D]);
      const { y, mean, rstd } = layerNorm(be, { x: tx, gamma: tgamma, beta: be.tensor(f32(randn(r, D)), [D]), eps: EPS });
      const run = async (cpu: boolean) => {
        const saved = be.rt.cpuAdapter;
        be.rt.cpuAdapter = cpu;
        try {
          const gG = be.zeros([D]);
          const gB = be.zeros([D]);
          const sep = layerNormBackward(be, { gradY: tgy, x: tx, gamma: tgamma, mean, rstd, gradGamma: gG, gradBeta: gB });
          const unfused = be.tensor(prior, [M, D]);
          axpy(be, { alpha: 1, x: sep, y: unfused });
          const fused = be.tensor(prior, [M, D]);
          expect(layerNormBackward(be, { gradY: tgy, x: tx, gamma: tgamma, mean, rstd, gradGamma: gG, gradBeta: gB, into: fused })).toBe(fused);
          return await be.readMany([unfused, fused, gG, gB]);
        } finally {
          be.rt.cpuAdapter = saved;
        }
      };
      const [rm, rr] = await be.readMany([mean, rstd]);
      const ref = layerNormBackwardRef(gy, x, gamma, rm, rr, M, D); // from the statistics the backend saved
      for (const cpu of [true, false]) {
        const [unfused, fused, gG, gB] = await run(cpu);
        expect(Array.from(fused)).toEqual(Array.from(unfused));
        expectClose(
          fused,
          ref.gradX.map((v, i) => v + prior[i]),
          TOL.reduce.rtol,
          TOL.reduce.atol,
          'prior + gradX',
        );
        // Two backward calls accumulated into the same parameter gradients.
        expectClose(
          gG,
          ref.gradGamma.map((v) => 2 * v),
          TOL.reduce.rtol,
          TOL.reduce.atol,
          `gradGamma (cpu adapter ${cpu})`,
        );
        expectClose(
          gB,
          ref.gradBeta.map((v) => 2 * v),
          TOL.reduce.rtol,
          TOL.reduce.atol,
          `gradBeta (cpu adapter ${cpu})`,
        );
      }
      be.dispose(tx, tgamma, tgy, y, mean, rstd);
    });
  }
});
