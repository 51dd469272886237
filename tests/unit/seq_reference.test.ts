import { describe, expect, it } from 'vitest';
import { attentionBackwardRef, attentionCachedRef, attentionRef } from '../../src/reference/seq/attention.ts';
import { drawToken, keptProbabilities, sampleStepRef } from '../../src/reference/seq/sample.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

describe('attention reference (float64)', () => {
  it('backward matches central finite differences of Σ gradOut·out', () => {
    const r = rng(41);
    const B = 2,
      S = 5,
      H = 2,
      D = 6;
    const dims = { B, S, H, D };
    const qkv = randn(r, B * S * 3 * D);
    const mask = Float64Array.from({ length: B * S }, (_, e) => (e === 0 || e === 1 || e === S ? 0 : 1));
    const gradOut = randn(r, B * S * D);
    const loss = (x: Float64Array) => attentionRef(x, mask, dims).out.reduce((s, o, k) => s + o * gradOut[k], 0);
    const analytic = attentionBackwardRef(gradOut, qkv, attentionRef(qkv, mask, dims).probs, dims);
    // Central differences: truncation O(h²) ≈ 1e-10 plus round-off ≈ ε·|L|/h ≈ 1e-10, so the absolute
    // floor is 1e-8 (a per-element relative test alone fails on gradients near zero).
    const h = 1e-5;
    const numeric = new Float64Array(qkv.length);
    for (let k = 0; k < qkv.length; k++) {
      const plus = Float64Array.from(qkv),
        minus = Float64Array.from(qkv);
      plus[k] += h;
      minus[k] -= h;
      numeric[k] = (loss(plus) - loss(minus)) / (2 * h);
    }
    expectClose(analytic, numeric, 1e-6, 1e-8, 'attention gradient');
    // padding keys (b=0: j=0,1; b=1: j=0) get no k or v gradient
    for (const row of [0, 1, S]) for (let c = D; c < 3 * D; c++) expect(analytic[row * 3 * D + c]).toBe(0);
  });

  it('probability rows sum to 1 over visible keys and to 0 for queries that see none', () => {
    const r = rng(42);
    const B = 1,
      S = 6,
      H = 1,
      D = 4;
    const mask = Float64Array.from([0, 0, 1, 1, 0, 1]);
    const { probs, out } = attentionRef(randn(r, B * S * 3 * D), mask, { B, S, H, D });
    const sums = Array.from({ length: S }, (_, i) => probs.slice(i * S, i * S + S).reduce((a, b) => a + b, 0));
    expect(sums[0]).toBe(0);
    expect(sums[1]).toBe(0);
    for (let i = 2; i < S; i++) expect(sums[i]).toBeCloseTo(1, 12);
    expect(Array.from(out.slice(0, 2 * D))).toEqual(new Array(2 * D).fill(0));
    for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) expect(probs[i * S + j]).toBe(0);
  });

  it('cached reference over chunks equals the full reference', () => {
    const r = rng(43);
    const B = 2,
      S = 7,
      H = 2,
      D = 4;
    const qkv = randn(r, B * S * 3 * D);
    const mask = Float64Array.from({ length: B * S }, (_, e) => (e % S < (e < S ? 2 : 0) ? 0 : 1));
    const full = attentionRef(qkv, mask, { B, S, H, D }).out;
    const kC = new Float64Array(B * S * D),
      vC = new Float64Array(B * S * D);
    for (const [start, L] of [
      [0, 3],
      [3, 1],
      [4, 3],
    ]) {
      const chunk = new Float64Array(B * L * 3 * D);
      for (let b = 0; b < B; b++) chunk.set(qkv.subarray((b * S + start) * 3 * D, (b * S + start + L) * 3 * D), b * L * 3 * D);
      const out = attentionCachedRef(chunk, kC, vC, mask, { B, L, Smax: S, H, D, start });
      for (let b = 0; b < B; b++) {
        for (let k = 0; k < L * D; k++) expect(out[b * L * D + k]).toBeCloseTo(full[(b * S + start) * D + k], 12);
      }
    }
  });
});

describe('sampling reference', () => {
  const logits = [2, 1, 3, 1, 0]; // order: 2, 0, 1, 3 (tie: lower id first), 4

  it('top-k keeps the k largest with ties broken by the lower token id', () => {
    const p = keptProbabilities(logits, { temperature: 1, topK: 3, topP: 1 });
    expect(Array.from(p).map((x) => x > 0)).toEqual([true, true, true, false, false]);
    const z = Math.exp(2) + Math.exp(1) + Math.exp(3);
    expect(p[2]).toBeCloseTo(Math.exp(3) / z, 14);
  });

  it('top-p keeps the smallest prefix whose mass reaches p, at least one token', () => {
    const soft = logits.map(Math.exp);
    const total = soft.reduce((a, b) => a + b, 0);
    const p2 = soft[2] / total,
      p0 = soft[0] / total;
    // exactly the top token's mass: one token suffices
    expect(Array.from(keptProbabilities(logits, { temperature: 1, topK: 0, topP: p2 * 0.999 })).filter((x) => x > 0).length).toBe(1);
    // a bit more than the top token: two tokens
    const two = keptProbabilities(logits, { temperature: 1, topK: 0, topP: p2 + 0.5 * p0 });
    expect(Array.from(two).map((x) => x > 0)).toEqual([true, false, true, false, false]);
    expect(two[0] + two[2]).toBeCloseTo(1, 14);
    expect(Array.from(keptProbabilities(logits, { temperature: 1, topK: 0, topP: 1e-9 })).filter((x) => x > 0)).toEqual([1]);
  });

  it('temperature sharpens the distribution and drawToken inverts the CDF in token order', () => {
    const cold = keptProbabilities(logits, { temperature: 0.1, topK: 0, topP: 1 });
    expect(cold[2]).toBeGreaterThan(0.9999);
    const probs = [0.25, 0, 0.5, 0.25];
    expect(drawToken(probs, 0)).toBe(0);
    expect(drawToken(probs, 0.2499)).toBe(0);
    expect(drawToken(probs, 0.25)).toBe(2);
    expect(drawToken(probs, 0.7499)).toBe(2);
    expect(drawToken(probs, 0.75)).toBe(3);
    expect(drawToken(probs, 0.9999999)).toBe(3);
  });

  it('a histogram of sampleStepRef over many rows matches the probabilities', () => {
    const B = 20000,
      V = 5,
      S = 1;
    const all = new Float64Array(B * V);
    for (let b = 0; b < B; b++) all.set(logits, b * V);
    const seq = new Float64Array(B),
      mask = new Float64Array(B),
      pos = new Float64Array(B),
      fin = new Float64Array(B);
    const params = { temperature: 1.5, topK: 4, topP: 1, seed: rng(44).nextU32(), eosId: 9, padId: 8 };
    sampleStepRef(all, seq, mask, pos, fin, { B, V, S }, 0, params);
    const probs = keptProbabilities(logits, params);
    const counts = new Array(V).fill(0);
    for (const t of seq) counts[t]++;
    expect(counts[4]).toBe(0);
    let chi2 = 0;
    for (let v = 0; v < 4; v++) chi2 += (counts[v] - B * probs[v]) ** 2 / (B * probs[v]);
    expect(chi2).toBeLessThan(25); // 3 dof: P(chi² > 25) < 2e-5
  });
});
