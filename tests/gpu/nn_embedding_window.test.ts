// embeddingWindow (the embedding of columns [start, start+len) of (B,S) tokens/positions, one
// dispatch) on both backends against the float64 composition embeddingRef(sliceSeqRef(·)).
import { describe, expect, it } from 'vitest';
import { embeddingRef } from '../../src/reference/nn/embedding.ts';
import { sliceSeqRef } from '../../src/reference/nn/slice.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { embeddingWindow } from '../../src/ops/embedding.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));

describe.each(BACKENDS)('embeddingWindow on %s', (_name, makeBackend) => {
  const [B, S, V, P, D] = [5, 9, 11, 9, 20];
  // first column, a middle column, the last column (the rollout's case: len 1), a span, everything
  for (const [start, len] of [
    [0, 1],
    [4, 1],
    [S - 1, 1],
    [2, 5],
    [0, S],
  ] as const) {
    it(`B=${B} S=${S} D=${D}: columns [${start}, ${start + len}), out-of-range ids and positions clamped`, async () => {
      const be = await makeBackend();
      const r = rng(start * 31 + len);
      const n = B * S;
      // out-of-range token ids (−2, V + 4) and positions (−1 = padding, ≥ P) exercise both clamps
      const tokens = Float64Array.from({ length: n }, (_, i) => (i % 5 === 0 ? -2 : i % 13 === 0 ? V + 4 : r.int(0, V)));
      const positions = Float64Array.from({ length: n }, (_, i) => (i % 7 === 0 ? -1 : i % 11 === 0 ? P + 3 : r.int(0, P)));
      const wte = f32(randn(r, V * D));
      const wpe = f32(randn(r, P * D));
      const out = embeddingWindow(be, {
        tokens: be.tensor(tokens, [B, S], 'i32'),
        positions: be.tensor(positions, [B, S], 'i32'),
        start,
        len,
        wte: be.tensor(wte, [V, D]),
        wpe: be.tensor(wpe, [P, D]),
      });
      expect(out.shape).toEqual([B * len, D]);
      const tok = sliceSeqRef(tokens, B, S, 1, start, len);
      const pos = sliceSeqRef(positions, B, S, 1, start, len);
      // one f32 add per element: element tolerance
      expectClose(await be.read(out), embeddingRef(tok, pos, wte, wpe, V, P, D), TOL.elem.rtol, TOL.elem.atol, 'out');
    });
  }

  it('rejects a window outside the sequence', async () => {
    const be = await makeBackend();
    const t = be.zeros([2, 4], 'i32');
    const w = be.zeros([3, 2]);
    expect(() => embeddingWindow(be, { tokens: t, positions: t, start: 3, len: 2, wte: w, wpe: be.zeros([4, 2]) })).toThrow(/embeddingWindow: slice \[3, 5\)/);
    expect(() => embeddingWindow(be, { tokens: t, positions: t, start: -1, len: 1, wte: w, wpe: be.zeros([4, 2]) })).toThrow(/embeddingWindow/);
  });
});
