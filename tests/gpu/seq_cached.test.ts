import { describe, expect, it } from 'vitest';
import { attentionCachedRef, attentionRef } from '../../src/reference/seq/attention.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { attention } from '../../src/ops/attention.ts';
import { attentionCached } from '../../src/ops/attentionCached.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));

/** Rows [lo, hi) of every sequence of a (B·S, C) matrix, as (B·(hi−lo), C). */
function rowsOf(x: Float64Array, B: number, S: number, C: number, lo: number, hi: number): Float64Array {
  const out = new Float64Array(B * (hi - lo) * C);
  for (let b = 0; b < B; b++) out.set(x.subarray((b * S + lo) * C, (b * S + hi) * C), b * (hi - lo) * C);
  return out;
}

describe.each(BACKENDS)('KV-cached attention on %s', (_name, makeBackend) => {
  it('prefill then decode position by position equals one full attention call', async () => {
    const be = await makeBackend();
    const r = rng(21);
    const B = 3,
      Smax = 12,
      H = 2,
      D = 16,
      prompt = 5;
    const qkv = f32(randn(r, B * Smax * 3 * D));
    // Left-padded prompts (0..3 padding tokens); row 2 finishes early: PAD (mask 0) from position 9.
    const mask = new Float64Array(B * Smax);
    for (let b = 0; b < B; b++) {
      const pad = r.int(0, 4);
      for (let i = pad; i < Smax; i++) mask[b * Smax + i] = 1;
    }
    for (let i = 9; i < Smax; i++) mask[2 * Smax + i] = 0;
    const tMask = be.tensor(mask, [B, Smax]);
    const kCache = be.zeros([B, Smax, D]);
    const vCache = be.zeros([B, Smax, D]);

    const chunks = [attentionCached(be, { qkv: be.tensor(rowsOf(qkv, B, Smax, 3 * D, 0, prompt), [B * prompt, 3 * D]), kCache, vCache, attnMask: tMask, start: 0, nHead: H })];
    for (let pos = prompt; pos < Smax; pos++) {
      chunks.push(attentionCached(be, { qkv: be.tensor(rowsOf(qkv, B, Smax, 3 * D, pos, pos + 1), [B, 3 * D]), kCache, vCache, attnMask: tMask, start: pos, nHead: H }));
    }
    const full = attention(be, { qkv: be.tensor(qkv, [B * Smax, 3 * D]), attnMask: tMask, nHead: H }).out;
    const [fullOut, kc, vc, ...parts] = await be.readMany([full, kCache, vCache, ...chunks]);

    // Reassemble the cached outputs into (B·Smax, D) order.
    const cached = new Float64Array(B * Smax * D);
    for (let b = 0; b < B; b++) {
      cached.set(parts[0].subarray(b * prompt * D, (b + 1) * prompt * D), b * Smax * D);
      for (let pos = prompt; pos < Smax; pos++) cached.set(parts[pos - prompt + 1].subarray(b * D, (b + 1) * D), (b * Smax + pos) * D);
    }
    // Same kernel arithmetic in the same order: equal to float32 rounding of a few ulps.
    expectClose(cached, fullOut, 1e-6, 1e-7, 'cached vs full attention');
    expectClose(fullOut, attentionRef(qkv, mask, { B, S: Smax, H, D }).out, TOL.elem.rtol, TOL.elem.atol, 'full vs reference');
    // The caches hold every position's k and v.
    for (let row = 0; row < B * Smax; row++) {
      for (let c = 0; c < D; c++) {
        expect(kc[row * D + c]).toBe(qkv[row * 3 * D + D + c]);
        expect(vc[row * D + c]).toBe(qkv[row * 3 * D + 2 * D + c]);
      }
    }
  });

  it('matches the float64 cached reference for a chunk in the middle of the cache', async () => {
    const be = await makeBackend();
    const r = rng(22);
    const B = 2,
      Smax = 10,
      H = 2,
      D = 8,
      start = 4,
      L = 3;
    const kInit = f32(randn(r, B * Smax * D));
    const vInit = f32(randn(r, B * Smax * D));
    const qkv = f32(randn(r, B * L * 3 * D));
    const mask = Float64Array.from({ length: B * Smax }, (_, e) => (e % Smax === 0 || (e >= Smax && e % Smax < 3) ? 0 : 1));
    const kCache = be.tensor(kInit, [B, Smax, D]);
    const vCache = be.tensor(vInit, [B, Smax, D]);
    const out = attentionCached(be, { qkv: be.tensor(qkv, [B * L, 3 * D]), kCache, vCache, attnMask: be.tensor(mask, [B, Smax]), start, nHead: H });
    const [o, kc, vc] = await be.readMany([out, kCache, vCache]);
    const kRef = Float64Array.from(kInit),
      vRef = Float64Array.from(vInit);
    const ref = attentionCachedRef(qkv, kRef, vRef, mask, { B, L, Smax, H, D, start });
    expectClose(o, ref, TOL.elem.rtol, TOL.elem.atol, 'cached out');
    // Positions outside [start, start+L) are untouched; the new ones hold the new k, v.
    expect(Array.from(kc)).toEqual(Array.from(kRef));
    expect(Array.from(vc)).toEqual(Array.from(vRef));
  });

  // One new position (L = 1) takes the fused decode kernel (cache write + attention in one
  // dispatch): outputs against the float64 reference and the caches written exactly, including a
  // row whose only visible key is the new one, a fully masked row (output 0) and the last slot.
  for (const start of [0, 5, 9]) {
    it(`decode step (L = 1) at position ${start}: output and cache writes match the reference`, async () => {
      const be = await makeBackend();
      const r = rng(40 + start);
      const B = 4,
        Smax = 10,
        H = 4,
        D = 16,
        L = 1;
      const kInit = f32(randn(r, B * Smax * D));
      const vInit = f32(randn(r, B * Smax * D));
      const qkv = f32(randn(r, B * L * 3 * D, 4)); // scale 4: peaked softmax rows
      const mask = Float64Array.from({ length: B * Smax }, (_, e) => {
        const b = Math.floor(e / Smax),
          j = e % Smax;
        if (b === 1) return j === start ? 1 : 0; // only the new key is visible
        if (b === 2) return 0; // nothing visible: output 0
        return b === 3 && j % 3 === 1 ? 0 : 1; // holes
      });
      const kCache = be.tensor(kInit, [B, Smax, D]);
      const vCache = be.tensor(vInit, [B, Smax, D]);
      const out = attentionCached(be, { qkv: be.tensor(qkv, [B * L, 3 * D]), kCache, vCache, attnMask: be.tensor(mask, [B, Smax]), start, nHead: H });
      const [o, kc, vc] = await be.readMany([out, kCache, vCache]);
      const kRef = Float64Array.from(kInit),
        vRef = Float64Array.from(vInit);
      const ref = attentionCachedRef(qkv, kRef, vRef, mask, { B, L, Smax, H, D, start });
      expectClose(o, ref, TOL.elem.rtol, TOL.elem.atol, 'decode out');
      for (let d = 0; d < D; d++) expect(o[2 * D + d]).toBe(0);
      for (const v of o) expect(Number.isFinite(v)).toBe(true);
      expect(Array.from(kc)).toEqual(Array.from(kRef));
      expect(Array.from(vc)).toEqual(Array.from(vRef));
    });
  }

  it('rejects a chunk that runs past the cache', async () => {
    const be = await makeBackend();
    const kCache = be.zeros([1, 4, 8]);
    const vCache = be.zeros([1, 4, 8]);
    expect(() => attentionCached(be, { qkv: be.zeros([2, 24]), kCache, vCache, attnMask: be.zeros([1, 4]), start: 3, nHead: 2 })).toThrow(/outside the cache/);
  });
});
