// The float formats of Hugging Face weights and their conversions, bit-exact:
//   BF16 → F32 and F16 → F32 are exact (every value is representable);
//   F32/BF16 → F16 rounds to nearest, ties to even (IEEE's default, what torch's .half() does), with
//     subnormals; a finite value beyond ±65504 becomes ±inf, which the caller reports as a problem;
//   F32 → BF16 rounds to nearest even (torch's .bfloat16()), used to write synthetic folders.
// Byte order is little-endian everywhere (safetensors stores little-endian elements).

export type HfDtype = 'BF16' | 'F16' | 'F32';
export const HF_DTYPES: readonly HfDtype[] = ['BF16', 'F16', 'F32'];
export const DTYPE_BYTES: Record<HfDtype, number> = { BF16: 2, F16: 2, F32: 4 };

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

export function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0];
}

export function f32FromBits(bits: number): number {
  scratchU32[0] = bits >>> 0;
  return scratchF32[0];
}

/** bfloat16 bits → the float32 value (exact: bf16 is the top half of an f32). */
export function bf16BitsToF32(h: number): number {
  return f32FromBits((h & 0xffff) << 16);
}

/** float16 bits → the float32 value (exact). */
export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** float32 bits → float16 bits, round to nearest even; overflow gives ±inf, NaN stays NaN (quiet). */
export function f32BitsToF16Bits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return mant ? sign | 0x7e00 : sign | 0x7c00;
  const e = exp - 112; // f16 biased exponent (127 − 15)
  if (e >= 0x1f) return sign | 0x7c00;
  if (e >= 1) {
    let keep = (e << 10) | (mant >>> 13);
    const rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && keep & 1)) keep++; // a carry into the exponent is right (up to inf)
    return sign | keep;
  }
  // f16 subnormal: the value is full·2^(exp − 126) units of 2^−24
  const s = 126 - exp;
  if (exp === 0 || s > 24) return sign; // f32 subnormals and anything below 2^−25 round to ±0
  const full = 0x800000 | mant;
  let keep = full >>> s;
  const rem = full & ((1 << s) - 1);
  const half = 1 << (s - 1);
  if (rem > half || (rem === half && keep & 1)) keep++;
  return sign | keep;
}

/** float32 bits → bfloat16 bits, round to nearest even; NaN stays a quiet NaN. */
export function f32BitsToBf16Bits(x: number): number {
  if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) return ((x >>> 16) & 0x8000) | 0x7fc0;
  const lsb = (x >>> 16) & 1;
  return ((x + 0x7fff + lsb) >>> 16) & 0xffff;
}

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Little-endian u16 elements of a byte range (copied when unaligned or on a big-endian host). */
export function u16View(bytes: Uint8Array): Uint16Array {
  const n = bytes.length >>> 1;
  if (HOST_LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) return new Uint16Array(bytes.buffer, bytes.byteOffset, n);
  const out = new Uint16Array(n);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = dv.getUint16(2 * i, true);
  return out;
}

/** Little-endian f32 elements of a byte range (copied when unaligned or on a big-endian host). */
export function f32View(bytes: Uint8Array): Float32Array {
  const n = bytes.length >>> 2;
  if (HOST_LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, n);
  const out = new Float32Array(n);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
  return out;
}

/** Raw little-endian tensor bytes of `dtype` → float32 values (exact for all three dtypes). */
export function decodeToF32(bytes: Uint8Array, dtype: HfDtype): Float32Array {
  if (dtype === 'F32') return Float32Array.from(f32View(bytes));
  const h = u16View(bytes);
  const out = new Float32Array(h.length);
  if (dtype === 'BF16') {
    const u = new Uint32Array(out.buffer);
    for (let i = 0; i < h.length; i++) u[i] = h[i] << 16;
  } else {
    for (let i = 0; i < h.length; i++) out[i] = f16BitsToF32(h[i]);
  }
  return out;
}

export interface F16Conversion {
  /** float16 bits, one per element. */
  bits: Uint16Array;
  /** Finite inputs that became ±inf (beyond ±65504). */
  overflowCount: number;
  /** Index and value of the first such element (−1 / NaN when none). */
  firstOverflow: { index: number; value: number };
}

/** Raw tensor bytes of `dtype` → float16 bits (round to nearest even), counting overflows to inf. */
export function decodeToF16Bits(bytes: Uint8Array, dtype: HfDtype): F16Conversion {
  const res: F16Conversion = { bits: new Uint16Array(0), overflowCount: 0, firstOverflow: { index: -1, value: Number.NaN } };
  if (dtype === 'F16') {
    res.bits = Uint16Array.from(u16View(bytes));
    return res;
  }
  const n = dtype === 'F32' ? bytes.length >>> 2 : bytes.length >>> 1;
  const out = new Uint16Array(n);
  const f32 = dtype === 'F32' ? f32View(bytes) : null;
  const h = dtype === 'BF16' ? u16View(bytes) : null;
  for (let i = 0; i < n; i++) {
    const bits = f32 ? f32Bits(f32[i]) : h![i] << 16;
    const r = f32BitsToF16Bits(bits);
    out[i] = r;
    // finite in, infinite out
    if ((r & 0x7fff) === 0x7c00 && (bits & 0x7f800000) !== 0x7f800000) {
      if (res.overflowCount === 0) res.firstOverflow = { index: i, value: f32FromBits(bits) };
      res.overflowCount++;
    }
  }
  res.bits = out;
  return res;
}

/** float values → little-endian bytes of `dtype` (rounding to nearest even for BF16/F16). */
export function encodeFromNumbers(values: ArrayLike<number>, dtype: HfDtype): Uint8Array {
  const n = values.length;
  const out = new Uint8Array(n * DTYPE_BYTES[dtype]);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < n; i++) {
    if (dtype === 'F32') dv.setFloat32(4 * i, values[i], true);
    else {
      const bits = f32Bits(values[i]);
      dv.setUint16(2 * i, dtype === 'BF16' ? f32BitsToBf16Bits(bits) : f32BitsToF16Bits(bits), true);
    }
  }
  return out;
}
