// gradNorm and AdamW on both backends against src/reference/nn/optim.ts.
import { describe, expect, it } from 'vitest';
import type { AdamWParams } from '../../src/reference/nn/optim.ts';
import { adamwRef, gradNormRef } from '../../src/reference/nn/optim.ts';
import { BACKENDS, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { adamw, gradNorm } from '../../src/ops/optim.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(x)));

describe.each(BACKENDS)('optimiser on %s', (_name, makeBackend) => {
  for (const n of [1, 77, 70_000]) {
    it(`gradNorm of ${n} values (including a view)`, async () => {
      const be = await makeBackend();
      const g = f32(randn(rng(n), n, 0.1));
      const flat = be.tensor(
        new Float64Array(64 + n).fill(100).map((v, i) => (i < 64 ? v : g[i - 64])),
        [64 + n],
      );
      const norm = gradNorm(be, { grads: be.view(flat, 64, [n]) });
      expect(norm.shape).toEqual([1]);
      expectClose(await be.read(norm), [gradNormRef(g)], TOL.reduce.rtol, 0, 'norm');
    });
  }

  it('gradNorm of zeros is 0 and of ±1e4 values is finite', async () => {
    const be = await makeBackend();
    const [z, big] = await be.readMany([gradNorm(be, { grads: be.zeros([300]) }), gradNorm(be, { grads: be.tensor([1e4, -1e4, 3, 0], [4]) })]);
    expect(z[0]).toBe(0);
    expectClose(big, [gradNormRef([1e4, -1e4, 3, 0])], TOL.reduce.rtol, 0, 'big norm');
  });

  for (const clip of [true, false]) {
    it(`AdamW: 4 steps with clipping ${clip ? 'active' : 'inactive'} match the reference`, async () => {
      const be = await makeBackend();
      const r = rng(clip ? 1 : 2);
      const n = 1000;
      const p0 = f32(randn(r, n));
      const mask = Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 0 : 1));
      const params = be.tensor(p0, [n]);
      const m = be.zeros([n]);
      const v = be.zeros([n]);
      const tmask = be.tensor(mask, [n]);
      const rp = Float64Array.from(p0),
        rm = new Float64Array(n),
        rv = new Float64Array(n);
      for (let step = 1; step <= 4; step++) {
        const g = f32(randn(r, n, 0.5)); // ‖g‖ ≈ 16
        const hp: AdamWParams = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step, maxGradNorm: clip ? 1 : 1e3 };
        const tg = be.tensor(g, [n]);
        const norm = gradNorm(be, { grads: tg });
        adamw(be, { params, grads: tg, m, v, decayMask: tmask, gradNorm: norm, hp });
        // the reference uses the backend's own norm, so only the update math is compared here
        const [normV] = await be.readMany([norm]);
        expectClose(normV, [gradNormRef(g)], TOL.reduce.rtol, 0, 'norm');
        adamwRef(rp, g, rm, rv, mask, normV[0], hp);
      }
      const [gp, gm, gv] = await be.readMany([params, m, v]);
      expectClose(gm, rm, TOL.reduce.rtol, 1e-7, 'm');
      expectClose(gv, rv, TOL.reduce.rtol, 1e-9, 'v');
      expectClose(gp, rp, TOL.elem.rtol, 1e-6, 'params');
      if (clip) expect(Math.abs(gm[1])).toBeLessThan(0.2); // clipped to ‖g‖ = 1: tiny first moments
    });
  }

  it('AdamW without a norm tensor does not clip; decay only where the mask is 1; zero grads stay finite', async () => {
    const be = await makeBackend();
    const p0 = [1, -2, 3, 0];
    const g = [0, 0, 1e4, -1e4];
    const mask = [1, 0, 1, 0];
    const params = be.tensor(p0, [4]);
    const m = be.zeros([4]);
    const v = be.zeros([4]);
    const hp: AdamWParams = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.5, step: 1, maxGradNorm: 1 };
    adamw(be, { params, grads: be.tensor(g, [4]), m, v, decayMask: be.tensor(mask, [4]), hp });
    const rp = Float64Array.from(p0),
      rm = new Float64Array(4),
      rv = new Float64Array(4);
    adamwRef(rp, g, rm, rv, mask, null, hp);
    const got = await be.read(params);
    expectClose(got, rp, TOL.elem.rtol, 1e-6, 'params');
    expect(got[1]).toBe(-2); // zero grad, no decay: unchanged
    expectClose([got[0]], [1 - 0.1 * 0.5], TOL.elem.rtol, 0, 'pure decay');
  });
});

describe.each(BACKENDS)('AdamW skips a non-finite gradient norm on %s', (_name, makeBackend) => {
  for (const bad of [NaN, Infinity]) {
    it(`norm ${bad}: params and both moments unchanged; the next finite step matches the reference`, async () => {
      const be = await makeBackend();
      const n = 300;
      const r = rng(7);
      const p0 = f32(randn(r, n));
      const m0 = f32(randn(r, n, 0.01));
      const v0 = f32(randn(r, n, 0.01).map((x) => x * x));
      const mask = Float64Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : 0));
      const params = be.tensor(p0, [n]);
      const m = be.tensor(m0, [n]);
      const v = be.tensor(v0, [n]);
      const tmask = be.tensor(mask, [n]);
      const g = f32(randn(r, n, 0.5));
      g[5] = bad; // the poisoned gradient element
      const hp: AdamWParams = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step: 3, maxGradNorm: 1 };
      const tg = be.tensor(g, [n]);
      const norm = gradNorm(be, { grads: tg });
      adamw(be, { params, grads: tg, m, v, decayMask: tmask, gradNorm: norm, hp });
      const [normV, gp, gm, gv] = await be.readMany([norm, params, m, v]);
      expect(Number.isFinite(normV[0])).toBe(false);
      expect(Array.from(gp)).toEqual(Array.from(p0));
      expect(Array.from(gm)).toEqual(Array.from(m0));
      expect(Array.from(gv)).toEqual(Array.from(v0));
      // the reference skips too
      const rp = Float64Array.from(p0),
        rm = Float64Array.from(m0),
        rv = Float64Array.from(v0);
      adamwRef(rp, g, rm, rv, mask, normV[0], hp);
      expect(Array.from(rp)).toEqual(Array.from(p0));
      // a finite step afterwards is applied normally
      const g2 = f32(randn(r, n, 0.5));
      const tg2 = be.tensor(g2, [n]);
      const norm2 = gradNorm(be, { grads: tg2 });
      adamw(be, { params, grads: tg2, m, v, decayMask: tmask, gradNorm: norm2, hp: { ...hp, step: 4 } });
      const [n2, p2] = await be.readMany([norm2, params]);
      adamwRef(rp, g2, rm, rv, mask, n2[0], { ...hp, step: 4 });
      expectClose(p2, rp, TOL.elem.rtol, 1e-6, 'params after the finite step');
      expect(p2.some((x, i) => x !== p0[i])).toBe(true);
    });
  }
});

// WebGPU reduces the norm barrier-free on CPU adapters (rt.cpuAdapter: SwiftShader here) and with
// workgroup trees on GPUs; flipping the flag runs the GPU kernels on this machine too.
describe('gradNorm kernel pairs on webgpu', () => {
  for (const n of [1, 300, 70_000]) {
    it(`n = ${n}: the CPU-adapter and the GPU kernels both match the reference`, async () => {
      const be = await webgpuBackend();
      const g = f32(randn(rng(n + 5), n, 0.1));
      const t = be.tensor(g, [n]);
      for (const cpu of [true, false]) {
        const saved = be.rt.cpuAdapter;
        be.rt.cpuAdapter = cpu;
        try {
          expectClose(await be.read(gradNorm(be, { grads: t })), [gradNormRef(g)], TOL.reduce.rtol, 0, `norm (cpu adapter ${cpu})`);
        } finally {
          be.rt.cpuAdapter = saved;
        }
      }
      be.dispose(t);
    });
  }
});
