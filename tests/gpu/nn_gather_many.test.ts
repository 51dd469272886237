// gatherRowsMany on both backends against src/reference/nn/slice.ts (gatherRowsRef per tensor):
// mixed dtypes and widths, every chunking of up to seven tensors, and the argument checks.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { DType, Tensor } from '../../src/backend/tensor.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { gatherRowsRef } from '../../src/reference/nn/slice.ts';
import type { Rng } from '../../src/util/rng.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';
import { gatherRowsMany } from '../../src/ops/slice.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));
// Pure data movement: results must be bit-exact.
const exact = (a: Float64Array, e: Float64Array) => expect(Array.from(a)).toEqual(Array.from(e));

interface Input {
  data: Float64Array;
  shape: number[];
  dtype: DType;
  width: number; // words per row
}

/** A random (N, …) tensor: f32 or i32, rank 1 to 3, 1 to 12 words per row. */
function randomInput(r: Rng, N: number): Input {
  const dtype: DType = r.int(0, 2) === 0 ? 'f32' : 'i32';
  const tail = [[], [r.int(1, 13)], [r.int(1, 4), r.int(1, 5)]][r.int(0, 3)];
  const width = tail.reduce((a, b) => a * b, 1);
  const n = N * width;
  const data = dtype === 'f32' ? f32(randn(r, n)) : Float64Array.from({ length: n }, () => r.nextU32() | 0);
  return { data, shape: [N, ...tail], dtype, width };
}

async function gatherAndCompare(be: Backend, inputs: Input[], N: number, index: number[]): Promise<void> {
  const xs = inputs.map((x) => be.tensor(x.data, x.shape, x.dtype));
  const ys = gatherRowsMany(be, { xs, index: be.tensor(index, [index.length], 'i32') });
  expect(ys.length).toBe(inputs.length);
  ys.forEach((y, k) => {
    expect(y.dtype).toBe(inputs[k].dtype);
    expect(y.shape).toEqual([index.length, ...inputs[k].shape.slice(1)]);
  });
  const got = await be.readMany(ys);
  for (const [k, g] of got.entries()) exact(g, gatherRowsRef(inputs[k].data, N, inputs[k].width, index));
  be.dispose(...xs, ...ys);
}

describe.each(BACKENDS)('gatherRowsMany on %s', (name, makeBackend) => {
  for (let k = 1; k <= 7; k++) {
    it(`${k} tensors of mixed dtypes and widths, repeated rows, in ⌈${k}/3⌉ dispatches on WebGPU`, async () => {
      const be = await makeBackend();
      const r = rng(100 + k);
      const N = r.int(2, 9);
      const inputs = Array.from({ length: k }, () => randomInput(r, N));
      const M = r.int(N, 2 * N + 1); // more rows than N: some repeat
      const index = Array.from({ length: M }, () => r.int(0, N));
      const before = be instanceof WebGpuBackend ? be.counters().dispatches : 0;
      await gatherAndCompare(be, inputs, N, index);
      if (be instanceof WebGpuBackend) expect(be.counters().dispatches - before, name).toBe(Math.ceil(k / 3));
    });
  }

  it('one row (n = 1), and an index outside [0, N) gives a zero row as gatherRows does', async () => {
    const be = await makeBackend();
    const r = rng(200);
    const N = 5;
    const inputs = Array.from({ length: 3 }, () => randomInput(r, N));
    await gatherAndCompare(be, inputs, N, [r.int(0, N)]);
    await gatherAndCompare(be, inputs, N, [N, -1, r.int(0, N), N + 7, 0]);
  });

  it('copies i32 words bit-exactly beside f32 ones: negative, large and extreme ints', async () => {
    const be = await makeBackend();
    const r = rng(201);
    const N = 4;
    const extremes = [-2147483648, 2147483647, -1, 0, 1, 16777217, -16777217, 2 ** 30 + 3];
    const ints: Input = { data: Float64Array.from(extremes), shape: [N, 2], dtype: 'i32', width: 2 };
    const floats: Input = { data: f32(randn(r, N * 3)), shape: [N, 3], dtype: 'f32', width: 3 };
    await gatherAndCompare(be, [floats, ints, floats, ints], N, [3, 0, 2, 1, 3, 3]);
  });

  it('refuses an empty list, tensors with different row counts, a float index and a non-32-bit dtype', async () => {
    const be = await makeBackend();
    const index = be.tensor([0, 1], [2], 'i32');
    expect(() => gatherRowsMany(be, { xs: [], index })).toThrow(/at least one tensor/);
    expect(() => gatherRowsMany(be, { xs: [be.zeros([4, 2]), be.zeros([3, 2])], index })).toThrow(/xs\[1\]: expected 4 rows/);
    expect(() => gatherRowsMany(be, { xs: [be.zeros([4, 2])], index: be.tensor([0, 1], [2]) })).toThrow(/index/);
    const odd = { shape: [4, 2], size: 8, dtype: 'u8' } as unknown as Tensor; // checks run before any kernel
    expect(() => gatherRowsMany(be, { xs: [be.zeros([4, 2]), odd], index })).toThrow(/xs\[1\]: expected dtype f32 or i32/);
  });
});
