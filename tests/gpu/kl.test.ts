import { describe, expect, it } from 'vitest';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { klGradRef, klRef } from '../../src/reference/kl.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { kl, klGrad } from '../../src/ops/kl.ts';

describe.each(BACKENDS)('kl estimators on %s', (_name, makeBackend) => {
  it.each(KL_ESTIMATORS)('%s matches the float64 reference on random inputs', async (est) => {
    const be = await makeBackend();
    const r = rng(1);
    const B = 5,
      A = 37;
    const logp = randn(r, B * A, 2).map((x) => -Math.abs(x));
    const ref = randn(r, B * A, 2).map((x) => -Math.abs(x));
    // round inputs to f32 so both sides see the same numbers
    const lp32 = Float64Array.from(new Float32Array(logp));
    const rf32 = Float64Array.from(new Float32Array(ref));
    const tl = be.tensor(lp32, [B, A]);
    const tr = be.tensor(rf32, [B, A]);
    const [value, grad] = await be.readMany([kl(be, { logprobs: tl, refLogprobs: tr, estimator: est }), klGrad(be, { logprobs: tl, refLogprobs: tr, estimator: est })]);
    expectClose(value, klRef(lp32, rf32, est), TOL.elem.rtol, TOL.elem.atol, `${est} kl`);
    expectClose(grad, klGradRef(lp32, rf32, est), TOL.elem.rtol, TOL.elem.atol, `${est} grad`);
  });

  it('k1+ / k3+ keep k1 / k3 values with the k2 gradient d, clamps included; k1_clamped is one-sided', async () => {
    const be = await makeBackend();
    const d = [-39, -2, -0.5, 0, 0.5, 2, 39];
    const ref = d.map(() => -1);
    const logp = d.map((x) => x - 1);
    const t = (x: number[]) => be.tensor(x, [1, d.length]);
    const get = async (est: 'k1+' | 'k3+' | 'k1_clamped') =>
      be.readMany([kl(be, { logprobs: t(logp), refLogprobs: t(ref), estimator: est }), klGrad(be, { logprobs: t(logp), refLogprobs: t(ref), estimator: est })]);
    const [k1v, k1g] = await get('k1+');
    expectClose(k1v, d, TOL.elem.rtol, TOL.elem.atol, 'k1+ value');
    expectClose(k1g, d, TOL.elem.rtol, TOL.elem.atol, 'k1+ grad');
    const [k3v, k3g] = await get('k3+');
    expectClose(k3v, klRef(Float64Array.from(logp), Float64Array.from(ref), 'k3'), TOL.elem.rtol, TOL.elem.atol, 'k3+ value = k3');
    expect(k3v[0]).toBe(10); // the clamp still binds the value…
    expectClose(k3g, d, TOL.elem.rtol, TOL.elem.atol, 'k3+ grad'); // …but the straight-through gradient is d
    const [cv, cg] = await get('k1_clamped');
    expectClose(
      cv,
      d.map((x) => Math.max(x, 0)),
      TOL.elem.rtol,
      TOL.elem.atol,
      'k1_clamped value',
    );
    expect(Array.from(cg)).toEqual(d.map((x) => (x > 0 ? 1 : 0)));
  });

  it('k3 clamps extreme differences without NaN and with zero gradient', async () => {
    const be = await makeBackend();
    const logp = [0, -50, -1e4, 0, -3];
    const ref = [-50, 0, 0, -1e4, -3];
    const tl = be.tensor(logp, [1, 5]);
    const tr = be.tensor(ref, [1, 5]);
    const [value, grad] = await be.readMany([kl(be, { logprobs: tl, refLogprobs: tr, estimator: 'k3' }), klGrad(be, { logprobs: tl, refLogprobs: tr, estimator: 'k3' })]);
    expectClose(value, klRef(logp, ref, 'k3'), TOL.elem.rtol, TOL.elem.atol, 'k3 extreme');
    expect(value[1]).toBe(10); // d = −50 → clamp at +10
    expect(value[4]).toBe(0);
    expect(Array.from(grad.slice(0, 4))).toEqual([0, 0, 0, 0]);
  });
});
