// gqaAttentionCached on both backends: prefill then decode position by position equals one
// gqaAttention call over the whole sequences (the rollout's KV cache reproduces the training
// forward), decode steps against the float64 cached reference (src/reference/seq/gqa.ts) at
// SmolLM2's and Qwen3's head shapes, a cache longer than one 256-key chunk, and exact cache writes.
//
// Tolerances: against float64, |Δ| ≤ 2e-6 + 2e-5·|ref| (as gqa_attention.test.ts: a Dh-term f32
// score, a softmax and a weighted sum). Prefill against the full call: equal bit for bit (the same
// kernel on the same values). Decode against the full call: |Δ| ≤ 1e-6 + 1e-5·|ref| (two f32
// evaluations of one float64 quantity, each within a few ulps of it).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { gqaAttention } from '../../src/ops/gqaAttention.ts';
import { decodeOnFourThreads, gqaAttentionCached } from '../../src/ops/gqaAttentionCached.ts';
import { gqaAttentionCachedRef } from '../../src/reference/seq/gqa.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const REF = { rtol: 2e-5, atol: 2e-6 } as const;

/** Rows [lo, hi) of every sequence of a (B·S, C) matrix, as (B·(hi−lo), C). */
function rowsOf(x: Float64Array, B: number, S: number, C: number, lo: number, hi: number): Float64Array {
  const out = new Float64Array(B * (hi - lo) * C);
  for (let b = 0; b < B; b++) out.set(x.subarray((b * S + lo) * C, (b * S + hi) * C), b * (hi - lo) * C);
  return out;
}

interface Heads {
  H: number;
  Hkv: number;
  Dh: number;
}

/** One decode (or prefill) call from given caches, read back beside the float64 reference. */
async function cachedVsRef(be: Backend, heads: Heads, B: number, Smax: number, L: number, start: number, mask: Float64Array, r: ReturnType<typeof rng>, qScale = 1) {
  const { H, Hkv, Dh } = heads;
  const kvW = Hkv * Dh;
  const kInit = f32(randn(r, B * Smax * kvW));
  const vInit = f32(randn(r, B * Smax * kvW));
  const q = f32(randn(r, B * L * H * Dh, qScale));
  const k = f32(randn(r, B * L * kvW, qScale));
  const v = f32(randn(r, B * L * kvW));
  const kCache = be.tensor(kInit, [B, Smax, kvW]);
  const vCache = be.tensor(vInit, [B, Smax, kvW]);
  const out = gqaAttentionCached(be, {
    q: be.tensor(q, [B * L, H * Dh]),
    k: be.tensor(k, [B * L, kvW]),
    v: be.tensor(v, [B * L, kvW]),
    kCache,
    vCache,
    attnMask: be.tensor(mask, [B, Smax]),
    start,
    nHead: H,
    nKvHead: Hkv,
  });
  const [o, kc, vc] = await be.readMany([out, kCache, vCache]);
  const kRef = Float64Array.from(kInit);
  const vRef = Float64Array.from(vInit);
  const ref = gqaAttentionCachedRef(q, k, v, kRef, vRef, mask, { B, L, Smax, nHead: H, nKvHead: Hkv, headDim: Dh, scale: 1 / Math.sqrt(Dh), start });
  return { o, kc, vc, ref, kRef, vRef };
}

describe.each(BACKENDS)('gqaAttentionCached on %s', (_name, makeBackend) => {
  it.each([
    ['SmolLM2 heads 9/3, Dh 64', { H: 9, Hkv: 3, Dh: 64 }],
    ['Qwen3 head width 128, heads 4/2', { H: 4, Hkv: 2, Dh: 128 }],
  ] as [string, Heads][])('%s: prefill then decode position by position equals one gqaAttention call', async (_label, heads) => {
    const be = await makeBackend();
    const { H, Hkv, Dh } = heads;
    const r = rng(21 + Dh);
    const B = 3,
      Smax = 19,
      prompt = 6;
    const qW = H * Dh,
      kvW = Hkv * Dh;
    const q = f32(randn(r, B * Smax * qW));
    const k = f32(randn(r, B * Smax * kvW));
    const v = f32(randn(r, B * Smax * kvW));
    // Left-padded prompts (0–3 padding tokens); row 2 finishes early: PAD (mask 0) from position 15.
    const mask = new Float64Array(B * Smax);
    for (let b = 0; b < B; b++) for (let i = r.int(0, 4); i < Smax; i++) mask[b * Smax + i] = 1;
    mask.fill(0, 2 * Smax + 15, 3 * Smax);
    const tMask = be.tensor(mask, [B, Smax]);
    const kCache = be.zeros([B, Smax, kvW]);
    const vCache = be.zeros([B, Smax, kvW]);
    const step = (lo: number, hi: number) =>
      gqaAttentionCached(be, {
        q: be.tensor(rowsOf(q, B, Smax, qW, lo, hi), [B * (hi - lo), qW]),
        k: be.tensor(rowsOf(k, B, Smax, kvW, lo, hi), [B * (hi - lo), kvW]),
        v: be.tensor(rowsOf(v, B, Smax, kvW, lo, hi), [B * (hi - lo), kvW]),
        kCache,
        vCache,
        attnMask: tMask,
        start: lo,
        nHead: H,
        nKvHead: Hkv,
      });
    const chunks = [step(0, prompt)];
    for (let pos = prompt; pos < Smax; pos++) chunks.push(step(pos, pos + 1));
    const full = gqaAttention(be, {
      q: be.tensor(q, [B * Smax, qW]),
      k: be.tensor(k, [B * Smax, kvW]),
      v: be.tensor(v, [B * Smax, kvW]),
      attnMask: tMask,
      nHead: H,
      nKvHead: Hkv,
    }).out;
    const [fullOut, kc, vc, ...parts] = await be.readMany([full, kCache, vCache, ...chunks]);
    for (let b = 0; b < B; b++) {
      const prefill = parts[0].subarray(b * prompt * qW, (b + 1) * prompt * qW);
      expect(Array.from(prefill), `row ${b} prefill`).toEqual(Array.from(fullOut.subarray(b * Smax * qW, (b * Smax + prompt) * qW)));
      for (let pos = prompt; pos < Smax; pos++) {
        const at = (b * Smax + pos) * qW;
        expectClose(parts[pos - prompt + 1].subarray(b * qW, (b + 1) * qW), fullOut.subarray(at, at + qW), 1e-5, 1e-6, `row ${b} decode at ${pos}`);
      }
    }
    // The caches hold every position's k and v, exactly.
    expect(Array.from(kc)).toEqual(Array.from(k));
    expect(Array.from(vc)).toEqual(Array.from(v));
  });

  // Decode at the first, a middle and the last slot: only the new key visible (row 1), nothing
  // visible (row 2: output 0), holes (row 3), peaked rows (q, k scaled by 4).
  for (const start of [0, 5, 9]) {
    it(`decode step at position ${start} (heads 9/3, Dh 64): output and cache writes match the reference`, async () => {
      const be = await makeBackend();
      const r = rng(40 + start);
      const B = 4,
        Smax = 10;
      const mask = Float64Array.from({ length: B * Smax }, (_, e) => {
        const b = Math.floor(e / Smax),
          j = e % Smax;
        if (b === 1) return j === start ? 1 : 0;
        if (b === 2) return 0;
        return b === 3 && j % 3 === 1 ? 0 : 1;
      });
      const heads = { H: 9, Hkv: 3, Dh: 64 };
      const res = await cachedVsRef(be, heads, B, Smax, 1, start, mask, r, 2);
      expectClose(res.o, res.ref, REF.rtol, REF.atol, 'decode out');
      expect(Array.from(res.o.subarray(2 * 9 * 64, 3 * 9 * 64)).every((x) => x === 0)).toBe(true);
      expect(Array.from(res.kc)).toEqual(Array.from(res.kRef));
      expect(Array.from(res.vc)).toEqual(Array.from(res.vRef));
    });
  }

  it('a cache of 300 positions (two 256-key chunks): decode at 299 and a prefill chunk in the middle', async () => {
    const be = await makeBackend();
    const r = rng(300);
    const B = 2,
      Smax = 300;
    const mask = new Float64Array(B * Smax).fill(1);
    mask.fill(0, 0, 40); // row 0: 40 padding positions
    mask.fill(0, Smax + 250, Smax + 280); // row 1: a run of PAD inside the second chunk
    const heads = { H: 4, Hkv: 2, Dh: 32 };
    const decode = await cachedVsRef(be, heads, B, Smax, 1, Smax - 1, mask, r);
    expectClose(decode.o, decode.ref, REF.rtol, REF.atol, 'decode at 299');
    const prefill = await cachedVsRef(be, heads, B, Smax, 5, 260, mask, r);
    expectClose(prefill.o, prefill.ref, REF.rtol, REF.atol, 'prefill [260, 265)');
    expect(Array.from(prefill.kc)).toEqual(Array.from(prefill.kRef));
  });

  it('with the workgroups a GPU gets (64 threads a decode row, 16-row tiles): decode and prefill match the reference', async () => {
    const be = await makeBackend();
    if (!(be instanceof WebGpuBackend)) return;
    const r = rng(64);
    const B = 3,
      Smax = 40;
    const mask = new Float64Array(B * Smax).fill(1);
    mask.fill(0, Smax, Smax + 6); // row 1: 6 padding positions
    mask.fill(0, 2 * Smax, 3 * Smax); // row 2 sees nothing
    const saved = be.rt.cpuAdapter;
    be.rt.cpuAdapter = false;
    try {
      const heads = { H: 6, Hkv: 2, Dh: 16 };
      const decode = await cachedVsRef(be, heads, B, Smax, 1, 33, mask, r);
      expectClose(decode.o, decode.ref, REF.rtol, REF.atol, 'GPU decode');
      expect(Array.from(decode.kc)).toEqual(Array.from(decode.kRef));
      const prefill = await cachedVsRef(be, heads, B, Smax, 20, 3, mask, r);
      expectClose(prefill.o, prefill.ref, REF.rtol, REF.atol, 'GPU prefill');
    } finally {
      be.rt.cpuAdapter = saved;
    }
  });

  it('long caches at head width 128: the longest a CPU adapter decodes with 4 threads, and one past it', async () => {
    // On lavapipe (llvmpipe) an invocation's loops stop after 65 535 iterations in all: the 4-thread
    // decode must hand longer caches to the 64-thread one (decodeOnFourThreads) to stay right.
    const be = await makeBackend();
    const r = rng(128);
    const heads = { H: 4, Hkv: 2, Dh: 128 };
    let longest = 1;
    while (decodeOnFourThreads(longest + 1, heads.Dh)) longest++;
    for (const keys of [longest, 1500]) {
      const mask = new Float64Array(keys).fill(1);
      const res = await cachedVsRef(be, heads, 1, keys, 1, keys - 1, mask, r);
      expectClose(res.o, res.ref, REF.rtol, REF.atol, `decode over ${keys} keys`);
    }
  });

  it('refuses a chunk that runs past the cache and caches that do not match the heads', async () => {
    const be = await makeBackend();
    const z = (shape: number[]) => be.zeros(shape);
    const args = { q: z([2, 32]), k: z([2, 16]), v: z([2, 16]), kCache: z([1, 4, 16]), vCache: z([1, 4, 16]), attnMask: z([1, 4]), start: 3, nHead: 4, nKvHead: 2 };
    expect(() => gqaAttentionCached(be, args)).toThrow('gqaAttentionCached: positions [3, 5) outside the cache of 4');
    expect(() => gqaAttentionCached(be, { ...args, start: 0, kCache: z([1, 4, 24]), vCache: z([1, 4, 24]) })).toThrow('kCache: rows of 24 do not hold 2 kv heads of width 8');
  });
});
