import { describe, expect, it } from 'vitest';
import { KL_ESTIMATORS } from '../../src/backend/ppoOps.ts';
import { klGradRef, klRef } from '../../src/reference/kl.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';

describe.each(BACKENDS)('kl estimators on %s', (_name, makeBackend) => {
  it.each(KL_ESTIMATORS)('%s matches the float64 reference on random inputs', async (est) => {
    const be = await makeBackend();
    const r = rng(1);
    const B = 5, A = 37;
    const logp = randn(r, B * A, 2).map((x) => -Math.abs(x));
    const ref = randn(r, B * A, 2).map((x) => -Math.abs(x));
    // round inputs to f32 so both sides see the same numbers
    const lp32 = Float64Array.from(new Float32Array(logp));
    const rf32 = Float64Array.from(new Float32Array(ref));
    const tl = be.tensor(lp32, [B, A]);
    const tr = be.tensor(rf32, [B, A]);
    const [kl, grad] = await be.readMany([be.ppo.kl(tl, tr, est), be.ppo.klGrad(tl, tr, est)]);
    expectClose(kl, klRef(lp32, rf32, est), TOL.elem.rtol, TOL.elem.atol, `${est} kl`);
    expectClose(grad, klGradRef(lp32, rf32, est), TOL.elem.rtol, TOL.elem.atol, `${est} grad`);
  });

  it('k3 clamps extreme differences without NaN and with zero gradient', async () => {
    const be = await makeBackend();
    const logp = [0, -50, -1e4, 0, -3];
    const ref = [-50, 0, 0, -1e4, -3];
    const tl = be.tensor(logp, [1, 5]);
    const tr = be.tensor(ref, [1, 5]);
    const [kl, grad] = await be.readMany([be.ppo.kl(tl, tr, 'k3'), be.ppo.klGrad(tl, tr, 'k3')]);
    expectClose(kl, klRef(logp, ref, 'k3'), TOL.elem.rtol, TOL.elem.atol, 'k3 extreme');
    expect(kl[1]).toBe(10); // d = −50 → clamp at +10
    expect(kl[4]).toBe(0);
    expect(Array.from(grad.slice(0, 4))).toEqual([0, 0, 0, 0]);
  });
});
