// The float64 references the Hugging Face kernels will be tested against: RMSNorm, RoPE (incl. llama3
// frequencies), SwiGLU, grouped-query attention (and its KV-cached decode), and the chunked LM-head
// log-softmax/gather/entropy. Each backward against central finite differences of its forward
// (L = Σ gradOut ⊙ forward, dL/dθ ≈ (L(θ + h) − L(θ − h))/2h, h = 1e-5: O(h²) ≈ 1e-10 truncation plus
// ≈ 1e-11 round-off, so rtol 1e-6 / atol 1e-8 is tight); forwards against hand values and properties.
import { describe, expect, it } from 'vitest';
import { chunkedLogprobsBackwardRef, chunkedLogprobsRef } from '../../src/reference/nn/chunkedLogprobs.ts';
import { geluValue } from '../../src/reference/nn/gelu.ts';
import { matmulBackwardRef, matmulRef } from '../../src/reference/nn/matmul.ts';
import { rmsNormBackwardRef, rmsNormRef } from '../../src/reference/nn/rmsnorm.ts';
import { positionsFromMask, ropeBackwardRef, ropeInvFreq, ropeRef } from '../../src/reference/nn/rope.ts';
import { siluValue, swigluBackwardRef, swigluRef } from '../../src/reference/nn/swiglu.ts';
import { logprobsBackwardRef, logprobsRef } from '../../src/reference/logprobs.ts';
import { attentionRef } from '../../src/reference/seq/attention.ts';
import { gqaAttentionBackwardRef, gqaAttentionCachedRef, gqaAttentionRef, type GqaDims } from '../../src/reference/seq/gqa.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const H = 1e-5;
const FD = { rtol: 1e-6, atol: 1e-8 };

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

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

describe('RMSNorm reference', () => {
  it('hand values: x = [3, 4], w = [1, 2], eps 0 → x/√12.5 ⊙ w', () => {
    const { y, rstd } = rmsNormRef([3, 4], [1, 2], 1, 2, 0);
    expectClose(y, [3 / Math.sqrt(12.5), (2 * 4) / Math.sqrt(12.5)], 1e-15, 0, 'y');
    expect(rstd[0]).toBeCloseTo(1 / Math.sqrt(12.5), 15);
  });

  it('backward matches finite differences for x and w (M=4, D=7), and a per-head q_norm shape', () => {
    const r = rng(101);
    for (const [M, D, eps] of [
      [4, 7, 1e-6],
      [6, 4, 1e-5],
    ] as const) {
      const x = randn(r, M * D, 2);
      const w = randn(r, D, 1);
      const g = randn(r, M * D);
      const loss = () => dot(g, rmsNormRef(x, w, M, D, eps).y);
      const f = rmsNormRef(x, w, M, D, eps);
      const an = rmsNormBackwardRef(g, x, w, f.rstd, M, D);
      expectClose(an.gradX, numericGrad(x, loss), FD.rtol, FD.atol, 'gradX');
      expectClose(an.gradW, numericGrad(w, loss), FD.rtol, FD.atol, 'gradW');
    }
  });

  it('an all-zero row gives zeros (eps keeps it finite), no NaN', () => {
    const { y } = rmsNormRef(new Float64Array(5), [1, 1, 1, 1, 1], 1, 5, 1e-6);
    expect([...y]).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('RoPE reference', () => {
  it('inverse frequencies θ^(−2i/hd) and llama3 bands by hand', () => {
    expectClose(ropeInvFreq(4, 10000), [1, 0.01], 1e-15, 0, 'default');
    // L = 64, a = 1, b = 4: λ₀ = 2π < 16 keeps 1; λ₁ = 200π > 64 is divided by 8
    expectClose(ropeInvFreq(4, 10000, { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 64 }), [1, 0.01 / 8], 1e-15, 0, 'low band');
    // L = 1000: λ₁ = 200π ≈ 628.3 lies between 250 and 1000 → s = (1000/(200π) − 1)/3, (1 − s)·0.01/8 + s·0.01
    const s = (1000 / (200 * Math.PI) - 1) / 3;
    expectClose(
      ropeInvFreq(4, 10000, { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 1000 }),
      [1, ((1 - s) * 0.01) / 8 + s * 0.01],
      1e-15,
      0,
      'medium band',
    );
  });

  it('rotate_half pairs dims j and j + hd/2 (not interleaved): a hand rotation by 90°', () => {
    // hd = 4, inv = [π/2, tiny]: position 1 rotates (x0, x2) by 90° and leaves (x1, x3) almost unchanged
    const y = ropeRef([1, 2, 3, 4], [1], [Math.PI / 2, 0], 1);
    expectClose(y, [-3, 2, 1, 4], 0, 1e-15, 'y');
  });

  it('scores depend only on the relative position: ⟨rope(q, m), rope(k, n)⟩ = ⟨rope(q, m + c), rope(k, n + c)⟩', () => {
    const r = rng(102);
    const hd = 16;
    const inv = ropeInvFreq(hd, 10000, { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 32 });
    const q = randn(r, hd);
    const k = randn(r, hd);
    for (const [m, n, c] of [
      [5, 2, 7],
      [0, 9, 100],
      [31, 31, 3],
    ]) {
      const a = dot(ropeRef(q, [m], inv, 1), ropeRef(k, [n], inv, 1));
      const b = dot(ropeRef(q, [m + c], inv, 1), ropeRef(k, [n + c], inv, 1));
      expect(Math.abs(a - b)).toBeLessThan(1e-12);
    }
    // and it is a rotation: norms are kept
    expect(Math.abs(dot(ropeRef(q, [13], inv, 1), ropeRef(q, [13], inv, 1)) - dot(q, q))).toBeLessThan(1e-12);
  });

  it('backward matches finite differences (R=3 tokens, H=2 heads, hd=6)', () => {
    const r = rng(103);
    const H2 = 2;
    const inv = ropeInvFreq(6, 1e6);
    const pos = [0, 4, 11];
    const x = randn(r, 3 * H2 * 6);
    const g = randn(r, 3 * H2 * 6);
    const loss = () => dot(g, ropeRef(x, pos, inv, H2));
    expectClose(ropeBackwardRef(g, pos, inv, H2), numericGrad(x, loss), FD.rtol, FD.atol, 'gradX');
  });

  it('positions of left-padded rows: cumsum(mask) − 1, 0 on padding', () => {
    expect([...positionsFromMask([0, 0, 1, 1, 1, 1, 1, 1, 1, 1], 2, 5)]).toEqual([0, 0, 0, 1, 2, 0, 1, 2, 3, 4]);
  });
});

describe('SwiGLU and gelu_new references', () => {
  it('silu by hand and finite everywhere', () => {
    expect(siluValue(0)).toBe(0);
    expect(siluValue(1)).toBeCloseTo(1 / (1 + Math.exp(-1)), 15);
    expect(siluValue(-1000)).toBe(-0);
    expect(siluValue(1000)).toBe(1000);
    expect([...swigluRef([2, -3], [0.5, 4])]).toEqual([siluValue(2) * 0.5, siluValue(-3) * 4]);
  });

  it('backward matches finite differences for gate and up', () => {
    const r = rng(104);
    const gate = randn(r, 20, 3);
    const up = randn(r, 20);
    const g = randn(r, 20);
    const loss = () => dot(g, swigluRef(gate, up));
    const an = swigluBackwardRef(g, gate, up);
    expectClose(an.gradGate, numericGrad(gate, loss), FD.rtol, FD.atol, 'gradGate');
    expectClose(an.gradUp, numericGrad(up, loss), FD.rtol, FD.atol, 'gradUp');
  });

  it('the existing GELU is gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))', () => {
    for (const x of [-6, -2.5, -1, -0.1, 0, 0.3, 1, 2, 5]) {
      const hf = 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
      expect(Math.abs(geluValue(x) - hf)).toBeLessThan(1e-15 * Math.max(1, Math.abs(x)));
    }
  });
});

/** Left-padded mask (B, S) with row b having `lens[b]` real tokens at the end. */
function leftPadMask(B: number, S: number, lens: number[]): Float64Array {
  const m = new Float64Array(B * S);
  for (let b = 0; b < B; b++) for (let t = S - lens[b]; t < S; t++) m[b * S + t] = 1;
  return m;
}

describe('grouped-query attention reference', () => {
  const dimsOf = (B: number, S: number, nHead: number, nKvHead: number, headDim: number): GqaDims => ({ B, S, nHead, nKvHead, headDim, scale: 1 / Math.sqrt(headDim) });

  it('nKvHead = nHead equals the existing multi-head attention (fused qkv layout)', () => {
    const r = rng(105);
    const [B, S, Hh, hd] = [2, 5, 3, 4];
    const D = Hh * hd;
    const q = randn(r, B * S * D);
    const k = randn(r, B * S * D);
    const v = randn(r, B * S * D);
    const mask = leftPadMask(B, S, [5, 3]);
    const qkv = new Float64Array(B * S * 3 * D);
    for (let row = 0; row < B * S; row++) {
      qkv.set(q.subarray(row * D, (row + 1) * D), row * 3 * D);
      qkv.set(k.subarray(row * D, (row + 1) * D), row * 3 * D + D);
      qkv.set(v.subarray(row * D, (row + 1) * D), row * 3 * D + 2 * D);
    }
    const mha = attentionRef(qkv, mask, { B, S, H: Hh, D });
    const gqa = gqaAttentionRef(q, k, v, mask, dimsOf(B, S, Hh, Hh, hd));
    expectClose(gqa.out, mha.out, 1e-14, 1e-14, 'out');
    expectClose(gqa.probs, mha.probs, 1e-14, 1e-14, 'probs');
  });

  it('GQA equals MHA on k, v heads repeated per group (transformers’ repeat_kv)', () => {
    const r = rng(106);
    const [B, S, nH, nKv, hd] = [2, 4, 6, 2, 3];
    const q = randn(r, B * S * nH * hd);
    const k = randn(r, B * S * nKv * hd);
    const v = randn(r, B * S * nKv * hd);
    const g = nH / nKv;
    const rep = (x: Float64Array) => {
      const out = new Float64Array(B * S * nH * hd);
      for (let row = 0; row < B * S; row++)
        for (let h = 0; h < nH; h++) out.set(x.subarray((row * nKv + Math.floor(h / g)) * hd, (row * nKv + Math.floor(h / g) + 1) * hd), (row * nH + h) * hd);
      return out;
    };
    const mask = leftPadMask(B, S, [4, 2]);
    expectClose(gqaAttentionRef(q, k, v, mask, dimsOf(B, S, nH, nKv, hd)).out, gqaAttentionRef(q, rep(k), rep(v), mask, dimsOf(B, S, nH, nH, hd)).out, 1e-14, 1e-14, 'out');
  });

  it('backward matches finite differences for q, k and v (GQA 4/2, left padding, a row with padding first)', () => {
    const r = rng(107);
    const [B, S, nH, nKv, hd] = [2, 4, 4, 2, 3];
    const dims = dimsOf(B, S, nH, nKv, hd);
    const q = randn(r, B * S * nH * hd);
    const k = randn(r, B * S * nKv * hd);
    const v = randn(r, B * S * nKv * hd);
    const mask = leftPadMask(B, S, [4, 2]);
    const g = randn(r, B * S * nH * hd);
    const loss = () => dot(g, gqaAttentionRef(q, k, v, mask, dims).out);
    const f = gqaAttentionRef(q, k, v, mask, dims);
    const an = gqaAttentionBackwardRef(g, q, k, v, f.probs, dims);
    expectClose(an.gradQ, numericGrad(q, loss), FD.rtol, FD.atol, 'gradQ');
    expectClose(an.gradK, numericGrad(k, loss), FD.rtol, FD.atol, 'gradK');
    expectClose(an.gradV, numericGrad(v, loss), FD.rtol, FD.atol, 'gradV');
  });

  it('a query with no visible key outputs zeros; an all-masked row is zero everywhere; no NaN', () => {
    const r = rng(108);
    const [B, S, nH, nKv, hd] = [2, 3, 2, 1, 2];
    const mask = leftPadMask(B, S, [0, 1]);
    const f = gqaAttentionRef(randn(r, B * S * nH * hd), randn(r, B * S * nKv * hd), randn(r, B * S * nKv * hd), mask, dimsOf(B, S, nH, nKv, hd));
    expect(f.out.every((x) => Number.isFinite(x))).toBe(true);
    expect([...f.out.subarray(0, S * nH * hd)].every((x) => x === 0)).toBe(true); // row 0: all padding
    expect([...f.out.subarray(S * nH * hd, (S + 2) * nH * hd)].every((x) => x === 0)).toBe(true); // row 1's two padding queries
  });

  it('KV-cached prefill then one-token decode steps equal full attention over the whole sequence', () => {
    const r = rng(109);
    const [B, P, A, nH, nKv, hd] = [2, 3, 4, 4, 2, 3];
    const Smax = P + A;
    const q = randn(r, B * Smax * nH * hd);
    const k = randn(r, B * Smax * nKv * hd);
    const v = randn(r, B * Smax * nKv * hd);
    const mask = leftPadMask(B, Smax, [Smax, Smax - 1]);
    const full = gqaAttentionRef(q, k, v, mask, dimsOf(B, Smax, nH, nKv, hd)).out;
    const kCache = new Float64Array(B * Smax * nKv * hd);
    const vCache = new Float64Array(B * Smax * nKv * hd);
    const cols = (x: Float64Array, w: number, c0: number, n: number) => {
      const out = new Float64Array(B * n * w);
      for (let b = 0; b < B; b++) out.set(x.subarray((b * Smax + c0) * w, (b * Smax + c0 + n) * w), b * n * w);
      return out;
    };
    const cached = new Float64Array(B * Smax * nH * hd);
    const put = (o: Float64Array, c0: number, n: number) => {
      for (let b = 0; b < B; b++) cached.set(o.subarray(b * n * nH * hd, (b + 1) * n * nH * hd), (b * Smax + c0) * nH * hd);
    };
    const common = { B, Smax, nHead: nH, nKvHead: nKv, headDim: hd, scale: 1 / Math.sqrt(hd) };
    put(gqaAttentionCachedRef(cols(q, nH * hd, 0, P), cols(k, nKv * hd, 0, P), cols(v, nKv * hd, 0, P), kCache, vCache, mask, { ...common, L: P, start: 0 }), 0, P);
    for (let t = P; t < Smax; t++) {
      put(gqaAttentionCachedRef(cols(q, nH * hd, t, 1), cols(k, nKv * hd, t, 1), cols(v, nKv * hd, t, 1), kCache, vCache, mask, { ...common, L: 1, start: t }), t, 1);
    }
    expectClose(cached, full, 1e-13, 1e-14, 'cached vs full');
  });
});

describe('chunked LM head log-softmax, gather and entropy', () => {
  const N = 5;
  const D = 4;
  const V = 23;

  function unchunked(hidden: Float64Array, head: Float64Array, tokens: number[], T: number) {
    const logits = matmulRef(hidden, head, null, N, D, V, true);
    return { logits, ...logprobsRef(logits, tokens, 1, N, V, T) };
  }

  for (const [tokenChunk, vocabChunk] of [
    [1, 1],
    [2, 7],
    [3, 23],
    [5, 5],
    [8, 64],
  ]) {
    it(`equals the unchunked forward and backward (token chunk ${tokenChunk}, vocab chunk ${vocabChunk}, T = 0.7)`, () => {
      const r = rng(110 + tokenChunk * 100 + vocabChunk);
      const hidden = randn(r, N * D, 2);
      const head = randn(r, V * D, 2);
      const tokens = Array.from({ length: N }, () => r.int(0, V));
      const T = 0.7;
      const chunks = { tokenChunk, vocabChunk };
      const c = chunkedLogprobsRef(hidden, head, tokens, N, D, V, T, chunks);
      const u = unchunked(hidden, head, tokens, T);
      expectClose(c.logprobs, u.logprobs, 1e-12, 1e-12, 'logprobs');
      expectClose(c.entropy, u.entropy, 1e-12, 1e-12, 'entropy');
      const gl = randn(r, N);
      const ge = randn(r, N);
      const cb = chunkedLogprobsBackwardRef(hidden, head, tokens, c, gl, ge, N, D, V, T, chunks);
      const dLogits = logprobsBackwardRef(u.logits, tokens, 1, N, V, T, gl, ge);
      const mb = matmulBackwardRef(dLogits, hidden, head, N, D, V, true);
      expectClose(cb.gradHidden, mb.gradA, 1e-11, 1e-12, 'gradHidden');
      expectClose(cb.gradHead, mb.gradB, 1e-11, 1e-12, 'gradHead');
    });
  }

  it('backward matches finite differences of its own forward (hidden and head, with entropy)', () => {
    const r = rng(120);
    const [n, d, v] = [3, 3, 9];
    const hidden = randn(r, n * d);
    const head = randn(r, v * d);
    const tokens = [0, 8, 4];
    const chunks = { tokenChunk: 2, vocabChunk: 4 };
    const gl = randn(r, n);
    const ge = randn(r, n);
    const loss = () => {
      const f = chunkedLogprobsRef(hidden, head, tokens, n, d, v, 1.3, chunks);
      return dot(gl, f.logprobs) + dot(ge, f.entropy);
    };
    const f = chunkedLogprobsRef(hidden, head, tokens, n, d, v, 1.3, chunks);
    const an = chunkedLogprobsBackwardRef(hidden, head, tokens, f, gl, ge, n, d, v, 1.3, chunks);
    expectClose(an.gradHidden, numericGrad(hidden, loss), FD.rtol, FD.atol, 'gradHidden');
    expectClose(an.gradHead, numericGrad(head, loss), FD.rtol, FD.atol, 'gradHead');
  });

  it('extreme logits (±1e4 at T = 0.05) stay finite and equal the unchunked values', () => {
    const hidden = Float64Array.from([100, 0, 0, -100, 0, 0, 0, 100, 0, 0, 0, 0, 1, 1, 1, 1, -3, 2, 0, 5]);
    const head = new Float64Array(V * D);
    for (let i = 0; i < head.length; i++) head[i] = ((i * 7919) % 13) - 6;
    const tokens = [0, 22, 11, 3, 7];
    const c = chunkedLogprobsRef(hidden, head, tokens, N, D, V, 0.05, { tokenChunk: 2, vocabChunk: 5 });
    const u = unchunked(hidden, head, tokens, 0.05);
    expect(c.logprobs.every(Number.isFinite) && c.entropy.every(Number.isFinite)).toBe(true);
    expectClose(c.logprobs, u.logprobs, 1e-12, 1e-9, 'logprobs');
    expectClose(c.entropy, u.entropy, 1e-12, 1e-9, 'entropy');
  });
});
