// linear / linearBackward (a frozen nn.Linear weight (out, in), f16 or f32) on WebGPU — the tiled
// kernel GPUs take and the blocked one CPU adapters take — and on the float64 CPU backend, against
// src/reference/nn/matmul.ts, on fresh random inputs (TEST_SEED) and shapes off the 64×64 tiles.
// f16 needs no shader-f16 feature (unpack2x16float is core WGSL), so these run on every engine.
// Tolerances, per output, u = 2^-24, S = Σ_k|x_k·w_k| the size of the summed terms:
//   against the reference on the weight's own values (an f16 weight's exact f16 numbers):
//     (2√K + 4)·u·(S + |bias| + |residual| + |into|) — f32 products and sums in k order; a sum of
//     K random terms is off by about √K·u·S (the worst case K·u·S is never approached);
//   an f16 weight against the unrounded f32 weight it came from: that plus 2^-11·S, f16's
//     half-ulp on every weight (the f16 log-probs are held to 3e-2, f32 ones to 2e-3).
// Measured worst (SwiftShader; K, N up to 1 536): 3.3u·S for y, 4.7u·S for gradX, where the
// bounds are 52u·S and more; the f16 rounding used at most 0.12 of its 2^-11·S.
import { describe, expect, it } from 'vitest';
import { f16Round } from '../../src/backend/f16.ts';
import type { DType } from '../../src/backend/tensor.ts';
import { linear, linearBackward } from '../../src/ops/linear.ts';
import { matmulRef } from '../../src/reference/nn/matmul.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { describeVariants } from '../helpers/kernelVariants.ts';
import { randn, rng } from '../helpers/random.ts';
import { expectWithin, f32, U32 } from '../helpers/scaled.ts';

/** S[m, n] = Σ_k |a[m, k]·b(k, n)| with b stored (N, K) when transB, else (K, N). */
function termSizes(a: ArrayLike<number>, b: ArrayLike<number>, M: number, K: number, N: number, transB: boolean): Float64Array {
  const s = new Float64Array(M * N);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      let t = 0;
      for (let k = 0; k < K; k++) t += Math.abs(a[m * K + k] * (transB ? b[n * K + k] : b[k * N + n]));
      s[m * N + n] = t;
    }
  return s;
}

const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [5, 7, 3],
  [65, 33, 70], // two tiles each way, K off BK = 16
  [130, 200, 96],
  [9, 576, 64], // SmolLM2's width
  [3, 10, 5], // K even but not a multiple of 8: the backward's last f16 block is partial
];

describeVariants('linear', (makeBackend, isReference) => {
  const rel = (K: number) => (isReference ? 1e-12 : (2 * Math.sqrt(K) + 4) * U32);
  for (const dtype of ['f16', 'f32'] as DType[]) {
    for (const [M, K, N] of SHAPES) {
      it(`${dtype} weight, M=${M} K=${K} N=${N}: y = x·Wᵀ (+ bias + residual) and gradX = gradY·W (+ into) match the reference`, async () => {
        const be = await makeBackend();
        const r = rng(M * 1_000_003 + K * 1009 + N + (dtype === 'f16' ? 7 : 0));
        const xs = f32(randn(r, M * K));
        const w32 = f32(randn(r, N * K, 0.05));
        const w = dtype === 'f16' ? w32.map(f16Round) : w32; // the values the weight holds
        const b = f32(randn(r, N));
        const res = f32(randn(r, M * N));
        const gy = f32(randn(r, M * N));
        const into0 = f32(randn(r, M * K));
        const weight = be.tensor(w32, [N, K], dtype);
        const x = be.tensor(xs, [M, K]);
        const y = linear(be, { x, weight });
        const yb = linear(be, { x, weight, bias: be.tensor(b, [N]), residual: be.tensor(res, [M, N]) });
        const gradY = be.tensor(gy, [M, N]);
        const gx = linearBackward(be, { gradY, weight });
        const into = be.tensor(into0, [M, K]);
        const gxInto = linearBackward(be, { gradY, weight, into });
        expect(gxInto).toBe(into);
        expect(y.shape).toEqual([M, N]);
        expect(gx.shape).toEqual([M, K]);
        const [ry, ryb, rgx, rgi] = await be.readMany([y, yb, gx, gxInto]);

        const S = termSizes(xs, w, M, K, N, true);
        const want = matmulRef(xs, w, null, M, K, N, true);
        expectWithin(
          ry,
          want,
          S.map((s) => rel(K) * s + 1e-37),
          'y',
        );
        const wantB = matmulRef(xs, w, b, M, K, N, true).map((v, i) => v + res[i]);
        expectWithin(
          ryb,
          wantB,
          S.map((s, i) => rel(K) * (s + Math.abs(b[i % N]) + Math.abs(res[i])) + 1e-37),
          'y with bias and residual',
        );
        const SB = termSizes(gy, w, M, N, K, false);
        const wantGx = matmulRef(gy, w, null, M, N, K, false);
        expectWithin(
          rgx,
          wantGx,
          SB.map((s) => rel(N) * s + 1e-37),
          'gradX',
        );
        expectWithin(
          rgi,
          wantGx.map((v, i) => v + into0[i]),
          SB.map((s, i) => rel(N) * (s + Math.abs(into0[i])) + 1e-37),
          'into + gradX',
        );
        if (dtype === 'f16') {
          // Against the f32 weight before rounding: f16's half-ulp on every term on top.
          const S32 = termSizes(xs, w32, M, K, N, true);
          expectWithin(
            ry,
            matmulRef(xs, w32, null, M, K, N, true),
            S32.map((s) => (rel(K) + 2 ** -11) * s + 1e-37),
            'y against the unrounded weight',
          );
        }
      });
    }
  }

  it('(B, S, K) activations keep their leading dims; a zero row gives the bias exactly', async () => {
    const be = await makeBackend();
    const [B, S, K, N] = [2, 3, 5, 4];
    const xs = f32(randn(rng(3), B * S * K));
    xs.fill(0, 0, K); // row 0 all zero
    const w = f32(randn(rng(4), N * K)).map(f16Round);
    const b = [0.5, -1, 2, 0.25];
    const y = linear(be, { x: be.tensor(xs, [B, S, K]), weight: be.tensor(w, [N, K], 'f16'), bias: be.tensor(b, [N]) });
    expect(y.shape).toEqual([B, S, N]);
    const gx = linearBackward(be, { gradY: be.tensor(new Float64Array(B * S * N).fill(1), [B, S, N]), weight: be.tensor(w, [N, K], 'f16') });
    expect(gx.shape).toEqual([B, S, K]);
    const ry = await be.read(y);
    expect(Array.from(ry.slice(0, N))).toEqual(b);
  });

  it('bad arguments are refused by name', async () => {
    const be = await makeBackend();
    const x = be.zeros([3, 4]);
    const weight = be.zeros([5, 4], 'f16');
    expect(() => linear(be, { x, weight: be.zeros([4, 5], 'f16') })).toThrow(/linear x: its last dimension 4 is not the weight's in-features 5/);
    expect(() => linear(be, { x, weight: be.zeros([20]) })).toThrow(/linear weight: expected \(out, in\)/);
    expect(() => linear(be, { x, weight: be.zeros([5, 4], 'i32') })).toThrow(/linear weight: expected dtype f16 or f32/);
    expect(() => linear(be, { x, weight, bias: be.zeros([4]) })).toThrow(/linear bias: expected shape \[5\]/);
    expect(() => linear(be, { x, weight, residual: be.zeros([3, 4]) })).toThrow(/linear residual: expected shape \[3, 5\]/);
    expect(() => linearBackward(be, { gradY: x, weight })).toThrow(/linearBackward gradY: its last dimension 4 is not the weight's out-features 5/);
    expect(() => linearBackward(be, { gradY: be.zeros([3, 5]), weight, into: be.zeros([3, 5]) })).toThrow(/linearBackward into: expected shape \[3, 4\]/);
  });
});

describe('linear with f16 weights on a device without shader-f16', () => {
  it('runs: the test device asks for no shader-f16 on any engine (src/node/webgpu.ts), so every f16 test above ran through the core unpack2x16float', async () => {
    const be = await webgpuBackend();
    expect(be.rt.device.features.has('shader-f16')).toBe(false);
    const weight = be.tensor([0.5, -0.25, 2 ** -24, 65504], [2, 2], 'f16'); // a subnormal and the largest f16
    const y = linear(be, { x: be.tensor([1, 2, 1, 0], [2, 2]), weight });
    expect(Array.from(await be.read(y))).toEqual([0, 131008, 0.5, 2 ** -24]);
  });
});
