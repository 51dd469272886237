// gqaAttention and gqaAttentionBackward on both backends against the float64 references
// (src/reference/seq/gqa.ts, gqaLse.ts) on fresh random inputs: GQA groups of 1–4 heads, head
// widths 10 to 128 (SmolLM2's 9/3 × 64, Qwen3's 16/8 × 128 shape per head), left padding and
// holes, a fully masked row, length-1 sequences, 256 positions, extreme scores; and the refusals.
//
// Tolerances (f32 kernels against float64): out and lse |Δ| ≤ 2e-6 + 2e-5·|ref|; gradients
// |Δ| ≤ 1e-5 + 1e-4·|ref|, except where noted. Why: a score is a Dh-term f32 dot product (relative
// error ~√Dh·6e-8 ≈ 7e-7 at Dh = 128, times |s| ≲ 4 here), the softmax and the weighted sum of up
// to S = 256 values add a few ulps more; the gradients sum S·g such terms (dK, dV over every
// query of the group) of products of two such quantities. Each bound is ≥ 10× the largest error
// seen over many seeds and far below any wrong term (≥ 1e-3 here).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { GQA_MAX_DH, gqaAttention, gqaAttentionBackward } from '../../src/ops/gqaAttention.ts';
import { gqaAttentionBackwardRef, gqaAttentionRef, type GqaDims } from '../../src/reference/seq/gqa.ts';
import { gqaLogsumexpRef } from '../../src/reference/seq/gqaLse.ts';
import { BACKENDS, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const OUT = { rtol: 2e-5, atol: 2e-6 } as const;
const GRAD = { rtol: 1e-4, atol: 1e-5 } as const;
type Tol = { rtol: number; atol: number };

interface Case {
  B: number;
  S: number;
  H: number;
  Hkv: number;
  Dh: number;
}

/** Left padding of 0…⌊S/3⌋ per row, a hole or two in longer rows; row `emptyRow` fully masked. */
function paddedMask(r: ReturnType<typeof rng>, B: number, S: number, emptyRow = -1): Float64Array {
  const mask = new Float64Array(B * S);
  for (let b = 0; b < B; b++) {
    if (b === emptyRow) continue;
    const pad = r.int(0, Math.floor(S / 3) + 1);
    for (let i = pad; i < S; i++) mask[b * S + i] = 1;
    if (S > 8 && b % 2 === 1) mask[b * S + S - 2] = 0; // a PAD after an early EOS
  }
  return mask;
}

/** Forward and backward on `be`, read back, beside the float64 references. */
async function runBoth(be: Backend, c: Case, q: Float64Array, k: Float64Array, v: Float64Array, mask: Float64Array, gradOut: Float64Array) {
  const { B, S, H, Hkv, Dh } = c;
  const R = B * S;
  const args = {
    q: be.tensor(q, [R, H * Dh]),
    k: be.tensor(k, [R, Hkv * Dh]),
    v: be.tensor(v, [R, Hkv * Dh]),
    attnMask: be.tensor(mask, [B, S]),
    nHead: H,
    nKvHead: Hkv,
  };
  const fwd = gqaAttention(be, args);
  const g = gqaAttentionBackward(be, { ...args, gradOut: be.tensor(gradOut, [R, H * Dh]), out: fwd.out, lse: fwd.lse });
  const [out, lse, gradQ, gradK, gradV] = await be.readMany([fwd.out, fwd.lse, g.gradQ, g.gradK, g.gradV]);
  const dims: GqaDims = { B, S, nHead: H, nKvHead: Hkv, headDim: Dh, scale: 1 / Math.sqrt(Dh) };
  const ref = gqaAttentionRef(q, k, v, mask, dims);
  const refGrad = gqaAttentionBackwardRef(gradOut, q, k, v, ref.probs, dims);
  return { out, lse, gradQ, gradK, gradV, ref: { out: ref.out, lse: gqaLogsumexpRef(q, k, mask, dims), ...refGrad } };
}

type Result = Awaited<ReturnType<typeof runBoth>>;

function expectMatches(r: Result, what: string, out: Tol = OUT, grad: Tol = GRAD): void {
  expectClose(r.out, r.ref.out, out.rtol, out.atol, `${what} out`);
  expectClose(r.lse, r.ref.lse, out.rtol, out.atol, `${what} lse`);
  expectClose(r.gradQ, r.ref.gradQ, grad.rtol, grad.atol, `${what} gradQ`);
  expectClose(r.gradK, r.ref.gradK, grad.rtol, grad.atol, `${what} gradK`);
  expectClose(r.gradV, r.ref.gradV, grad.rtol, grad.atol, `${what} gradV`);
}

const CASES: [string, Case][] = [
  ['GQA 4/2 heads, Dh 16', { B: 3, S: 13, H: 4, Hkv: 2, Dh: 16 }],
  ['SmolLM2 heads 9/3, Dh 64, over two query tiles', { B: 2, S: 37, H: 9, Hkv: 3, Dh: 64 }],
  ['Qwen3 head width 128, heads 4/2', { B: 2, S: 21, H: 4, Hkv: 2, Dh: 128 }],
  ['multi-head (H = Hkv), Dh 24', { B: 2, S: 18, H: 3, Hkv: 3, Dh: 24 }],
  ['one kv head for 4 query heads, Dh 10 (not a multiple of 4)', { B: 2, S: 11, H: 4, Hkv: 1, Dh: 10 }],
];

/** One left-padded sequence of S positions, 2 query heads over 1 kv head of width 128, both passes against the reference. */
async function longSequence(be: Backend, S: number): Promise<void> {
  const r = rng(S);
  const c = { B: 1, S, H: 2, Hkv: 1, Dh: 128 };
  const R = c.B * c.S;
  const mask = new Float64Array(R).fill(1);
  mask.fill(0, 0, 7); // left padding
  const res = await runBoth(be, c, f32(randn(r, R * c.H * c.Dh)), f32(randn(r, R * c.Dh)), f32(randn(r, R * c.Dh)), mask, f32(randn(r, R * c.H * c.Dh)));
  expectMatches(res, `S ${S}`);
}

describe.each(BACKENDS)('gqaAttention on %s', (_name, makeBackend) => {
  it.each(CASES)('%s: forward and backward match the float64 reference', async (_label, c) => {
    const be = await makeBackend();
    const r = rng(c.S * 31 + c.Dh + c.H);
    const R = c.B * c.S;
    const q = f32(randn(r, R * c.H * c.Dh));
    const k = f32(randn(r, R * c.Hkv * c.Dh));
    const v = f32(randn(r, R * c.Hkv * c.Dh));
    const gradOut = f32(randn(r, R * c.H * c.Dh));
    const res = await runBoth(be, c, q, k, v, paddedMask(r, c.B, c.S), gradOut);
    expectMatches(res, `B${c.B} S${c.S} H${c.H}/${c.Hkv} Dh${c.Dh}`);
  });

  it('a fully masked row, left padding and length-1 sequences: no visible key gives zeros, never NaN', async () => {
    const be = await makeBackend();
    const r = rng(5);
    for (const c of [
      { B: 3, S: 9, H: 2, Hkv: 1, Dh: 16 },
      { B: 4, S: 1, H: 4, Hkv: 2, Dh: 64 },
    ]) {
      const R = c.B * c.S;
      const mask = paddedMask(r, c.B, c.S, 1); // row 1 sees nothing
      if (c.S === 1) mask.set([1, 0, 1, 0]); // length 1: rows 1 and 3 are a lone PAD
      const q = f32(randn(r, R * c.H * c.Dh));
      const k = f32(randn(r, R * c.Hkv * c.Dh));
      const v = f32(randn(r, R * c.Hkv * c.Dh));
      const res = await runBoth(be, c, q, k, v, mask, f32(randn(r, R * c.H * c.Dh)));
      expectMatches(res, `edge S${c.S}`);
      // Every query of the masked row (and each query before its row's first real token) outputs 0.
      const qW = c.H * c.Dh;
      for (let b = 0; b < c.B; b++) {
        for (let i = 0; i < c.S; i++) {
          let visible = false;
          for (let j = 0; j <= i; j++) visible ||= mask[b * c.S + j] === 1;
          if (visible) continue;
          const row = res.out.subarray((b * c.S + i) * qW, (b * c.S + i + 1) * qW);
          expect(Array.from(row).every((x) => x === 0)).toBe(true);
          expect(Array.from(res.gradQ.subarray((b * c.S + i) * qW, (b * c.S + i + 1) * qW)).every((x) => x === 0)).toBe(true);
        }
      }
      // The fully masked row's keys get no gradient.
      const kvW = c.Hkv * c.Dh;
      expect(Array.from(res.gradK.subarray(c.S * kvW, 2 * c.S * kvW)).every((x) => x === 0)).toBe(true);
      expect(Array.from(res.gradV.subarray(c.S * kvW, 2 * c.S * kvW)).every((x) => x === 0)).toBe(true);
    }
  });

  it('256 positions at head width 128 (prompt + response of a real rollout)', async () => {
    await longSequence(await makeBackend(), 256);
  });

  it('extreme scores: exact integer dot products of ±1e4 give one-hot rows, finite gradients', async () => {
    const be = await makeBackend();
    const r = rng(9);
    // q, k integers in [−100, 100] (exact f32 dot products, |Σ| < 2^24), scale 1/8 exact: scores
    // of ~±1e4 that differ by multiples of 1/8, so softmax rows are one-hot or split between exact ties.
    const c = { B: 2, S: 12, H: 2, Hkv: 1, Dh: 64 };
    const R = c.B * c.S;
    const q = Float64Array.from({ length: R * c.H * c.Dh }, () => r.int(-100, 101));
    const k = Float64Array.from({ length: R * c.Dh }, () => r.int(-100, 101));
    const v = f32(randn(r, R * c.Dh));
    const res = await runBoth(be, c, q, k, v, paddedMask(r, c.B, c.S), f32(randn(r, R * c.H * c.Dh)));
    // One-hot rows make dS = P·(dP − δ) a difference of two equal f32 dot products (δ = dO·O and
    // dP = dO·v with O = v), off by ~1e-5 each, then multiplied by k or q entries up to 100 times
    // scale 1/8: gradients are exact to ~1e-4 absolute here, so atol 1e-3 (a wrong term is ≥ 1).
    expectMatches(res, 'extreme', OUT, { rtol: 1e-4, atol: 1e-3 });
    expect(Math.max(...res.ref.lse.map(Math.abs))).toBeGreaterThan(1000);
  });

  it('with the tiles a GPU gets (16 keys a tile): several tiles per sequence match the reference', async () => {
    const be = await makeBackend();
    if (!(be instanceof WebGpuBackend)) return; // the CPU backend has no tiles
    const c = { B: 2, S: 37, H: 4, Hkv: 2, Dh: 16 };
    const r = rng(16);
    const R = c.B * c.S;
    const saved = be.rt.cpuAdapter;
    be.rt.cpuAdapter = false;
    try {
      const res = await runBoth(
        be,
        c,
        f32(randn(r, R * c.H * c.Dh)),
        f32(randn(r, R * c.Hkv * c.Dh)),
        f32(randn(r, R * c.Hkv * c.Dh)),
        paddedMask(r, c.B, c.S),
        f32(randn(r, R * c.H * c.Dh)),
      );
      expectMatches(res, 'GPU tiles');
    } finally {
      be.rt.cpuAdapter = saved;
    }
  });

  it('refuses a head width over the limit, heads that do not group, and mismatched shapes, naming them', async () => {
    const be = await makeBackend();
    const t = (shape: number[]) => be.zeros(shape);
    const mask = t([1, 4]);
    expect(() => gqaAttention(be, { q: t([4, 2 * 264]), k: t([4, 264]), v: t([4, 264]), attnMask: mask, nHead: 2, nKvHead: 1 })).toThrow(
      `head width 264 exceeds the attention kernels' limit of ${GQA_MAX_DH}`,
    );
    expect(() => gqaAttention(be, { q: t([4, 48]), k: t([4, 32]), v: t([4, 32]), attnMask: mask, nHead: 3, nKvHead: 2 })).toThrow('nHead 3 is not a multiple of nKvHead 2');
    expect(() => gqaAttention(be, { q: t([4, 64]), k: t([4, 16]), v: t([4, 32]), attnMask: mask, nHead: 4, nKvHead: 2 })).toThrow('k: expected shape [4, 32], got [4, 16]');
    expect(() => gqaAttention(be, { q: t([5, 64]), k: t([4, 32]), v: t([4, 32]), attnMask: mask, nHead: 4, nKvHead: 2 })).toThrow('q: expected shape [4, 64], got [5, 64]');
  });
});

// The WebGPU kernels' passes at a real rollout's length (the CPU backend is the float64 reference
// itself: nothing to compare there).
describe('gqaAttention on webgpu, long sequences', () => {
  it('1 024 positions at head width 128: the backward sums in passes, every key row right', async () => {
    // One pass of 1 024 queries × 2 heads gave zeros for keys 7–191 on lavapipe (the longest loops);
    // passes of gqaPassRows bound every thread's loop.
    await longSequence(await webgpuBackend(), 1024);
  });
});
