// Each float64 reference backward in src/reference/nn/ against central finite differences of its
// forward: L = Σ gradOut ⊙ forward(inputs), dL/dθ ≈ (L(θ + h) − L(θ − h)) / 2h.
import { describe, expect, it } from 'vitest';
import { matmulBackwardRef, matmulRef } from '../../src/reference/nn/matmul.ts';
import { layerNormBackwardRef, layerNormRef } from '../../src/reference/nn/layernorm.ts';
import { geluBackwardRef, geluRef } from '../../src/reference/nn/gelu.ts';
import { embeddingBackwardRef, embeddingRef } from '../../src/reference/nn/embedding.ts';
import { gatherRowsRef, sliceSeqBackwardRef, sliceSeqRef } from '../../src/reference/nn/slice.ts';
import { adamwRef, clipScale, gradNormRef } from '../../src/reference/nn/optim.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const H = 1e-5;
// central differences are O(h²) ≈ 1e-10 accurate, plus round-off ≈ 1e-16/h
const FD = { rtol: 1e-6, atol: 1e-8 };

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** Numerical gradient of loss() wrt every element of x (x is perturbed in place and restored). */
function numericGrad(x: Float64Array, loss: () => number): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    x[i] = v + H;
    const up = loss();
    x[i] = v - H;
    const down = loss();
    x[i] = v;
    g[i] = (up - down) / (2 * H);
  }
  return g;
}

describe('matmul reference backward', () => {
  for (const transB of [false, true]) {
    it(`matches finite differences (transB=${transB}, M=4 K=5 N=3)`, () => {
      const r = rng(transB ? 11 : 12);
      const M = 4,
        K = 5,
        N = 3;
      const a = randn(r, M * K),
        b = randn(r, K * N),
        bias = randn(r, N),
        g = randn(r, M * N);
      const loss = () => dot(g, matmulRef(a, b, bias, M, K, N, transB));
      const an = matmulBackwardRef(g, a, b, M, K, N, transB);
      expectClose(an.gradA, numericGrad(a, loss), FD.rtol, FD.atol, 'gradA');
      expectClose(an.gradB, numericGrad(b, loss), FD.rtol, FD.atol, 'gradB');
      expectClose(an.gradBias, numericGrad(bias, loss), FD.rtol, FD.atol, 'gradBias');
    });
  }

  it('transB=true is the product with the transposed matrix', () => {
    const r = rng(13);
    const M = 3,
      K = 4,
      N = 2;
    const a = randn(r, M * K),
      bt = randn(r, N * K);
    const b = new Float64Array(K * N);
    for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) b[k * N + n] = bt[n * K + k];
    expectClose(matmulRef(a, bt, null, M, K, N, true), matmulRef(a, b, null, M, K, N, false), 1e-14, 1e-14, 'a·btᵀ');
  });
});

describe('layerNorm reference backward', () => {
  it('matches finite differences for x, gamma and beta (M=3, D=6)', () => {
    const r = rng(21);
    const M = 3,
      D = 6,
      eps = 1e-5;
    const x = randn(r, M * D, 2),
      gamma = randn(r, D),
      beta = randn(r, D),
      g = randn(r, M * D);
    const loss = () => dot(g, layerNormRef(x, gamma, beta, M, D, eps).y);
    const f = layerNormRef(x, gamma, beta, M, D, eps);
    const an = layerNormBackwardRef(g, x, gamma, f.mean, f.rstd, M, D);
    expectClose(an.gradX, numericGrad(x, loss), FD.rtol, FD.atol, 'gradX');
    expectClose(an.gradGamma, numericGrad(gamma, loss), FD.rtol, FD.atol, 'gradGamma');
    expectClose(an.gradBeta, numericGrad(beta, loss), FD.rtol, FD.atol, 'gradBeta');
  });

  it('normalises each row to mean 0 and variance var/(var+eps)', () => {
    const D = 5;
    const x = [1, 2, 3, 4, 10];
    const { y, mean, rstd } = layerNormRef(x, new Float64Array(D).fill(1), new Float64Array(D), 1, D, 0);
    expect(mean[0]).toBeCloseTo(4, 14);
    expect(dot(y, y) / D).toBeCloseTo(1, 12);
    expect(rstd[0]).toBeCloseTo(1 / Math.sqrt(10), 14);
  });
});

describe('gelu reference', () => {
  it('derivative matches finite differences from −12 to 12', () => {
    const x = Float64Array.from({ length: 49 }, (_, i) => -12 + i * 0.5 + 0.013);
    const ones = new Float64Array(x.length).fill(1);
    const an = geluBackwardRef(ones, x);
    for (let i = 0; i < x.length; i++) {
      const num = (geluRef([x[i] + H])[0] - geluRef([x[i] - H])[0]) / (2 * H);
      expectClose([an[i]], [num], FD.rtol, FD.atol, `gelu'(${x[i]})`);
    }
  });

  it('equals the textbook tanh form and is finite at ±1e4', () => {
    for (const v of [-3, -0.5, 0, 0.7, 2.5]) {
      const t = Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3));
      expect(geluRef([v])[0]).toBeCloseTo(0.5 * v * (1 + t), 14);
    }
    const y = geluRef([1e4, -1e4]);
    const d = geluBackwardRef([1, 1], [1e4, -1e4]);
    expect(Array.from(y).map(Math.abs)).toEqual([1e4, 0]);
    expect(Array.from(d)).toEqual([1, 0]);
  });
});

describe('embedding reference backward', () => {
  it('matches finite differences; repeated tokens and clamped positions accumulate', () => {
    const r = rng(31);
    const V = 4,
      P = 3,
      D = 2;
    const tokens = [0, 3, 3, 1, 0, 2];
    const positions = [-1, 0, 1, 2, 5, 1]; // −1 → 0, 5 → P−1
    const wte = randn(r, V * D),
      wpe = randn(r, P * D),
      g = randn(r, tokens.length * D);
    const loss = () => dot(g, embeddingRef(tokens, positions, wte, wpe, V, P, D));
    const an = embeddingBackwardRef(g, tokens, positions, V, P, D);
    expectClose(an.gradWte, numericGrad(wte, loss), FD.rtol, FD.atol, 'gradWte');
    expectClose(an.gradWpe, numericGrad(wpe, loss), FD.rtol, FD.atol, 'gradWpe');
  });
});

describe('slice references', () => {
  it('sliceSeqBackward is the adjoint of sliceSeq: <slice(x), g> = <x, sliceᵀ(g)>', () => {
    const r = rng(41);
    const B = 3,
      S = 7,
      D = 2,
      start = 2,
      len = 4;
    const x = randn(r, B * S * D),
      g = randn(r, B * len * D);
    const lhs = dot(sliceSeqRef(x, B, S, D, start, len), g);
    const rhs = dot(x, sliceSeqBackwardRef(g, B, S, D, start, len));
    expect(Math.abs(lhs - rhs)).toBeLessThan(1e-12);
    expect(sliceSeqRef([0, 1, 2, 3, 4, 5], 2, 3, 1, 1, 2)).toEqual(Float64Array.of(1, 2, 4, 5));
  });

  it('gatherRows picks rows and zeros invalid indices', () => {
    expect(gatherRowsRef([1, 2, 3, 4, 5, 6], 3, 2, [2, 0, 3, -1])).toEqual(Float64Array.of(5, 6, 1, 2, 0, 0, 0, 0));
  });
});

describe('optimiser references', () => {
  it('gradNorm and clipScale', () => {
    expect(gradNormRef([3, 4])).toBe(5);
    expect(clipScale(10, 1)).toBeCloseTo(1 / (10 + 1e-6), 15);
    expect(clipScale(0.5, 1)).toBe(1);
    expect(clipScale(10, 0)).toBe(1);
    expect(clipScale(null, 1)).toBe(1);
  });

  it('the first AdamW step moves each weight by lr·(sign(g) + wd·mask·p) (bias correction)', () => {
    const p = Float64Array.of(1, -1, 2);
    const g = [0.3, -2, 5];
    const mask = [1, 0, 1];
    const m = new Float64Array(3),
      v = new Float64Array(3);
    adamwRef(p, g, m, v, mask, null, { lr: 0.1, beta1: 0.9, beta2: 0.99, eps: 0, weightDecay: 0.5, step: 1, maxGradNorm: 0 });
    expectClose(p, [1 - 0.1 * (1 + 0.5), -1 + 0.1 * 1, 2 - 0.1 * (1 + 1)], 1e-12, 1e-12, 'params');
    expectClose(m, [0.03, -0.2, 0.5], 1e-12, 1e-12, 'm');
  });

  it('clipping scales the gradient fed to the moments', () => {
    const p = Float64Array.of(0, 0),
      m = new Float64Array(2),
      v = new Float64Array(2);
    const g = [3, 4]; // norm 5 → scale 1/5 (up to 1e-6)
    adamwRef(p, g, m, v, [0, 0], gradNormRef(g), { lr: 1, beta1: 0.5, beta2: 0.5, eps: 0, weightDecay: 0, step: 1, maxGradNorm: 1 });
    expectClose(m, [0.5 * 0.6, 0.5 * 0.8], 1e-6, 0, 'm');
  });
});
