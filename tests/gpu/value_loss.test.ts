// valueLoss on both backends against the float64 reference (src/reference/valueLoss.ts).
// Tolerances: stats 1e-4 relative (reductions), gradValues 1e-5 relative element-wise.
import { describe, expect, it } from 'vitest';
import { LOSS_AGGS } from '../../src/reference/aggregate.ts';
import { VALUE_STATS, valueLoss } from '../../src/ops/valueLoss.ts';
import type { ValueLossParams } from '../../src/reference/valueLoss.ts';
import { valueLossRef } from '../../src/reference/valueLoss.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL } from '../helpers/random.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));

describe.each(BACKENDS)('valueLoss on %s', (_name, makeBackend) => {
  async function check(v: Float64Array, old: Float64Array, ret: Float64Array, mask: Float64Array, B: number, A: number, params: ValueLossParams, what: string) {
    const be = await makeBackend();
    const t = (x: Float64Array) => be.tensor(x, [B, A]);
    const out = valueLoss(be, { values: t(v), oldValues: t(old), returns: t(ret), actionMask: t(mask), params });
    const [stats, grad] = await be.readMany([out.stats, out.gradValues]);
    const want = valueLossRef(v, old, ret, mask, B, A, params);
    expect(out.stats.shape).toEqual([2]);
    expectClose(stats, want.stats, TOL.reduce.rtol, TOL.reduce.atol, `${what} stats`);
    expectClose(grad, want.gradValues, TOL.elem.rtol, TOL.elem.atol, `${what} gradValues`);
    return { stats, grad, want };
  }

  const sizes: [number, number][] = [
    [4, 9],
    [40, 70],
  ];
  const configs = LOSS_AGGS.flatMap((agg) => [0.2, null].map((clip) => ({ clip, agg })));
  for (const [B, A] of sizes) {
    it.each(configs)(`random batch B=${B} A=${A}: %o`, async (params) => {
      const r = rng(B * A + 3);
      const old = f32(randn(r, B * A));
      const v = f32(Float64Array.from(old, (o) => o + r.normal() * 0.4));
      const ret = f32(randn(r, B * A));
      const mask = rightPaddedMask(r, B, A, 1);
      for (let a = 0; a < A; a++) mask[a] = 0; // an all-masked row
      for (let i = 0; i < B * A; i++) if (!mask[i]) v[i] = NaN; // garbage under the mask
      // Row 1 always has a token at a = 0: make it a clipped one (v moved by 1 > ε from old,
      // return beyond it) so the clipped branch is exercised whatever the random draw.
      v[A] = Math.fround(old[A] + 1);
      ret[A] = Math.fround(old[A] + 3);
      const { want } = await check(v, old, ret, mask, B, A, params, `B${B}A${A}`);
      if (params.clip !== null) expect(want.stats[VALUE_STATS.clipfrac]).toBeGreaterThan(0);
    });
  }

  it.each(LOSS_AGGS)('hand-computed tokens (%s)', async (agg) => {
    // ε = 0.5. (v 2, old 0, R 0): vclip 0.5, l1 4 ≥ l2 0.25 → L 2, g 2.
    // (v 2, old 0, R 3): vclip 0.5, l2 6.25 > l1 1 → L 3.125, clipped, g 0.
    // (v 0.2, old 0, R 1): inside → L 0.32, g −0.8.
    const { stats, grad } = await check(f32([2, 2, 0.2]), f32([0, 0, 0]), f32([0, 3, 1]), f32([1, 1, 1]), 1, 3, { clip: 0.5, agg }, 'hand');
    // one full row of three tokens: every aggregation mode divides by 3 except seq-mean-token-sum
    // (the row's sum over one row)
    const scale = agg === 'seq-mean-token-sum' ? 1 : 1 / 3;
    expectClose(stats, [(2 + 3.125 + 0.32) * scale, 1 / 3], TOL.reduce.rtol, TOL.reduce.atol, 'hand stats');
    expectClose(grad, [2 * scale, 0, -0.8 * scale], 1e-6, 1e-7, 'hand grads');
  });

  it('one-token responses, one unmasked token, and everything masked', async () => {
    const r = rng(13);
    await check(f32(randn(r, 5)), f32(randn(r, 5)), f32(randn(r, 5)), Float64Array.from([1, 0, 1, 1, 1]), 5, 1, { clip: 0.1, agg: 'token-mean' }, 'A=1');
    const one = new Float64Array(12);
    one[2] = 1;
    for (const agg of LOSS_AGGS) await check(f32(randn(r, 12)), f32(randn(r, 12)), f32(randn(r, 12)), one, 3, 4, { clip: 0.1, agg }, `one token ${agg}`);
    const { stats, grad } = await check(
      f32(randn(r, 12)),
      f32(randn(r, 12)),
      f32(randn(r, 12)),
      new Float64Array(12),
      3,
      4,
      { clip: 0.1, agg: 'seq-mean-token-mean' },
      'all masked',
    );
    expect(Array.from(stats)).toEqual([0, 0]);
    expect(Array.from(grad)).toEqual(new Array(12).fill(0));
  });

  it('rejects a non-positive clip before any GPU work', async () => {
    const be = await makeBackend();
    const z = be.zeros([2, 3]);
    const before = be.counters().dispatches;
    expect(() => valueLoss(be, { values: z, oldValues: z, returns: z, actionMask: z, params: { clip: 0, agg: 'token-mean' } })).toThrow(/clip must be/);
    expect(() => valueLoss(be, { values: z, oldValues: z, returns: z, actionMask: z, params: { clip: -1, agg: 'token-mean' } })).toThrow(/clip/);
    expect(() => valueLoss(be, { values: z, oldValues: z, returns: be.zeros([2, 2]), actionMask: z, params: { clip: 0.2, agg: 'token-mean' } })).toThrow(/returns/);
    expect(be.counters().dispatches).toBe(before);
  });
});
