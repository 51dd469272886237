// matmul forward/backward on both backends against the float64 reference (src/reference/nn/matmul.ts).
import { describe, expect, it } from 'vitest';
import { matmulBackwardRef, matmulRef } from '../../src/reference/nn/matmul.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { matmul, matmulBackward, matmulGelu, matmulResidual } from '../../src/ops/matmul.ts';

/** Round to float32 so both backends see the same inputs as the float64 reference. */
const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));
// A float32 sum of n products carries ~√n·6e-8 of the products' scale as absolute error, which is
// large relative to outputs that happen to be near zero. So: element-wise rtol (1e-5 forward,
// TOL.reduce 1e-4 for the gradients, whose sums run over M) plus an atol of rtol × the RMS of the
// reference output (its scale).
const FWD = { rtol: 1e-5, atol: 1e-5 };
function expectMatmulClose(actual: ArrayLike<number>, expected: Float64Array, rtol: number, what: string): void {
  let ss = 0;
  for (const v of expected) ss += v * v;
  const rms = Math.sqrt(ss / Math.max(1, expected.length));
  expectClose(actual, expected, rtol, Math.max(TOL.reduce.atol, rtol * rms), what);
}

const SHAPES: [number, number, number][] = [
  [7, 13, 5], // smaller than one tile in every dim
  [70, 37, 66], // several tiles, none a multiple of 16 or 64
  [260, 130, 200], // many K steps and a ragged last tile in every dim
];

describe.each(BACKENDS)('matmul on %s', (_name, makeBackend) => {
  for (const [M, K, N] of SHAPES) {
    for (const transB of [false, true]) {
      it(`forward M=${M} K=${K} N=${N} transB=${transB}, with and without bias`, async () => {
        const be = await makeBackend();
        const r = rng(M * 1000 + K * 10 + N + (transB ? 7 : 0));
        const a = f32(randn(r, M * K));
        const b = f32(randn(r, K * N));
        const bias = f32(randn(r, N));
        const ta = be.tensor(a, [M, K]);
        const tb = be.tensor(b, transB ? [N, K] : [K, N]);
        const tbias = be.tensor(bias, [N]);
        const y1 = matmul(be, { a: ta, b: tb, bias: tbias, transB });
        const y0 = matmul(be, { a: ta, b: tb, transB });
        expect(y1.shape).toEqual([M, N]);
        const [r1, r0] = await be.readMany([y1, y0]);
        expectMatmulClose(r1, matmulRef(a, b, bias, M, K, N, transB), FWD.rtol, 'y with bias');
        expectMatmulClose(r0, matmulRef(a, b, null, M, K, N, transB), FWD.rtol, 'y without bias');
      });

      it(`backward M=${M} K=${K} N=${N} transB=${transB} accumulates (twice → double)`, async () => {
        const be = await makeBackend();
        const r = rng(M * 999 + K * 11 + N + (transB ? 3 : 0));
        const a = f32(randn(r, M * K));
        const b = f32(randn(r, K * N));
        const g = f32(randn(r, M * N));
        const init = f32(randn(r, K * N)); // pre-existing gradB contents must be kept
        const ta = be.tensor(a, [M, K]);
        const bShape = transB ? [N, K] : [K, N];
        const tb = be.tensor(b, bShape);
        const tg = be.tensor(g, [M, N]);
        const gradB = be.tensor(init, bShape);
        const gradBias = be.zeros([N]);
        const gradA = matmulBackward(be, { gradOut: tg, a: ta, b: tb, transB, gradB, gradBias, needGradA: true });
        expect(gradA).not.toBeNull();
        const ref = matmulBackwardRef(g, a, b, M, K, N, transB);
        const [rA, rB1, rBias1] = await be.readMany([gradA!, gradB, gradBias]);
        expectMatmulClose(rA, ref.gradA, TOL.reduce.rtol, 'gradA');
        expectMatmulClose(
          rB1,
          ref.gradB.map((v, i) => v + init[i]),
          TOL.reduce.rtol,
          'gradB (once)',
        );
        expectMatmulClose(rBias1, ref.gradBias, TOL.reduce.rtol, 'gradBias (once)');

        expect(matmulBackward(be, { gradOut: tg, a: ta, b: tb, transB, gradB, gradBias, needGradA: false })).toBeNull();
        const [rB2, rBias2] = await be.readMany([gradB, gradBias]);
        expectMatmulClose(
          rB2,
          ref.gradB.map((v, i) => 2 * v + init[i]),
          TOL.reduce.rtol,
          'gradB (twice)',
        );
        expectMatmulClose(
          rBias2,
          ref.gradBias.map((v) => 2 * v),
          TOL.reduce.rtol,
          'gradBias (twice)',
        );
      });
    }
  }

  it('works on views into flat parameter and gradient buffers, leaving the rest untouched', async () => {
    const be = await makeBackend();
    const r = rng(42);
    const M = 9,
      K = 20,
      N = 11;
    const a = f32(randn(r, M * K));
    const w = f32(randn(r, K * N));
    const bias = f32(randn(r, N));
    const g = f32(randn(r, M * N));
    // params = [64 pad | w (K·N) | pad to 64 | bias], grads laid out the same way
    const wOff = 64,
      biasOff = 64 * Math.ceil((wOff + K * N) / 64);
    const total = biasOff + 64;
    const flat = new Float64Array(total).fill(0.5);
    flat.set(w, wOff);
    flat.set(bias, biasOff);
    const params = be.tensor(flat, [total]);
    const grads = be.zeros([total]);
    const tw = be.view(params, wOff, [K, N]);
    const tbias = be.view(params, biasOff, [N]);
    const tgw = be.view(grads, wOff, [K, N]);
    const tgbias = be.view(grads, biasOff, [N]);
    const ta = be.tensor(a, [3, 3, K]); // leading dims flatten into rows
    const y = matmul(be, { a: ta, b: tw, bias: tbias });
    expect(y.shape).toEqual([3, 3, N]);
    const gradA = matmulBackward(be, { gradOut: be.tensor(g, [3, 3, N]), a: ta, b: tw, gradB: tgw, gradBias: tgbias, needGradA: true })!;
    const [ry, rA, rgrads] = await be.readMany([y, gradA, grads]);
    expectClose(ry, matmulRef(a, w, bias, M, K, N, false), FWD.rtol, FWD.atol, 'y');
    const ref = matmulBackwardRef(g, a, w, M, K, N, false);
    expectClose(rA, ref.gradA, TOL.reduce.rtol, TOL.reduce.atol, 'gradA');
    const expected = new Float64Array(total);
    expected.set(ref.gradB, wOff);
    expected.set(ref.gradBias, biasOff);
    expectClose(rgrads, expected, TOL.reduce.rtol, TOL.reduce.atol, 'flat gradient buffer');
  });

  it('stays finite and exact-ish with extreme magnitudes (±1e4) and a length-1 inner dim', async () => {
    const be = await makeBackend();
    const M = 5,
      K = 1,
      N = 3;
    const a = [1e4, -1e4, 0, 1, -1];
    const b = [1e4, -2, 3e-4];
    const y = await be.read(matmul(be, { a: be.tensor(a, [M, K]), b: be.tensor(b, [K, N]) }));
    expectClose(y, matmulRef(a, b, null, M, K, N, false), 1e-6, 0, 'outer product');
  });
});

// The WebGPU backend picks an 8×8 or a 4×4 register block per invocation (shaders/matmul.wgsl):
// 8×8 on CPU adapters (SwiftShader here), 4×4 for small products on GPUs. Both must give the same
// bits (one accumulator per output, k in order, then the same epilogue), so flipping the adapter
// kind (rt.cpuAdapter) runs each on this machine; both are also held to the float64 reference.
describe('matmul block variants on webgpu', () => {
  const CASES: [number, number, number, boolean][] = [
    [1, 7, 1, false], // single output
    [9, 5, 3, true], // ragged in every dim, smaller than one block
    [33, 70, 66, false],
    [64, 17, 40, true],
  ];
  for (const [M, K, N, transB] of CASES) {
    it(`M=${M} K=${K} N=${N} transB=${transB}: forward (bias, residual, GELU) and backward are bit-identical across blocks`, async () => {
      const be = (await BACKENDS[0][1]()) as import('../../src/backend/webgpu/webgpuBackend.ts').WebGpuBackend;
      const r = rng(M * 31 + K * 7 + N);
      const a = f32(randn(r, M * K));
      const b = f32(randn(r, K * N));
      const bias = f32(randn(r, N));
      const res = f32(randn(r, M * N));
      const g = f32(randn(r, M * N));
      const init = f32(randn(r, K * N));
      const run = async (cpu: boolean) => {
        const saved = be.rt.cpuAdapter;
        be.rt.cpuAdapter = cpu;
        try {
          const ta = be.tensor(a, [M, K]);
          const tb = be.tensor(b, transB ? [N, K] : [K, N]);
          const y = matmulResidual(be, { a: ta, b: tb, bias: be.tensor(bias, [N]), transB, residual: be.tensor(res, [M, N]) });
          const { pre, act } = matmulGelu(be, { a: ta, b: tb, bias: be.tensor(bias, [N]), transB });
          const gradB = be.tensor(init, transB ? [N, K] : [K, N]);
          const gradA = matmulBackward(be, { gradOut: be.tensor(g, [M, N]), a: ta, b: tb, transB, gradB, needGradA: true })!;
          return await be.readMany([y, pre, act, gradA, gradB]);
        } finally {
          be.rt.cpuAdapter = saved;
        }
      };
      const big = await run(true);
      const small = await run(false);
      for (let i = 0; i < big.length; i++) expect(Array.from(small[i]), `output ${i}`).toEqual(Array.from(big[i]));
      const ref = matmulRef(a, b, bias, M, K, N, transB).map((v, i) => v + res[i]);
      expectMatmulClose(big[0], ref, FWD.rtol, 'residual + a·b + bias');
      const back = matmulBackwardRef(g, a, b, M, K, N, transB);
      expectMatmulClose(big[3], back.gradA, TOL.reduce.rtol, 'gradA');
      expectMatmulClose(
        big[4],
        back.gradB.map((v, i) => v + init[i]),
        TOL.reduce.rtol,
        'gradB',
      );
    });
  }
});
