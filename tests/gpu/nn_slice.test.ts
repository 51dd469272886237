// sliceSeq, sliceSeqBackward, gatherRows on both backends against src/reference/nn/slice.ts.
import { describe, expect, it } from 'vitest';
import { gatherRowsRef, sliceSeqBackwardRef, sliceSeqRef } from '../../src/reference/nn/slice.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';
import { gatherRows, sliceSeq, sliceSeqBackward } from '../../src/ops/slice.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));
// Pure data movement: results must be bit-exact.
const exact = (a: Float64Array, e: Float64Array) => expect(Array.from(a)).toEqual(Array.from(e));

describe.each(BACKENDS)('slices and gathers on %s', (_name, makeBackend) => {
  for (const [B, S, D, start, len] of [
    [3, 8, 5, 3, 5],
    [4, 33, 1, 16, 17],
    [2, 6, 4, 5, 1],
    [5, 40, 24, 0, 40],
  ] as const) {
    it(`sliceSeq B=${B} S=${S} D=${D} [${start}, ${start + len}) and its adjoint`, async () => {
      const be = await makeBackend();
      const r = rng(B * S + D + start);
      const x = f32(randn(r, B * S * D));
      const shape = D === 1 ? [B, S] : [B, S, D];
      const y = sliceSeq(be, { x: be.tensor(x, shape), start, len });
      expect(y.shape).toEqual(D === 1 ? [B, len] : [B, len, D]);
      const g = f32(randn(r, B * len * D));
      const gx = sliceSeqBackward(be, { grad: be.tensor(g, y.shape), seqLen: S, start });
      expect(gx.shape).toEqual(shape);
      const [ry, rgx] = await be.readMany([y, gx]);
      exact(ry, sliceSeqRef(x, B, S, D, start, len));
      exact(rgx, sliceSeqBackwardRef(g, B, S, D, start, len));
    });
  }

  it('sliceSeq keeps i32 tensors exact (token ids)', async () => {
    const be = await makeBackend();
    const seq = Float64Array.from({ length: 12 }, (_, i) => ((i * 7919) % 1000003) - 500);
    const y = sliceSeq(be, { x: be.tensor(seq, [2, 6], 'i32'), start: 2, len: 3 });
    expect(y.dtype).toBe('i32');
    exact(await be.read(y), sliceSeqRef(seq, 2, 6, 1, 2, 3));
  });

  it('gatherRows on f32 (B,S,D) and i32 (B,S) tensors, out-of-range index gives zeros', async () => {
    const be = await makeBackend();
    const r = rng(3);
    const N = 9,
      S = 7,
      D = 3;
    const x = f32(randn(r, N * S * D));
    const idx = [8, 0, 3, 3, 100, -1, 5];
    const ti = be.tensor(idx, [idx.length], 'i32');
    const y = gatherRows(be, { x: be.tensor(x, [N, S, D]), index: ti });
    expect(y.shape).toEqual([idx.length, S, D]);
    const toks = Float64Array.from({ length: N * S }, () => r.int(0, 64));
    const yt = gatherRows(be, { x: be.tensor(toks, [N, S], 'i32'), index: ti });
    expect(yt.dtype).toBe('i32');
    const [ry, ryt] = await be.readMany([y, yt]);
    exact(ry, gatherRowsRef(x, N, S * D, idx));
    exact(ryt, gatherRowsRef(toks, N, S, idx));
    expect(Array.from(ry.slice(4 * S * D, 6 * S * D)).every((v) => v === 0)).toBe(true);
  });

  it('gatherRows copies i32 words bit-exactly: negative, large and extreme ints', async () => {
    const be = await makeBackend();
    const r = rng(11);
    const N = 6,
      S = 5,
      M = 8;
    const extremes = [-2147483648, 2147483647, -1, 0, 1, 16777217, -16777217, 2 ** 30 + 3];
    const ints = Float64Array.from({ length: N * S }, (_, i) => (i < extremes.length ? extremes[i] : r.nextU32() | 0));
    const idx = Array.from({ length: M }, () => r.int(-1, N + 1)); // may point outside [0, N)
    const y = gatherRows(be, { x: be.tensor(ints, [N, S], 'i32'), index: be.tensor(idx, [M], 'i32') });
    expect(y.dtype).toBe('i32');
    expect(y.shape).toEqual([M, S]);
    const got = await be.read(y);
    exact(got, gatherRowsRef(ints, N, S, idx));
    // Every int above is exact in float64 but most are not in float32: a float path would round them.
    expect(Array.from(got).every((v) => Number.isInteger(v) && v >= -2147483648 && v <= 2147483647)).toBe(true);
  });

  it('rejects a slice outside the sequence', async () => {
    const be = await makeBackend();
    expect(() => sliceSeq(be, { x: be.zeros([2, 4]), start: 3, len: 2 })).toThrow(/outside/);
  });
});
