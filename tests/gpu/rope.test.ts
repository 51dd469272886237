// rope / ropeBackward on WebGPU and the float64 CPU backend against src/reference/nn/rope.ts with
// the inv_freq of the reference's ropeInvFreq (θ 10 000 and 1 000 000, llama3 scaling), on fresh
// random q/k rows (TEST_SEED) and positions from 0 to 2^24.
// Tolerance, per rotated pair (a, b) = (x[j], x[j + Dh/2]): |y − y64| ≤ 8u·(|a| + |b|), u = 2^-24,
// at every position. The kernel forms the angle exactly in fixed point and sin/cos of the reduced
// angle to a few ulp (shaders/rope.wgsl), so its error does not grow with the position; an f32
// angle (position·inv_freq rounded, as transformers computes it) is off by position·6e-8 rad,
// which the third test shows this bound would catch.
// Measured worst (SwiftShader, 512 rows of Dh 128, θ 10^6): 2.2u at positions below 64 and below
// 2^24 alike; an f32 angle reaches 50u below 64, 2 800u below 4 096 and 7·10^5 u below 2^20.
import { expect, it } from 'vitest';
import { rope, ropeBackward } from '../../src/ops/rope.ts';
import { ropeFrequencies, ropeFrequencyWords } from '../../src/ops/ropeFrequencies.ts';
import { ropeBackwardRef, ropeInvFreq, ropeRef, type Llama3Scaling } from '../../src/reference/nn/rope.ts';
import { describeVariants } from '../helpers/kernelVariants.ts';
import { randn, rng } from '../helpers/random.ts';
import { expectWithin, f32, U32 } from '../helpers/scaled.ts';

const LLAMA3: Llama3Scaling = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 };

/** Per element: tol·(|a| + |b|) of the pair it belongs to (Dh = 2·half, heads of Dh per row). */
function pairTolerance(x: ArrayLike<number>, half: number, tol: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const inHead = i % (2 * half);
    const j = inHead % half;
    const base = i - inHead;
    out[i] = tol * (Math.abs(x[base + j]) + Math.abs(x[base + j + half])) + 1e-37;
  }
  return out;
}

describeVariants('rope', (makeBackend, isReference) => {
  // The float64 backend rotates by inv_freq as the frequency words hold it (to 2^-64 turn, read
  // back in float64: ~3e-16 relative), so its angle differs from the reference's by up to
  // position·inv·3e-16 rad: 1e-12 + 1e-15 per unit of position.
  const tolAt = (maxPos: number) => (isReference ? 1e-12 + 1e-15 * maxPos : 8 * U32);
  const tol = tolAt(2 ** 31);
  const cases: { R: number; H: number; Dh: number; theta: number; scaling: Llama3Scaling | null; maxPos: number }[] = [
    { R: 9, H: 3, Dh: 64, theta: 10000, scaling: null, maxPos: 64 }, // SmolLM2's heads
    { R: 5, H: 2, Dh: 128, theta: 1e6, scaling: null, maxPos: 40960 }, // Qwen3's
    { R: 17, H: 1, Dh: 128, theta: 500000, scaling: LLAMA3, maxPos: 131072 }, // Llama 3.x
    { R: 33, H: 4, Dh: 8, theta: 10000, scaling: null, maxPos: 2 ** 24 },
    { R: 1, H: 1, Dh: 2, theta: 10000, scaling: null, maxPos: 3 },
  ];
  for (const c of cases) {
    it(`R=${c.R} H=${c.H} Dh=${c.Dh} θ=${c.theta}${c.scaling ? ' llama3' : ''}, positions < ${c.maxPos}: forward and backward match the reference`, async () => {
      const be = await makeBackend();
      const r = rng(c.R * 131 + c.Dh + c.maxPos);
      const n = c.R * c.H * c.Dh;
      const x = f32(randn(r, n));
      const gy = f32(randn(r, n));
      const pos = Int32Array.from({ length: c.R }, (_, i) => (i === 0 ? 0 : r.int(0, c.maxPos)));
      const inv = ropeInvFreq(c.Dh, c.theta, c.scaling);
      const frequencies = ropeFrequencies(be, inv);
      const positions = be.tensor(pos, [c.R], 'i32');
      const y = rope(be, { x: be.tensor(x, [c.R, c.H * c.Dh]), positions, frequencies });
      const gx = ropeBackward(be, { gradY: be.tensor(gy, [c.R, c.H * c.Dh]), positions, frequencies });
      expect(y.shape).toEqual([c.R, c.H * c.Dh]);
      const [ry, rgx] = await be.readMany([y, gx]);
      expectWithin(ry, ropeRef(x, pos, inv, c.H), pairTolerance(x, c.Dh / 2, tolAt(c.maxPos)), 'y');
      expectWithin(rgx, ropeBackwardRef(gy, pos, inv, c.H), pairTolerance(gy, c.Dh / 2, tolAt(c.maxPos)), 'gradX');
      // Position 0 (row 0) is the identity, exactly.
      expect(Array.from(ry.slice(0, c.H * c.Dh))).toEqual(Array.from(x.slice(0, c.H * c.Dh)));
    });
  }

  it('(B, S) positions and (B, S, H·Dh) rows; the backward undoes the forward at the extreme positions ±(2^31 − 1), −2^31', async () => {
    const be = await makeBackend();
    const [B, S, H, Dh] = [2, 3, 2, 16];
    const x = f32(randn(rng(7), B * S * H * Dh));
    const pos = [0, 5, -(2 ** 31), 2 ** 31 - 1, -(2 ** 31 - 1), 12345];
    const inv = ropeInvFreq(Dh, 10000);
    const frequencies = ropeFrequencies(be, inv);
    const positions = be.tensor(pos, [B, S], 'i32');
    const y = rope(be, { x: be.tensor(x, [B, S, H * Dh]), positions, frequencies });
    const back = ropeBackward(be, { gradY: y, positions, frequencies });
    const [ry, rb] = await be.readMany([y, back]);
    expectWithin(rb, x, pairTolerance(x, Dh / 2, 2 * tol), 'backward(forward(x))');
    // Norms of each pair are kept by a rotation.
    for (let i = 0; i < ry.length; i += Dh) {
      for (let j = 0; j < Dh / 2; j++) {
        const before = Math.hypot(x[i + j], x[i + j + Dh / 2]);
        expect(Math.abs(Math.hypot(ry[i + j], ry[i + j + Dh / 2]) - before)).toBeLessThanOrEqual(2 * tol * before + 1e-37);
      }
    }
  });

  it('the angle is exact where an f32 product is not: position 10^6 stays within the bound', async () => {
    const be = await makeBackend();
    const Dh = 4;
    const inv = ropeInvFreq(Dh, 10000); // 1 and 0.01
    const pos = [1_000_000, 999_983, 16_777_215];
    const x = [1, 0.5, 0, 0.25, -1, 2, 0.75, 1, 0.5, 0.5, -0.5, 0.5];
    const y = await be.read(rope(be, { x: be.tensor(x, [3, Dh]), positions: be.tensor(pos, [3], 'i32'), frequencies: ropeFrequencies(be, inv) }));
    const want = ropeRef(x, pos, inv, 1);
    expectWithin(y, want, pairTolerance(x, Dh / 2, tolAt(2 ** 24)), 'y');
    // An f32 angle, as transformers forms it (position·inv_freq in f32, then an exact cos/sin),
    // at position 999 983 with inv_freq 0.01 is off by ~5e-4 rad: far outside the bound.
    const f32Angle = Math.fround(Math.fround(999_983) * Math.fround(inv[1]));
    const naive = x[5] * Math.cos(f32Angle) - x[7] * Math.sin(f32Angle);
    expect(Math.abs(naive - want[5])).toBeGreaterThan(50 * pairTolerance(x, Dh / 2, 8 * U32)[5]);
  });

  it('bad arguments are refused by name', async () => {
    const be = await makeBackend();
    const frequencies = be.tensor(ropeFrequencyWords(ropeInvFreq(8, 10000)), [4, 2], 'i32');
    const x = be.tensor(new Float64Array(24), [2, 12]);
    const positions = be.tensor([0, 1], [2], 'i32');
    expect(() => rope(be, { x, positions, frequencies })).toThrow(/rope x: its last dimension 12 is not a multiple of the head width 8/);
    const x16 = be.tensor(new Float64Array(32), [2, 16]);
    expect(() => rope(be, { x: x16, positions: be.tensor([0, 1, 2], [3], 'i32'), frequencies })).toThrow(/rope positions: expected 2 elements/);
    expect(() => rope(be, { x: x16, positions: be.tensor([0, 1], [2]), frequencies })).toThrow(/rope positions: expected dtype i32/);
    expect(() => ropeBackward(be, { gradY: x16, positions, frequencies: be.tensor([1, 2, 3, 4], [4], 'i32') })).toThrow(/ropeBackward frequencies: expected shape \(Dh\/2, 2\)/);
    expect(() => ropeFrequencyWords([1, Number.NaN])).toThrow(/invFreq\[1\]/);
  });
});
