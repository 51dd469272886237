// layerNorm forward/backward on both backends against src/reference/nn/layernorm.ts.
import { describe, expect, it } from 'vitest';
import { layerNormBackwardRef, layerNormRef } from '../../src/reference/nn/layernorm.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { layerNorm, layerNormBackward } from '../../src/ops/layerNorm.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));
const EPS = 1e-5;

describe.each(BACKENDS)('layerNorm on %s', (_name, makeBackend) => {
  for (const [M, D] of [
    [7, 13],
    [37, 96],
    [3, 200],
  ] as const) {
    it(`forward and backward M=${M} D=${D}; parameter grads accumulate`, async () => {
      const be = await makeBackend();
      const r = rng(M * 1000 + D);
      const x = f32(randn(r, M * D, 3).map((v, i) => v + (i % 5))); // non-zero row means
      const gamma = f32(randn(r, D));
      const beta = f32(randn(r, D));
      const gy = f32(randn(r, M * D));
      const tx = be.tensor(x, [M, D]);
      const { y, mean, rstd } = layerNorm(be, { x: tx, gamma: be.tensor(gamma, [D]), beta: be.tensor(beta, [D]), eps: EPS });
      const ref = layerNormRef(x, gamma, beta, M, D, EPS);
      const [ry, rm, rr] = await be.readMany([y, mean, rstd]);
      // y involves a D-term mean and variance: reduction tolerance
      expectClose(rm, ref.mean, TOL.reduce.rtol, TOL.reduce.atol, 'mean');
      expectClose(rr, ref.rstd, TOL.reduce.rtol, TOL.reduce.atol, 'rstd');
      expectClose(ry, ref.y, TOL.reduce.rtol, TOL.reduce.atol, 'y');

      // backward from the saved statistics as the backend produced them
      const gGamma = be.zeros([D]);
      const gBeta = be.tensor(new Float64Array(D).fill(1), [D]);
      const tgamma = be.tensor(gamma, [D]);
      const gx = layerNormBackward(be, { gradY: be.tensor(gy, [M, D]), x: tx, gamma: tgamma, mean, rstd, gradGamma: gGamma, gradBeta: gBeta });
      const bref = layerNormBackwardRef(gy, x, gamma, ref.mean, ref.rstd, M, D);
      const [rgx, rgg, rgb] = await be.readMany([gx, gGamma, gBeta]);
      expectClose(rgx, bref.gradX, TOL.reduce.rtol, TOL.reduce.atol, 'gradX');
      expectClose(rgg, bref.gradGamma, TOL.reduce.rtol, TOL.reduce.atol, 'gradGamma');
      expectClose(
        rgb,
        bref.gradBeta.map((v) => v + 1),
        TOL.reduce.rtol,
        TOL.reduce.atol,
        'gradBeta (+1 initial)',
      );
      layerNormBackward(be, { gradY: be.tensor(gy, [M, D]), x: tx, gamma: tgamma, mean, rstd, gradGamma: gGamma, gradBeta: gBeta });
      const [rgg2] = await be.readMany([gGamma]);
      expectClose(
        rgg2,
        bref.gradGamma.map((v) => 2 * v),
        TOL.reduce.rtol,
        TOL.reduce.atol,
        'gradGamma twice',
      );
    });
  }

  it('constant rows (zero variance), D = 1 and ±1e4 inputs stay finite', async () => {
    const be = await makeBackend();
    const D = 4;
    const x = [5, 5, 5, 5, 1e4, -1e4, 1e4, -1e4];
    const gamma = [1, 2, 3, 4],
      beta = [0.5, 0, 0, -0.5];
    const { y, mean, rstd } = layerNorm(be, { x: be.tensor(x, [2, D]), gamma: be.tensor(gamma, [D]), beta: be.tensor(beta, [D]), eps: EPS });
    const ref = layerNormRef(x, gamma, beta, 2, D, EPS);
    const [ry, rm, rr] = await be.readMany([y, mean, rstd]);
    expectClose(rm, ref.mean, TOL.reduce.rtol, TOL.reduce.atol, 'mean');
    expectClose(rr, ref.rstd, TOL.reduce.rtol, TOL.reduce.atol, 'rstd');
    expectClose(ry, ref.y, TOL.reduce.rtol, TOL.reduce.atol, 'y');
    expect(Array.from(ry.slice(0, 4))).toEqual(beta); // x̂ = 0 exactly on a constant row

    const one = layerNorm(be, { x: be.tensor([3, -7], [2, 1]), gamma: be.tensor([2], [1]), beta: be.tensor([1], [1]), eps: EPS });
    expect(Array.from(await be.read(one.y))).toEqual([1, 1]);
  });

  it('works on gamma/beta and their gradients as views of flat buffers', async () => {
    const be = await makeBackend();
    const r = rng(9);
    const M = 5,
      D = 10;
    const x = f32(randn(r, M * D));
    const gy = f32(randn(r, M * D));
    const params = be.tensor(
      new Float64Array(192).fill(1).map((_, i) => (i >= 128 ? 0.25 : 1)),
      [192],
    );
    const grads = be.zeros([192]);
    const gamma = be.view(params, 64, [D]);
    const beta = be.view(params, 128, [D]);
    const tx = be.tensor(x, [M, D]);
    const out = layerNorm(be, { x: tx, gamma, beta, eps: EPS });
    layerNormBackward(be, { gradY: be.tensor(gy, [M, D]), x: tx, gamma, mean: out.mean, rstd: out.rstd, gradGamma: be.view(grads, 64, [D]), gradBeta: be.view(grads, 128, [D]) });
    const g = new Float64Array(D).fill(1);
    const ref = layerNormRef(x, g, new Float64Array(D).fill(0.25), M, D, EPS);
    const bref = layerNormBackwardRef(gy, x, g, ref.mean, ref.rstd, M, D);
    const [ry, rg] = await be.readMany([out.y, grads]);
    expectClose(ry, ref.y, TOL.reduce.rtol, TOL.reduce.atol, 'y');
    const expected = new Float64Array(192);
    expected.set(bref.gradGamma, 64);
    expected.set(bref.gradBeta, 128);
    expectClose(rg, expected, TOL.reduce.rtol, TOL.reduce.atol, 'flat grads');
  });
});
