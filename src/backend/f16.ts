// The `f16` tensor dtype: IEEE binary16 values packed two to a 32-bit word, element 2i in the low
// half of word i (the byte order of a little-endian Uint16Array, so f16 bits read from a
// safetensors file upload as they are). Kernels read them with WGSL's core `unpack2x16float`, which
// needs no `shader-f16` feature. The CPU backend holds each element as its exact value in float64.
// A number becomes an f16 value as torch's `.half()` makes one from a float32 tensor: rounded to
// float32, then to the nearest float16, ties to even, with subnormals.

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** The largest finite float16. */
export const F16_MAX = 65504;

/** float16 bits of `x` (via float32, nearest even); beyond ±65504 gives ±inf, NaN a quiet NaN. */
export function f16Bits(x: number): number {
  scratchF32[0] = x;
  const b = scratchU32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x7fffff;
  if (exp === 0xff) return mant ? sign | 0x7e00 : sign | 0x7c00;
  const e = exp - 112; // the f16 biased exponent (127 − 15)
  if (e >= 0x1f) return sign | 0x7c00;
  if (e >= 1) {
    let keep = (e << 10) | (mant >>> 13);
    const rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && keep & 1)) keep++; // a carry into the exponent is right (up to inf)
    return sign | keep;
  }
  // An f16 subnormal: the value is full·2^(exp − 150), in units of 2^−24.
  const s = 126 - exp;
  if (exp === 0 || s > 24) return sign; // f32 subnormals and anything below 2^−25 round to ±0
  const full = 0x800000 | mant;
  let keep = full >>> s;
  const rem = full & ((1 << s) - 1);
  const half = 1 << (s - 1);
  if (rem > half || (rem === half && keep & 1)) keep++;
  return sign | keep;
}

/** The value of float16 bits (exact). */
export function f16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** `x` rounded to the nearest float16 value (what an f16 tensor holds). */
export function f16Round(x: number): number {
  return f16Value(f16Bits(x));
}

/**
 * Float16 values of `data`, refusing (by index) a finite value that float16 cannot hold: an
 * f16 tensor never silently holds ±inf for a weight (load such a model with f32 weights).
 */
export function f16Values(data: ArrayLike<number>): Float64Array {
  const out = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = f16Round(data[i]);
    if (!Number.isFinite(v) && Number.isFinite(data[i])) {
      throw new Error(`f16 tensor: element ${i} = ${data[i]} is beyond float16's range ±${F16_MAX}`);
    }
    out[i] = v;
  }
  return out;
}

/** Words of an f16 tensor of `n` elements: two per word, the last one half used when n is odd. */
export function f16Words(n: number): number {
  return Math.ceil(n / 2);
}

/** f16 bit patterns packed into words (element 2i low, 2i + 1 high; an odd tail's high half 0). */
export function packF16Bits(bits: Uint16Array): Uint32Array {
  const words = new Uint32Array(f16Words(bits.length));
  new Uint16Array(words.buffer, 0, bits.length).set(bits);
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
    // A big-endian host: place the halves by arithmetic instead of by memory order.
    for (let w = 0; w < words.length; w++) words[w] = (bits[2 * w] ?? 0) | ((bits[2 * w + 1] ?? 0) << 16);
  }
  return words;
}

/** Numbers packed as f16 words (rounded by f16Values, which refuses out-of-range values). */
export function packF16(data: ArrayLike<number>): Uint32Array {
  const values = f16Values(data);
  return packF16Bits(Uint16Array.from(values, f16Bits));
}

/** The `n` values of packed f16 words. */
export function unpackF16(words: Uint32Array, n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const w = words[i >>> 1];
    out[i] = f16Value(i & 1 ? w >>> 16 : w & 0xffff);
  }
  return out;
}
