// The float64 references read their operands in memory order for speed (src/reference/nn/matmul.ts,
// gelu.ts). That is only allowed to change the time, never a bit: every output is compared here,
// bit for bit (Object.is: −0 too), with the plain loops the headers state — y[m][n] = bias[n] +
// Σ_k a[m][k]·b[k][n] summed in the order k = 0, 1, …; gradA over n, gradB and gradBias over m.
import { describe, expect, it } from 'vitest';
import { geluBackwardRef, geluRef } from '../../src/reference/nn/gelu.ts';
import { matmulBackwardRef, matmulRef } from '../../src/reference/nn/matmul.ts';
import { randn, rng } from '../helpers/random.ts';

function plainMatmul(a: Float64Array, b: Float64Array, bias: Float64Array | null, M: number, K: number, N: number, transB: boolean): Float64Array {
  const y = new Float64Array(M * N);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      let s = bias ? bias[n] : 0;
      for (let k = 0; k < K; k++) s += a[m * K + k] * (transB ? b[n * K + k] : b[k * N + n]);
      y[m * N + n] = s;
    }
  return y;
}

function plainMatmulBackward(g: Float64Array, a: Float64Array, b: Float64Array, M: number, K: number, N: number, transB: boolean) {
  const gradA = new Float64Array(M * K);
  const gradB = new Float64Array(K * N);
  const gradBias = new Float64Array(N);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      const gmn = g[m * N + n];
      gradBias[n] += gmn;
      for (let k = 0; k < K; k++) {
        gradA[m * K + k] += gmn * (transB ? b[n * K + k] : b[k * N + n]);
        gradB[transB ? n * K + k : k * N + n] += gmn * a[m * K + k];
      }
    }
  return { gradA, gradB, gradBias };
}

/** The index of the first element that differs in its bits, or −1. */
function firstBitDifference(x: Float64Array, y: Float64Array): number {
  if (x.length !== y.length) return 0;
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return i;
  return -1;
}

// (M, K, N): a single row, a single k, a single output column, and shapes past a few cache lines.
const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [1, 7, 5],
  [6, 1, 9],
  [5, 8, 1],
  [13, 37, 29],
  [8, 64, 192],
];

describe('the matmul reference reads in memory order and sums in the stated order', () => {
  it.each(SHAPES)('M %i, K %i, N %i: forward and backward equal the plain loops bit for bit, with and without bias and transB', (M, K, N) => {
    const r = rng(M * 1000 + K * 31 + N);
    // Mixed magnitudes make the order of a sum visible in its last bits.
    const a = randn(r, M * K).map((v, i) => (i % 3 === 0 ? v * 1e6 : v));
    const b = randn(r, K * N).map((v, i) => (i % 5 === 0 ? v * 1e-4 : v));
    const bias = randn(r, N);
    const g = randn(r, M * N).map((v, i) => (i % 4 === 0 ? -v * 1e5 : v));
    for (const transB of [false, true])
      for (const withBias of [false, true]) {
        const what = `transB ${transB}, bias ${withBias}`;
        expect(firstBitDifference(matmulRef(a, b, withBias ? bias : null, M, K, N, transB), plainMatmul(a, b, withBias ? bias : null, M, K, N, transB)), what).toBe(-1);
      }
    for (const transB of [false, true]) {
      const got = matmulBackwardRef(g, a, b, M, K, N, transB);
      const want = plainMatmulBackward(g, a, b, M, K, N, transB);
      for (const k of ['gradA', 'gradB', 'gradBias'] as const) expect(firstBitDifference(got[k], want[k]), `${k}, transB ${transB}`).toBe(-1);
    }
  });

  it('a product that rounds to −0 stays −0 without bias and becomes the bias with one', () => {
    const a = Float64Array.of(-1);
    const b = Float64Array.of(0);
    expect(Object.is(matmulRef(a, b, null, 1, 1, 1, false)[0], plainMatmul(a, b, null, 1, 1, 1, false)[0])).toBe(true);
    expect(matmulRef(a, b, Float64Array.of(2), 1, 1, 1, false)[0]).toBe(2);
  });
});

// gelu.ts's header, step by step: u = c(x + A x³), e = exp(−2|u|), s = sigmoid(2u) from e,
// s(1 − s) = e/(1 + e)², gelu = x·s, gelu' = s + 2x·s(1 − s)·c(1 + 3A x²) (s alone once s(1 − s) is 0).
const C = Math.sqrt(2 / Math.PI);
const A = 0.044715;
function statedGelu(x: number): [number, number] {
  const u = C * (x + A * x * x * x);
  const e = Math.exp(-2 * Math.abs(u));
  const s = u >= 0 ? 1 / (1 + e) : e / (1 + e);
  const s1s = e / ((1 + e) * (1 + e));
  return [x * s, s1s === 0 ? s : s + 2 * x * s1s * C * (1 + 3 * A * x * x)];
}

describe('the GELU reference in plain loops', () => {
  it("equals the header's formulas bit for bit, over the range where tanh saturates both ways", () => {
    const r = rng(77);
    const x = Float64Array.from({ length: 4000 }, (_, i) => (i < 2000 ? (i - 1000) / 50 : r.normal() * 3));
    const gy = randn(r, x.length);
    expect(
      firstBitDifference(
        geluRef(x),
        Float64Array.from(x, (v) => statedGelu(v)[0]),
      ),
    ).toBe(-1);
    expect(
      firstBitDifference(
        geluBackwardRef(gy, x),
        Float64Array.from(x, (v, i) => gy[i] * statedGelu(v)[1]),
      ),
    ).toBe(-1);
    for (const v of geluRef(x)) expect(Number.isFinite(v)).toBe(true);
  });
});
