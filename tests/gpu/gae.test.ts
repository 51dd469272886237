// gae: the per-row reverse scan (verl convention for masked positions), on both backends against
// the float64 reference (src/reference/gae.ts) and against hand-computed identities.
// Tolerance: rtol 1e-5 with atol 1e-5. A scan sums up to A float32 terms of size ~1, so the
// absolute error grows like A·2^-24·|terms|; 1e-5 covers A = 37 with margin and still fails on
// any wrong term (each is ≥ 1e-2 here).
import { describe, expect, it } from 'vitest';
import { gae } from '../../src/ops/gae.ts';
import { gaeRef } from '../../src/reference/gae.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng } from '../helpers/random.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));
const SCAN = { rtol: 1e-5, atol: 1e-5 } as const;
const GAMMA_LAMBDA: [number, number][] = [
  [1, 1],
  [0.99, 0.95],
  [1, 0],
  [0, 1],
  [0, 0],
  [0.9, 0.5],
];

describe.each(BACKENDS)('gae on %s', (_name, makeBackend) => {
  const sizes: [number, number][] = [
    [4, 6],
    [11, 37],
  ];
  for (const [B, A] of sizes) {
    it.each(GAMMA_LAMBDA)(`γ=%s λ=%s matches the reference at B=${B}, A=${A}`, async (gamma, lam) => {
      const be = await makeBackend();
      const r = rng(B * 1000 + A + gamma * 100 + lam * 10);
      const rewards = f32(randn(r, B * A, 0.5));
      const values = f32(randn(r, B * A, 1));
      const mask = rightPaddedMask(r, B, A, 0);
      for (let t = 0; t < A; t++) mask[A + t] = t % 2; // holes: every other token masked in row 1
      const want = gaeRef(rewards, values, mask, B, A, gamma, lam);
      const out = gae(be, { rewards: be.tensor(rewards, [B, A]), values: be.tensor(values, [B, A]), actionMask: be.tensor(mask, [B, A]), gamma, lam });
      expect(out.advantages.shape).toEqual([B, A]);
      const [adv, ret] = await be.readMany([out.advantages, out.returns]);
      expectClose(adv, want.advantages, SCAN.rtol, SCAN.atol, 'advantages');
      expectClose(ret, want.returns, SCAN.rtol, SCAN.atol, 'returns');
      // returns = advantages + values, everywhere
      expectClose(
        ret,
        adv.map((a, i) => a + values[i]),
        SCAN.rtol,
        SCAN.atol,
        'returns − advantages',
      );
    });
  }

  it('hand-computed: γ=λ=1 gives reward-to-go − v; λ=0 gives one-step TD errors', async () => {
    const be = await makeBackend();
    const rewards = [0, 0, 1];
    const values = [0.5, 0.25, 0.75];
    const mask = [1, 1, 1];
    const t = (xs: number[]) => be.tensor(xs, [1, 3]);
    const mc = gae(be, { rewards: t(rewards), values: t(values), actionMask: t(mask), gamma: 1, lam: 1 });
    const td = gae(be, { rewards: t(rewards), values: t(values), actionMask: t(mask), gamma: 1, lam: 0 });
    const [mcAdv, mcRet, tdAdv] = await be.readMany([mc.advantages, mc.returns, td.advantages]);
    expectClose(mcAdv, [0.5, 0.75, 0.25], SCAN.rtol, SCAN.atol, 'γ=λ=1 advantages');
    expectClose(mcRet, [1, 1, 1], SCAN.rtol, SCAN.atol, 'γ=λ=1 returns');
    // δ_t = r_t + v_{t+1} − v_t with v_3 = 0
    expectClose(tdAdv, [-0.25, 0.5, 0.25], SCAN.rtol, SCAN.atol, 'λ=0 advantages');
  });

  it('edge cases: empty row, length-1 row, one token in the middle, garbage at padding, extremes', async () => {
    const be = await makeBackend();
    const A = 5;
    const G = 1e30; // padding garbage that must never enter the carry
    // row 0: no action token; row 1: length 1; row 2: only t = 2; row 3: full with ±1e4 rewards.
    const mask = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1];
    const rewards = [G, G, G, G, G, 2, G, G, G, G, G, G, 3, G, G, 1e4, -1e4, 1e4, -1e4, 1];
    const values = [1, 2, 3, 4, 5, 0.5, 1, 1, 1, 1, 1, 1, 0.25, 1, 1, 0, 0, 0, 0, 0];
    const gamma = 0.9,
      lam = 0.8;
    const t = (xs: number[]) => be.tensor(xs, [4, A]);
    const out = gae(be, { rewards: t(rewards), values: t(values), actionMask: t(mask), gamma, lam });
    const [adv, ret] = await be.readMany([out.advantages, out.returns]);
    const want = gaeRef(rewards, values, mask, 4, A, gamma, lam);
    expectClose(adv, want.advantages, SCAN.rtol, SCAN.atol, 'advantages');
    expectClose(ret, want.returns, SCAN.rtol, SCAN.atol, 'returns');
    expectClose(adv.slice(0, 5), [0, 0, 0, 0, 0], 0, 0, 'empty row advantages');
    expectClose(ret.slice(0, 5), values.slice(0, 5), 0, 0, 'empty row returns = values');
    // length 1: δ = 2 − 0.5 at t = 0; positions after it carry the initial 0
    expectClose(adv.slice(5, 10), [1.5, 0, 0, 0, 0], SCAN.rtol, SCAN.atol, 'length-1 row');
    // one token at t = 2: δ = 3 − 0.25, carried unchanged to t = 0, 1
    expectClose(adv.slice(10, 15), [2.75, 2.75, 2.75, 0, 0], SCAN.rtol, SCAN.atol, 'middle token row');
  });

  it('all tokens masked: zero advantages, returns = values', async () => {
    const be = await makeBackend();
    const r = rng(3);
    const B = 3,
      A = 4;
    const values = f32(randn(r, B * A));
    const out = gae(be, { rewards: be.tensor(f32(randn(r, B * A)), [B, A]), values: be.tensor(values, [B, A]), actionMask: be.zeros([B, A]), gamma: 0.99, lam: 0.95 });
    const [adv, ret] = await be.readMany([out.advantages, out.returns]);
    expectClose(adv, new Float64Array(B * A), 0, 0, 'advantages');
    expectClose(ret, values, 0, 0, 'returns');
  });
});
