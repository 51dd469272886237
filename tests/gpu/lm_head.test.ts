// lmHeadLogprobs, lmHeadLogprobsBackward and lmHeadLogits on both backends against the float64
// references (src/reference/nn/chunkedLogprobs.ts over the whole head, so the row parts and the
// blocks are checked too) on fresh random inputs: a head split into unequal parts, forced small
// blocks (rows and vocabulary), temperature, with and without an entropy gradient, a trainable
// head's accumulated gradient, extreme logits; and the refusals.
//
// Tolerances (f32 against float64): logprobs, entropy and lse |Δ| ≤ 2e-5 + 1e-5·|ref| (a logit is
// a D-term f32 dot product, |x| ≲ 10 here, and the online softmax adds a few ulps of the log-sum per
// block); gradients |Δ| ≤ 1e-5 + 1e-4·|ref| (sums over V terms of products of two such errors).
// Extreme logits (|z| up to 1.3e5): logprobs and entropy relative 1e-6 of |z| (f32 resolves
// differences of large logits to their ulp). Each bound is ≥ 10× the largest error seen over many seeds.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { lmHeadLogits, lmHeadLogprobs, lmHeadLogprobsBackward } from '../../src/ops/lmHead.ts';
import { chunkedLogprobsBackwardRef, chunkedLogprobsRef } from '../../src/reference/nn/chunkedLogprobs.ts';
import { matmulRef } from '../../src/reference/nn/matmul.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const VAL = { rtol: 1e-5, atol: 2e-5 } as const;
const GRAD = { rtol: 1e-4, atol: 1e-5 } as const;

interface Case {
  N: number;
  D: number;
  parts: number[];
  T: number;
  chunks?: { tokenChunk?: number; vocabChunk?: number };
  withEntropy: boolean;
}

/** Splits a (V, D) head into row parts of the given sizes. */
function split(head: Float64Array, D: number, rows: number[]): Float64Array[] {
  let at = 0;
  return rows.map((r) => {
    const p = head.subarray(at * D, (at + r) * D);
    at += r;
    return p;
  });
}

async function run(
  be: Backend,
  c: Case,
  hidden: Float64Array,
  head: Float64Array,
  tokens: number[],
  gradLogp: Float64Array,
  gradEnt: Float64Array | null,
  gradHeadInit: Float64Array,
) {
  const { N, D, parts: rows, T } = c;
  const V = rows.reduce((a, b) => a + b, 0);
  const headParts = split(head, D, rows).map((p, i) => be.tensor(p, [rows[i], D]));
  const gradHead = split(gradHeadInit, D, rows).map((p, i) => be.tensor(p, [rows[i], D]));
  const args = { hidden: be.tensor(hidden, [N, D]), head: headParts, tokens: be.tensor(tokens, [N], 'i32'), temperature: T, chunks: c.chunks };
  const fwd = lmHeadLogprobs(be, args);
  const gradHidden = lmHeadLogprobsBackward(be, {
    ...args,
    saved: fwd.saved,
    gradLogprobs: be.tensor(gradLogp, [N]),
    gradEntropy: gradEnt ? be.tensor(gradEnt, [N]) : null,
    gradHead,
  });
  const [logprobs, entropy, saved, gh, ...gw] = await be.readMany([fwd.logprobs, fwd.entropy, fwd.saved, gradHidden, ...gradHead]);
  const lse = Float64Array.from({ length: N }, (_, n) => saved[4 * n] / T + saved[4 * n + 1]);
  const whole = { tokenChunk: N, vocabChunk: V };
  const ref = chunkedLogprobsRef(hidden, head, tokens, N, D, V, T, whole);
  const refGrad = chunkedLogprobsBackwardRef(hidden, head, tokens, ref, gradLogp, gradEnt, N, D, V, T, whole);
  const gradW = new Float64Array(V * D);
  let at = 0;
  for (const g of gw) {
    gradW.set(g, at);
    at += g.length;
  }
  return { logprobs, entropy, lse, gradHidden: gh, gradW, ref, refGrad: { gradHidden: refGrad.gradHidden, gradW: refGrad.gradHead.map((x, i) => x + gradHeadInit[i]) } };
}

const CASES: [string, Case][] = [
  ['three unequal parts, blocks of 8 rows × 32 columns, T 0.7', { N: 13, D: 48, parts: [128, 100, 72], T: 0.7, chunks: { tokenChunk: 8, vocabChunk: 32 }, withEntropy: true }],
  ['three unequal parts, default blocks, no entropy gradient', { N: 13, D: 48, parts: [128, 100, 72], T: 1, withEntropy: false }],
  ['one part of 1 000, width 64, blocks of 192 columns, T 1.3', { N: 9, D: 64, parts: [1000], T: 1.3, chunks: { vocabChunk: 192 }, withEntropy: true }],
  ['one row, one block', { N: 1, D: 16, parts: [40], T: 1, withEntropy: true }],
];

describe.each(BACKENDS)('lmHead on %s', (_name, makeBackend) => {
  it.each(CASES)('%s: forward and backward match the float64 reference over the whole head', async (_label, c) => {
    const be = await makeBackend();
    const r = rng(c.N * 7 + c.D + c.parts.length);
    const V = c.parts.reduce((a, b) => a + b, 0);
    const hidden = f32(randn(r, c.N * c.D));
    const head = f32(randn(r, V * c.D, 1 / Math.sqrt(c.D / 4))); // logits of std ~2
    const tokens = Array.from({ length: c.N }, () => r.int(0, V));
    tokens[0] = V - 1; // the last id of the last part
    const res = await run(be, c, hidden, head, tokens, f32(randn(r, c.N)), c.withEntropy ? f32(randn(r, c.N)) : null, f32(randn(r, V * c.D)));
    expectClose(res.logprobs, res.ref.logprobs, VAL.rtol, VAL.atol, 'logprobs');
    expectClose(res.entropy, res.ref.entropy, VAL.rtol, VAL.atol, 'entropy');
    expectClose(res.lse, res.ref.lse, VAL.rtol, VAL.atol, 'lse (m/T + logS)');
    expectClose(res.gradHidden, res.refGrad.gradHidden, GRAD.rtol, GRAD.atol, 'gradHidden');
    expectClose(res.gradW, res.refGrad.gradW, GRAD.rtol, GRAD.atol, 'gradHead (accumulated)');
  });

  it('extreme logits (~±1e4 at T = 0.05) stay finite and exact to f32 resolution', async () => {
    const be = await makeBackend();
    const r = rng(77);
    const N = 6,
      D = 64,
      rows = [96, 64];
    const V = 160;
    // Integer hidden states and head: every logit is an exact f32 integer (|x| ≤ 64·1 600 < 2^24).
    const hidden = Float64Array.from({ length: N * D }, () => r.int(-40, 41));
    const head = Float64Array.from({ length: V * D }, () => r.int(-40, 41));
    const logits = matmulRef(hidden, head, null, N, D, V, true);
    // Rows 0–2 score their argmax (p_tok = 1 to float64 precision), the rest a random token.
    const tokens = Array.from({ length: N }, (_, n) => {
      if (n >= 3) return r.int(0, V);
      let best = 0;
      for (let v = 1; v < V; v++) if (logits[n * V + v] > logits[n * V + best]) best = v;
      return best;
    });
    const c: Case = { N, D, parts: rows, T: 0.05, chunks: { vocabChunk: 32 }, withEntropy: true };
    const res = await run(be, c, hidden, head, tokens, f32(randn(r, N)), f32(randn(r, N)), new Float64Array(V * D));
    const zScale = Math.max(...Array.from(logits, Math.abs)) / 0.05;
    expect(zScale).toBeGreaterThan(5e4);
    expectClose(res.logprobs, res.ref.logprobs, 1e-6, 1e-6 * zScale, 'extreme logprobs');
    expectClose(res.entropy, res.ref.entropy, 1e-6, 1e-6 * zScale, 'extreme entropy');
    for (let n = 0; n < 3; n++) expect(res.logprobs[n]).toBeLessThanOrEqual(0);
    // A gradient entry is up to |W|/T = 800: f32 resolves it to ~1e-4 of that.
    expectClose(res.gradHidden, res.refGrad.gradHidden, 1e-3, 1e-6 * zScale, 'extreme gradHidden');
  });

  it('a confident row (1 − p_tok ≈ 5e-7) keeps its small gradient to 1e-3 relative, not f32 noise of 1 − p', async () => {
    const be = await makeBackend();
    const r = rng(78);
    const N = 2,
      D = 64,
      V = 160;
    // h = e_0 and W[:, 0] = the logits: exact. Row 0's token leads by ~20 nats, row 1's by ~10.
    const hidden = new Float64Array(N * D);
    hidden[0] = 1;
    hidden[D] = 0.5;
    const head = new Float64Array(V * D);
    for (let v = 0; v < V; v++) head[v * D] = f32([r.normal()])[0];
    head[7 * D] = 20;
    const c: Case = { N, D, parts: [100, 60], T: 1, withEntropy: false };
    const res = await run(be, c, hidden, head, [7, 7], Float64Array.from([1, -1]), null, new Float64Array(V * D));
    expect(Math.abs(res.refGrad.gradHidden[0])).toBeLessThan(1e-4); // the gradient is tiny …
    expect(Math.abs(res.refGrad.gradHidden[0])).toBeGreaterThan(1e-7); // … but not zero
    expectClose(res.gradHidden, res.refGrad.gradHidden, 1e-3, 1e-12, 'confident gradHidden');
    expectClose(res.gradW, res.refGrad.gradW, 1e-3, 1e-12, 'confident gradHead');
  });

  it('lmHeadLogits: (B, V) logits over the parts equal h·Wᵀ', async () => {
    const be = await makeBackend();
    const r = rng(3);
    const B = 5,
      D = 32,
      rows = [70, 64, 9];
    const V = 143;
    const hidden = f32(randn(r, B * D));
    const head = f32(randn(r, V * D));
    for (const parts of [rows, [V]]) {
      const logits = lmHeadLogits(be, { hidden: be.tensor(hidden, [B, D]), head: split(head, D, parts).map((p, i) => be.tensor(p, [parts[i], D])) });
      expect(logits.shape).toEqual([B, V]);
      expectClose(await be.read(logits), matmulRef(hidden, head, null, B, D, V, true), 1e-5, 1e-5, `logits over ${parts.length} part(s)`);
    }
  });

  it('refuses blocks that would misalign views, a part of another width and a bad temperature, naming them', async () => {
    const be = await makeBackend();
    const hidden = be.zeros([4, 48]);
    const tokens = be.zeros([4], 'i32');
    const head = [be.zeros([10, 48])];
    expect(() => lmHeadLogprobs(be, { hidden, head, tokens, temperature: 1, chunks: { vocabChunk: 6 } })).toThrow('chunks.vocabChunk must be a positive multiple of 4');
    expect(() => lmHeadLogprobs(be, { hidden, head: [...head, be.zeros([10, 32])], tokens, temperature: 1 })).toThrow('head[1]: expected (V_p, 48) with V_p ≥ 1, got [10, 32]');
    expect(() => lmHeadLogprobs(be, { hidden, head, tokens, temperature: 0 })).toThrow('temperature must be a finite number > 0, got 0');
    expect(() => lmHeadLogprobs(be, { hidden, head, tokens: be.zeros([4]), temperature: 1 })).toThrow('tokens: expected dtype i32, got f32');
  });
});
