import { describe, expect, it } from 'vitest';
import { attentionBackwardRef, attentionRef } from '../../src/reference/seq/attention.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import type { Rng } from '../../src/util/rng.ts';
import { attention, attentionBackward } from '../../src/ops/attention.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));

/** Left-padded (B,S) mask: each row starts with 0..maxPad padding tokens. */
function leftPaddedMask(r: Rng, B: number, S: number, maxPad = 3): Float64Array {
  const m = new Float64Array(B * S);
  for (let b = 0; b < B; b++) {
    const pad = Math.min(r.int(0, maxPad + 1), S - 1);
    for (let i = pad; i < S; i++) m[b * S + i] = 1;
  }
  return m;
}

const SIZES = [
  { B: 3, S: 7, H: 2, D: 8 },
  { B: 2, S: 33, H: 4, D: 64 },
  { B: 1, S: 128, H: 1, D: 64 }, // the kernel limits: S = 128, Dh = 64
  { B: 2, S: 6, H: 3, D: 15 }, // WebGPU tiles 4 queries/keys × 4 columns: ragged S and Dh = 5
];

describe.each(BACKENDS)('attention on %s', (_name, makeBackend) => {
  it.each(SIZES)('forward and backward match the float64 reference (B=$B S=$S H=$H D=$D)', async ({ B, S, H, D }) => {
    const be = await makeBackend();
    const r = rng(100 + S);
    const qkv = f32(randn(r, B * S * 3 * D, 1));
    const mask = leftPaddedMask(r, B, S);
    const gradOut = f32(randn(r, B * S * D, 1));
    const tq = be.tensor(qkv, [B * S, 3 * D]);
    const tm = be.tensor(mask, [B, S]);
    const { out, probs } = attention(be, { qkv: tq, attnMask: tm, nHead: H });
    expect(out.shape).toEqual([B * S, D]);
    expect(probs.shape).toEqual([B, H, S, S]);
    const grad = attentionBackward(be, { gradOut: be.tensor(gradOut, [B * S, D]), qkv: tq, probs, out, nHead: H });
    const [o, p, g] = await be.readMany([out, probs, grad]);
    const ref = attentionRef(qkv, mask, { B, S, H, D });
    expectClose(o, ref.out, TOL.elem.rtol, TOL.elem.atol, 'out');
    expectClose(p, ref.probs, TOL.elem.rtol, TOL.elem.atol, 'probs');
    // Backward from the reference probs would hide forward error; use the backend's own probs.
    expectClose(g, attentionBackwardRef(gradOut, qkv, p, { B, S, H, D }), TOL.reduce.rtol, TOL.reduce.atol, 'gradQkv');
    // Padding keys are hidden: no probability mass and no k/v gradient reaches them.
    for (let b = 0; b < B; b++) {
      for (let j = 0; j < S; j++) {
        if (mask[b * S + j] === 1) continue;
        for (let h = 0; h < H; h++) for (let i = 0; i < S; i++) expect(p[((b * H + h) * S + i) * S + j]).toBe(0);
        for (let c = D; c < 3 * D; c++) expect(g[(b * S + j) * 3 * D + c]).toBe(0);
      }
    }
  });

  it('all-masked rows, length-1 sequences and a single real token give zeros, not NaN', async () => {
    const be = await makeBackend();
    const r = rng(7);
    const H = 2,
      D = 8;
    // Row 0: all padding. Row 1: one real token at the end. Row 2: all real.
    for (const S of [1, 5]) {
      const B = 3;
      const mask = new Float64Array(B * S);
      mask[1 * S + S - 1] = 1;
      for (let i = 0; i < S; i++) mask[2 * S + i] = 1;
      const qkv = f32(randn(r, B * S * 3 * D, 1));
      const gradOut = f32(randn(r, B * S * D, 1));
      const tq = be.tensor(qkv, [B * S, 3 * D]);
      const { out, probs } = attention(be, { qkv: tq, attnMask: be.tensor(mask, [B, S]), nHead: H });
      const grad = attentionBackward(be, { gradOut: be.tensor(gradOut, [B * S, D]), qkv: tq, probs, out, nHead: H });
      const [o, p, g] = await be.readMany([out, probs, grad]);
      const ref = attentionRef(qkv, mask, { B, S, H, D });
      expectClose(o, ref.out, TOL.elem.rtol, TOL.elem.atol, `out S=${S}`);
      expectClose(p, ref.probs, TOL.elem.rtol, TOL.elem.atol, `probs S=${S}`);
      expectClose(g, attentionBackwardRef(gradOut, qkv, ref.probs, { B, S, H, D }), TOL.reduce.rtol, TOL.reduce.atol, `grad S=${S}`);
      // all-padding row: exactly zero output, probs and gradient
      expect(Array.from(o.slice(0, S * D)).every((x) => x === 0)).toBe(true);
      expect(Array.from(p.slice(0, H * S * S)).every((x) => x === 0)).toBe(true);
      expect(Array.from(g.slice(0, S * 3 * D)).every((x) => x === 0)).toBe(true);
      // the single real token attends only to itself: out = its v, prob 1
      const last = 1 * S + S - 1;
      expectClose(o.slice(last * D, last * D + D), qkv.slice(last * 3 * D + 2 * D, last * 3 * D + 3 * D), TOL.elem.rtol, TOL.elem.atol, 'single token out');
      for (let h = 0; h < H; h++) expect(p[((1 * H + h) * S + S - 1) * S + S - 1]).toBeCloseTo(1, 6);
    }
  });

  it('extreme scores (|q·k|/√Dh ~ 1e4) stay finite and match the reference', async () => {
    const be = await makeBackend();
    const r = rng(8);
    const B = 2,
      S = 9,
      H = 1,
      D = 4; // Dh = 4: scale 1/2 is exact
    // Integer q, k make every score exact in float32, so only exp and the division round.
    const qkv = new Float64Array(B * S * 3 * D);
    for (let row = 0; row < B * S; row++) {
      for (let c = 0; c < 2 * D; c++) qkv[row * 3 * D + c] = r.int(-100, 101);
      for (let c = 2 * D; c < 3 * D; c++) qkv[row * 3 * D + c] = Math.fround(r.normal());
    }
    const mask = leftPaddedMask(r, B, S);
    const gradOut = f32(randn(r, B * S * D, 1));
    const tq = be.tensor(qkv, [B * S, 3 * D]);
    const { out, probs } = attention(be, { qkv: tq, attnMask: be.tensor(mask, [B, S]), nHead: H });
    const grad = attentionBackward(be, { gradOut: be.tensor(gradOut, [B * S, D]), qkv: tq, probs, out, nHead: H });
    const [o, p, g] = await be.readMany([out, probs, grad]);
    const ref = attentionRef(qkv, mask, { B, S, H, D });
    expect(Math.max(...Array.from(qkv.slice(0, 2 * D)).map(Math.abs))).toBeGreaterThan(10);
    expectClose(o, ref.out, TOL.elem.rtol, TOL.elem.atol, 'out');
    expectClose(p, ref.probs, TOL.elem.rtol, TOL.elem.atol, 'probs');
    // With |k|, |q| up to 100 a gradient element is a sum of terms up to ~50·|dS| that cancel to
    // ~1e-4, so float32 rounding of the terms, not of the result, sets its error: each element may
    // also be off by a float32 dot-product bound, γ·Σ|terms| (γ = (S + Dh)·2⁻²⁴), on top of TOL.reduce.
    const gRef = attentionBackwardRef(gradOut, qkv, ref.probs, { B, S, H, D });
    const bound = attentionBackwardTermSums(gradOut, qkv, ref.probs, { B, S, H, D });
    const gamma = (S + D / H) * 2 ** -24;
    for (let i = 0; i < g.length; i++) {
      const allowed = TOL.reduce.atol + TOL.reduce.rtol * Math.abs(gRef[i]) + gamma * bound[i];
      expect(Math.abs(g[i] - gRef[i]), `grad[${i}] = ${g[i]}, reference ${gRef[i]}, allowed ±${allowed.toExponential(2)}`).toBeLessThanOrEqual(allowed);
    }
  });

  it('is deterministic: two runs give bit-identical outputs and gradients', async () => {
    const be = await makeBackend();
    const r = rng(9);
    const B = 2,
      S = 16,
      H = 2,
      D = 16;
    const tq = be.tensor(f32(randn(r, B * S * 3 * D)), [B * S, 3 * D]);
    const tm = be.tensor(leftPaddedMask(r, B, S), [B, S]);
    const tg = be.tensor(f32(randn(r, B * S * D)), [B * S, D]);
    const run = () => {
      const { out, probs } = attention(be, { qkv: tq, attnMask: tm, nHead: H });
      return [out, attentionBackward(be, { gradOut: tg, qkv: tq, probs, out, nHead: H })];
    };
    const a = await be.readMany(run());
    const b = await be.readMany(run());
    expect(Array.from(a[0])).toEqual(Array.from(b[0]));
    expect(Array.from(a[1])).toEqual(Array.from(b[1]));
  });
});

/**
 * Per element of attentionBackwardRef's gradient, the sum of the absolute values of the terms it
 * adds up (ds = p·(dP_j − Σ_k p_k dP_k) taken as p·(|dP_j| + Σ_k p_k |dP_k|)): the scale of the
 * float32 rounding error of a sum whose terms cancel.
 */
function attentionBackwardTermSums(
  gradOut: ArrayLike<number>,
  qkv: ArrayLike<number>,
  probs: ArrayLike<number>,
  dims: { B: number; S: number; H: number; D: number },
): Float64Array {
  const { B, S, H, D } = dims;
  const Dh = D / H;
  const scale = 1 / Math.sqrt(Dh);
  const out = new Float64Array(B * S * 3 * D);
  const absDp = new Float64Array(S);
  const row = (b: number, i: number) => (b * S + i) * 3 * D;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < S; i++) {
        const pOff = ((b * H + h) * S + i) * S;
        const oOff = (b * S + i) * D + h * Dh;
        let rowAbs = 0;
        for (let j = 0; j < S; j++) {
          const vOff = row(b, j) + 2 * D + h * Dh;
          let dp = 0;
          for (let d = 0; d < Dh; d++) dp += Math.abs(gradOut[oOff + d] * qkv[vOff + d]);
          absDp[j] = dp;
          rowAbs += probs[pOff + j] * dp;
        }
        for (let j = 0; j < S; j++) {
          const p = probs[pOff + j];
          const ds = p * (absDp[j] + rowAbs);
          const qOff = row(b, i) + h * Dh;
          const kOff = row(b, j) + D + h * Dh;
          const vOff = row(b, j) + 2 * D + h * Dh;
          for (let d = 0; d < Dh; d++) {
            out[qOff + d] += ds * Math.abs(qkv[kOff + d]) * scale;
            out[kOff + d] += ds * Math.abs(qkv[qOff + d]) * scale;
            out[vOff + d] += p * Math.abs(gradOut[oOff + d]);
          }
        }
      }
    }
  }
  return out;
}
