// The f16 tensor dtype (src/backend/f16.ts) on both backends: values round to the nearest float16
// as torch's .half() does, f16 bits from a weights file upload as they are (checked against the
// HF loader's own codec, src/model/hf/dtype.ts, an independent implementation), two values take
// one 32-bit word on the GPU, and views, copies, zeros and mixed-dtype readbacks keep their
// places. Exact equality throughout: nothing here computes.
import { describe, expect, it } from 'vitest';
import { f16Bits, f16Round, f16Value, F16_MAX } from '../../src/backend/f16.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import type { GpuTensor } from '../../src/backend/webgpu/gpuTensor.ts';
import { f16BitsToF32, f32Bits, f32BitsToF16Bits } from '../../src/model/hf/dtype.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';

/** Random values over float16's range: normal, subnormal (< 6.1e-5), ties, ±0, the extremes. */
function f16Samples(salt: number, n: number): Float64Array {
  const r = rng(salt);
  const special = [0, -0, 1, -1, F16_MAX, -F16_MAX, 2 ** -24, -(2 ** -24), 2 ** -14, 3 * 2 ** -25, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519, 1e-9];
  const out = Float64Array.from(randn(r, n).map((v, i) => v * 10 ** ((i % 11) - 6)));
  out.set(special.slice(0, Math.min(n, special.length)));
  return out;
}

describe('f16 codec', () => {
  it('rounds as the HF loader does (float32 first, then nearest even) on random float32 values', () => {
    const xs = f16Samples(1, 5000);
    for (const x of xs) expect(f16Bits(x)).toBe(f32BitsToF16Bits(f32Bits(x)));
    for (let h = 0; h < 0x10000; h += 7) if ((h & 0x7c00) !== 0x7c00) expect(f16Value(h)).toBe(f16BitsToF32(h));
    expect(f16Round(1 + 2 ** -11)).toBe(1); // a tie rounds to even
    expect(f16Round(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(f16Round(65519)).toBe(F16_MAX); // below the rounding boundary to inf
    expect(f16Round(65520)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe.each(BACKENDS)('f16 tensors on %s', (name, makeBackend) => {
  it('hold each value rounded to float16, exactly, for odd and even lengths', async () => {
    const be = await makeBackend();
    for (const n of [1, 2, 7, 300]) {
      const xs = f16Samples(n, n);
      const t = be.tensor(xs, [n], 'f16');
      expect(t.dtype).toBe('f16');
      expect(Array.from(await be.read(t))).toEqual(Array.from(xs, f16Round));
    }
  });

  it('take f16 bits as they are: read back as the loader decodes them', async () => {
    const be = await makeBackend();
    const xs = f16Samples(3, 1001);
    const bits = Uint16Array.from(xs, (x) => f32BitsToF16Bits(f32Bits(x)));
    const t = be.tensorF16Bits(bits, [7, 143]);
    expect(t.shape).toEqual([7, 143]);
    expect(Array.from(await be.read(t))).toEqual(Array.from(bits, f16BitsToF32));
    if (name === 'webgpu') expect((t as GpuTensor).bytes).toBe(4 * 501); // two values a word
    expect(() => be.tensorF16Bits(bits, [1000])).toThrow(/length 1001 does not match/);
  });

  it('refuse a value beyond ±65504, naming it', async () => {
    const be = await makeBackend();
    expect(() => be.tensor([1, 2, 70000], [3], 'f16')).toThrow(/element 2 = 70000 is beyond float16's range/);
    const t = be.tensor([1, 2, 3], [3], 'f16');
    expect(() => be.write(t, [0, -1e6, 0])).toThrow(/element 1 = -1000000/);
  });

  it('views start on 128-value boundaries; copies, zeros and mixed readbacks keep their places', async () => {
    const be = await makeBackend();
    const xs = f16Samples(5, 384);
    const base = be.tensor(xs, [384], 'f16');
    const view = be.view(base, 128, [2, 100]);
    expect(() => be.view(base, 64, [10])).toThrow(/multiple of 128/);
    const copy = be.zeros([2, 100], 'f16');
    be.copy(view, copy);
    expect(() => be.copy(view, be.zeros([200]))).toThrow(/dtype f16 into f32/);
    const odd = be.tensor([0.1, 0.2, 0.3], [3], 'f16');
    const after = be.tensor([1.5, -2.5], [2]);
    const ids = be.tensor([7, -3], [2], 'i32');
    const zero = be.zeros([5], 'f16');
    const [rv, rc, ro, ra, ri, rz] = await be.readMany([view, copy, odd, after, ids, zero]);
    const want = Array.from(xs.slice(128, 328), f16Round);
    expect(Array.from(rv)).toEqual(want);
    expect(Array.from(rc)).toEqual(want);
    expect(Array.from(ro)).toEqual([0.1, 0.2, 0.3].map(f16Round));
    expect(Array.from(ra)).toEqual([1.5, -2.5]);
    expect(Array.from(ri)).toEqual([7, -3]);
    expect(Array.from(rz)).toEqual([0, 0, 0, 0, 0]);
  });

  it('count the bytes they move: two a value, rounded up to a word', async () => {
    const be = await makeBackend();
    const before = { ...be.counters() };
    const t: Tensor = be.tensor(new Float64Array(5).fill(0.5), [5], 'f16');
    await be.read(t);
    const after = be.counters();
    expect(after.uploadBytes - before.uploadBytes).toBe(12);
    expect(after.readbackBytes - before.readbackBytes).toBe(12);
  });
});
