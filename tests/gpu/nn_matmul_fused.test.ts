// Fused dense layers on both backends against the float64 references:
// matmulGelu (pre = a·b + bias, act = gelu(pre), one dispatch) against matmulRef and geluRef, and
// matmulResidual (dense layer + fused residual add, residual + a·b + bias) against
// the float64 reference residual + matmulRef, and on WebGPU bit-for-bit against the unfused
// add(residual, matmul(a, b, bias)) it replaces in the model (same f32 operations in the same order).
import { describe, expect, it } from 'vitest';
import { geluRef } from '../../src/reference/nn/gelu.ts';
import { matmulRef } from '../../src/reference/nn/matmul.ts';
import { BACKENDS, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { add, gelu } from '../../src/ops/elementwise.ts';
import { matmul, matmulGelu, matmulResidual } from '../../src/ops/matmul.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));

function rms(x: ArrayLike<number>): number {
  let ss = 0;
  for (let i = 0; i < x.length; i++) ss += x[i] * x[i];
  return Math.sqrt(ss / Math.max(1, x.length));
}

const SHAPES: [number, number, number][] = [
  [1, 64, 192], // one decode row (B = 1) of c_attn at d 64
  [7, 13, 5], // smaller than one tile
  [70, 37, 66], // ragged tiles
];

describe.each(BACKENDS)('matmulResidual on %s', (_name, makeBackend) => {
  for (const [M, K, N] of SHAPES) {
    for (const transB of [false, true]) {
      for (const withBias of [true, false]) {
        it(`M=${M} K=${K} N=${N} transB=${transB} bias=${withBias}: residual + a·b (+ bias)`, async () => {
          const be = await makeBackend();
          const r = rng(M * 7919 + K * 31 + N + (transB ? 5 : 0) + (withBias ? 11 : 0));
          const a = f32(randn(r, M * K));
          const b = f32(randn(r, K * N));
          const bias = f32(randn(r, N));
          const out0 = f32(randn(r, M * N, 3));
          const res = be.tensor(out0, [M, N]);
          const out = matmulResidual(be, {
            a: be.tensor(a, [M, K]),
            b: be.tensor(b, transB ? [N, K] : [K, N]),
            bias: withBias ? be.tensor(bias, [N]) : null,
            transB,
            residual: res,
          });
          expect(out.shape).toEqual([M, N]);
          const y = matmulRef(a, b, withBias ? bias : null, M, K, N, transB);
          const expected = Float64Array.from(out0, (v, i) => v + y[i]);
          const [got, resAfter] = await be.readMany([out, res]);
          expect(Array.from(resAfter)).toEqual(Array.from(out0)); // the residual input is only read
          // f32 dot products: rtol 1e-5 element-wise plus 1e-5 × the product's RMS as absolute slack.
          expectClose(got, expected, 1e-5, Math.max(TOL.reduce.atol, 1e-5 * rms(y)), 'out');
        });
      }
    }
  }

  it('is exact where a·b is zero (zero a) and keeps huge and tiny residuals finite', async () => {
    const be = await makeBackend();
    const M = 4,
      K = 8,
      N = 6;
    const a = new Float64Array(M * K); // all zero: out must come back as out₀ + bias exactly
    const b = f32(randn(rng(3), K * N));
    const bias = f32(randn(rng(4), N));
    const out0 = Float64Array.from({ length: M * N }, (_, i) => (i % 2 ? 1e30 : -1e-30));
    const out = matmulResidual(be, { a: be.tensor(a, [M, K]), b: be.tensor(b, [K, N]), bias: be.tensor(bias, [N]), residual: be.tensor(out0, [M, N]) });
    const [got] = await be.readMany([out]);
    const expected = Float64Array.from(out0, (v, i) => Math.fround(v + bias[i % N]));
    expectClose(got, expected, 1e-7, 0, 'out');
    for (const v of got) expect(Number.isFinite(v)).toBe(true);
  });

  it('rejects a residual that is not the shape of a·b', async () => {
    const be = await makeBackend();
    const a = be.zeros([3, 4]);
    const b = be.zeros([4, 5]);
    expect(() => matmulResidual(be, { a, b, residual: be.zeros([3, 4]) })).toThrow(/matmulResidual residual/);
    expect(() => matmulResidual(be, { a, b, residual: be.zeros([5, 3]) })).toThrow(/matmulResidual residual/);
  });
});

describe('matmulResidual on webgpu equals the unfused add(out, matmul) bit for bit', () => {
  it('(64, 32)·(32, 96) + bias', async () => {
    const be = await webgpuBackend();
    const r = rng(77);
    const M = 64,
      K = 32,
      N = 96;
    const a = be.tensor(randn(r, M * K), [M, K]);
    const b = be.tensor(randn(r, K * N), [K, N]);
    const bias = be.tensor(randn(r, N), [N]);
    const x = be.tensor(randn(r, M * N), [M, N]);
    const proj = matmul(be, { a, b, bias });
    const unfused = add(be, { a: x, b: proj });
    const fused = matmulResidual(be, { a, b, bias, residual: x });
    const [u, f] = await be.readMany([unfused, fused]);
    expect(Array.from(f)).toEqual(Array.from(u));
  });
});

describe.each(BACKENDS)('matmulGelu on %s', (_name, makeBackend) => {
  for (const [M, K, N] of SHAPES) {
    for (const transB of [false, true]) {
      it(`M=${M} K=${K} N=${N} transB=${transB}: pre = a·b + bias, act = gelu(pre)`, async () => {
        const be = await makeBackend();
        const r = rng(M * 4001 + K * 17 + N + (transB ? 9 : 0));
        const a = f32(randn(r, M * K));
        const b = f32(randn(r, K * N));
        const bias = f32(randn(r, N));
        const { pre, act } = matmulGelu(be, { a: be.tensor(a, [M, K]), b: be.tensor(b, transB ? [N, K] : [K, N]), bias: be.tensor(bias, [N]), transB });
        expect(pre.shape).toEqual([M, N]);
        expect(act.shape).toEqual([M, N]);
        const [gotPre, gotAct] = await be.readMany([pre, act]);
        const y = matmulRef(a, b, bias, M, K, N, transB);
        const slack = Math.max(TOL.reduce.atol, 1e-5 * rms(y));
        expectClose(gotPre, y, 1e-5, slack, 'pre');
        // act against gelu of the backend's own pre (the f32 rounding of the dot product is pre's
        // test): element tolerance; and against gelu(reference) with pre's slack (|gelu'| ≤ 1.13).
        expectClose(gotAct, geluRef(gotPre), 1e-5, 1e-6, 'act vs gelu(pre)');
        expectClose(gotAct, geluRef(y), 1e-5, 1.2 * slack, 'act vs gelu(reference)');
      });
    }
  }

  it('saturates without NaN for extreme pre-activations (±1e4, ±40, 0) and no bias', async () => {
    const be = await makeBackend();
    const xs = [-1e4, -40, -5, -1e-3, 0, 1e-3, 5, 40, 1e4];
    const n = xs.length;
    // a = identity (n, n): pre = b exactly
    const eye = Float64Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0));
    const { pre, act } = matmulGelu(be, {
      a: be.tensor(eye, [n, n]),
      b: be.tensor(
        Float64Array.from({ length: n * n }, (_, i) => xs[i % n]),
        [n, n],
      ),
    });
    const [gotPre, gotAct] = await be.readMany([pre, act]);
    const want = geluRef(Float64Array.from({ length: n * n }, (_, i) => xs[i % n]));
    expectClose(
      gotPre,
      Float64Array.from({ length: n * n }, (_, i) => xs[i % n]),
      1e-7,
      0,
      'pre',
    );
    expectClose(gotAct, want, 1e-5, 1e-7, 'act');
    for (const v of gotAct) expect(Number.isFinite(v)).toBe(true);
  });
});

describe('matmulGelu on webgpu equals the unfused gelu(matmul) bit for bit', () => {
  it('(48, 64)·(64, 256) + bias', async () => {
    const be = await webgpuBackend();
    const r = rng(91);
    const M = 48,
      K = 64,
      N = 256;
    const a = be.tensor(randn(r, M * K), [M, K]);
    const b = be.tensor(randn(r, K * N), [K, N]);
    const bias = be.tensor(randn(r, N), [N]);
    const fc = matmul(be, { a, b, bias });
    const unfused = gelu(be, { x: fc });
    const { pre, act } = matmulGelu(be, { a, b, bias });
    const [f0, u0, f1, u1] = await be.readMany([pre, fc, act, unfused]);
    expect(Array.from(f0)).toEqual(Array.from(u0));
    expect(Array.from(f1)).toEqual(Array.from(u1));
  });
});
