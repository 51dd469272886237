// embedding forward/backward on both backends against src/reference/nn/embedding.ts.
import { describe, expect, it } from 'vitest';
import { embeddingBackwardRef, embeddingRef } from '../../src/reference/nn/embedding.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { embedding, embeddingBackward } from '../../src/ops/embedding.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));

describe.each(BACKENDS)('embedding on %s', (_name, makeBackend) => {
  for (const [B, S, V, P, D] of [
    [2, 5, 7, 5, 3],
    [6, 24, 40, 32, 48],
  ] as const) {
    it(`B=${B} S=${S} V=${V} P=${P} D=${D}: forward, backward accumulates twice, positions clamped`, async () => {
      const be = await makeBackend();
      const r = rng(B * S * V + D);
      const R = B * S;
      const tokens = Float64Array.from({ length: R }, () => r.int(0, V));
      // include out-of-range positions (−1 = padding convention, ≥ P) to exercise the clamp
      const positions = Float64Array.from({ length: R }, (_, i) => (i % 7 === 0 ? -1 : i % 11 === 0 ? P + 3 : r.int(0, P)));
      const wte = f32(randn(r, V * D));
      const wpe = f32(randn(r, P * D));
      const gout = f32(randn(r, R * D));
      const tt = be.tensor(tokens, [B, S], 'i32');
      const tp = be.tensor(positions, [B, S], 'i32');
      const out = embedding(be, { tokens: tt, positions: tp, wte: be.tensor(wte, [V, D]), wpe: be.tensor(wpe, [P, D]) });
      expect(out.shape).toEqual([R, D]);
      expectClose(await be.read(out), embeddingRef(tokens, positions, wte, wpe, V, P, D), TOL.elem.rtol, TOL.elem.atol, 'out');

      const gWte = be.zeros([V, D]);
      const gWpe = be.zeros([P, D]);
      const tg = be.tensor(gout, [R, D]);
      embeddingBackward(be, { gradOut: tg, tokens: tt, positions: tp, gradWte: gWte, gradWpe: gWpe });
      const ref = embeddingBackwardRef(gout, tokens, positions, V, P, D);
      const [a1, b1] = await be.readMany([gWte, gWpe]);
      expectClose(a1, ref.gradWte, TOL.reduce.rtol, TOL.reduce.atol, 'gradWte');
      expectClose(b1, ref.gradWpe, TOL.reduce.rtol, TOL.reduce.atol, 'gradWpe');
      embeddingBackward(be, { gradOut: tg, tokens: tt, positions: tp, gradWte: gWte, gradWpe: gWpe });
      const [a2, b2] = await be.readMany([gWte, gWpe]);
      expectClose(
        a2,
        ref.gradWte.map((v) => 2 * v),
        TOL.reduce.rtol,
        TOL.reduce.atol,
        'gradWte twice',
      );
      expectClose(
        b2,
        ref.gradWpe.map((v) => 2 * v),
        TOL.reduce.rtol,
        TOL.reduce.atol,
        'gradWpe twice',
      );
    });
  }

  it('backward into views of one flat gradient buffer (wte and wpe tied into it)', async () => {
    const be = await makeBackend();
    const r = rng(77);
    const V = 5,
      P = 4,
      D = 8,
      R = 9;
    const tokens = Float64Array.from({ length: R }, () => r.int(0, V));
    const positions = Float64Array.from({ length: R }, (_, i) => i % P);
    const gout = f32(randn(r, R * D));
    const grads = be.zeros([192]);
    embeddingBackward(be, {
      gradOut: be.tensor(gout, [R, D]),
      tokens: be.tensor(tokens, [R], 'i32'),
      positions: be.tensor(positions, [R], 'i32'),
      gradWte: be.view(grads, 0, [V, D]),
      gradWpe: be.view(grads, 64, [P, D]),
    });
    const ref = embeddingBackwardRef(gout, tokens, positions, V, P, D);
    const expected = new Float64Array(192);
    expected.set(ref.gradWte, 0);
    expected.set(ref.gradWpe, 64);
    expectClose(await be.read(grads), expected, TOL.reduce.rtol, TOL.reduce.atol, 'flat grads');
  });
});
