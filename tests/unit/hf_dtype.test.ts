// BF16/F16/F32 conversions against hand values and, exhaustively over all 65 536 bf16 bit patterns,
// against an independent rounding: the nearest of all finite f16 values found by binary search in
// float64, ties to the even bit pattern.
import { describe, expect, it } from 'vitest';
import {
  bf16BitsToF32,
  decodeToF16Bits,
  decodeToF32,
  encodeFromNumbers,
  f16BitsToF32,
  f32Bits,
  f32BitsToBf16Bits,
  f32BitsToF16Bits,
  f32FromBits,
} from '../../src/model/hf/dtype.ts';
import { rng } from '../helpers/random.ts';

/** Every finite non-negative f16 value with its bits, ascending. */
const F16_POS: { v: number; bits: number }[] = [];
for (let b = 0; b < 0x7c00; b++) F16_POS.push({ v: f16BitsToF32(b), bits: b });

/** Nearest f16 to x (float64 arithmetic), ties to even bits, overflow to inf at ≥ 65520 (halfway to 2^16). */
function nearestF16(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;
  let lo = 0;
  let hi = F16_POS.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (F16_POS[mid].v <= a) lo = mid;
    else hi = mid;
  }
  const dl = a - F16_POS[lo].v;
  const dh = F16_POS[hi].v - a;
  const pick = dl < dh ? lo : dh < dl ? hi : F16_POS[lo].bits % 2 === 0 ? lo : hi;
  return sign | F16_POS[pick].bits;
}

describe('float16 and bfloat16 bit conversions', () => {
  it('decode known f16 and bf16 values', () => {
    expect(f16BitsToF32(0x3c00)).toBe(1);
    expect(f16BitsToF32(0xc000)).toBe(-2);
    expect(f16BitsToF32(0x7bff)).toBe(65504);
    expect(f16BitsToF32(0x0001)).toBe(2 ** -24);
    expect(f16BitsToF32(0x0400)).toBe(2 ** -14);
    expect(f16BitsToF32(0x7c00)).toBe(Number.POSITIVE_INFINITY);
    expect(f16BitsToF32(0x7e00)).toBeNaN();
    expect(bf16BitsToF32(0x3f80)).toBe(1);
    expect(bf16BitsToF32(0xc040)).toBe(-3);
    expect(bf16BitsToF32(0x7f80)).toBe(Number.POSITIVE_INFINITY);
  });

  it('f32 → bf16 rounds to nearest even (ties both ways)', () => {
    const step = 2 ** -7; // bf16 spacing in [1, 2)
    expect(f32BitsToBf16Bits(f32Bits(1 + step / 2))).toBe(0x3f80); // tie → even (down)
    expect(f32BitsToBf16Bits(f32Bits(1 + 1.5 * step))).toBe(0x3f82); // tie → even (up)
    expect(f32BitsToBf16Bits(f32Bits(1 + 0.6 * step))).toBe(0x3f81);
    expect(f32BitsToBf16Bits(f32Bits(-2.5))).toBe(0xc020);
    expect(f32BitsToBf16Bits(0x7fc00001) & 0x7fc0).toBe(0x7fc0); // NaN stays NaN
  });

  it('every bf16 value widens to f32 exactly and narrows back to itself', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const v = bf16BitsToF32(h);
      if (!Number.isNaN(v) && f32BitsToBf16Bits(f32Bits(v)) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('every bf16 value → f16 equals the nearest-even f16 found independently', () => {
    let mismatches = 0;
    let first = '';
    for (let h = 0; h < 0x10000; h++) {
      const v = bf16BitsToF32(h);
      const got = f32BitsToF16Bits(h << 16);
      const want = nearestF16(v);
      const same = Number.isNaN(v) ? (got & 0x7c00) === 0x7c00 && (got & 0x3ff) !== 0 : got === want;
      if (!same) {
        if (mismatches === 0) first = `bf16 0x${h.toString(16)} (${v}): got 0x${got.toString(16)}, want 0x${want.toString(16)}`;
        mismatches++;
      }
    }
    expect(first).toBe('');
    expect(mismatches).toBe(0);
  });

  it('random f32 values → f16 equal the independent nearest-even f16 (incl. subnormals and ties)', () => {
    const r = rng(3);
    for (let i = 0; i < 20000; i++) {
      // log-uniform magnitudes from 2^-30 to 2^17 cover zero-rounding, subnormal, normal and overflow
      const v = Math.fround((r.next() < 0.5 ? -1 : 1) * 2 ** r.uniform(-30, 17));
      expect(f32BitsToF16Bits(f32Bits(v))).toBe(nearestF16(v));
    }
    // exact ties: halfway between adjacent f16 values
    for (const b of [0x0001, 0x0002, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bfe]) {
      const mid = (f16BitsToF32(b) + f16BitsToF32(b + 1)) / 2;
      expect(f32BitsToF16Bits(f32Bits(mid))).toBe(b % 2 === 0 ? b : b + 1);
    }
    expect(f32BitsToF16Bits(f32Bits(65504))).toBe(0x7bff);
    expect(f32BitsToF16Bits(f32Bits(65519.99))).toBe(0x7bff);
    expect(f32BitsToF16Bits(f32Bits(65520))).toBe(0x7c00);
  });

  it('decodeToF16Bits counts finite values that overflow f16, and not infinities already there', () => {
    const bytes = encodeFromNumbers([1, 70000, -1e6, Number.POSITIVE_INFINITY, 3], 'F32');
    const r = decodeToF16Bits(bytes, 'F32');
    expect(r.overflowCount).toBe(2);
    expect(r.firstOverflow).toEqual({ index: 1, value: 70000 });
    expect([...r.bits]).toEqual([0x3c00, 0x7c00, 0xfc00, 0x7c00, 0x4200]);
    const bf = decodeToF16Bits(encodeFromNumbers([0.5, -0.25], 'BF16'), 'BF16');
    expect(bf.overflowCount).toBe(0);
    expect([...bf.bits]).toEqual([0x3800, 0xb400]);
  });

  it('decodeToF32 reads little-endian bytes of all three dtypes, also from an unaligned offset', () => {
    const vals = [1, -2.5, 0.0078125, 65504];
    for (const dt of ['F32', 'F16', 'BF16'] as const) {
      const b = encodeFromNumbers(vals, dt);
      const padded = new Uint8Array(b.length + 1);
      padded.set(b, 1);
      expect([...decodeToF32(padded.subarray(1), dt)]).toEqual(dt === 'BF16' ? [1, -2.5, 0.0078125, 65536] : vals);
    }
    expect(f32FromBits(f32Bits(0.1))).toBe(Math.fround(0.1));
  });
});
