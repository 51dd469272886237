// shapeRewards: KL penalty per action token plus the score on the last action token, on both
// backends against the float64 reference (src/reference/rewards.ts).
// Tolerance: element-wise, rtol 1e-5 with atol 1e-6 (TOL.elem); inputs are rounded to float32
// first so both sides see the same numbers.
import { describe, expect, it } from 'vitest';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { klValue } from '../../src/reference/kl.ts';
import { shapeRewardsRef } from '../../src/reference/rewards.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL, uniformArray } from '../helpers/random.ts';
import { shapeRewards } from '../../src/ops/shapeRewards.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));
const negAbs = (xs: Float64Array) => xs.map((x) => -Math.abs(x));

describe.each(BACKENDS)('shapeRewards on %s', (_name, makeBackend) => {
  const sizes: [number, number][] = [
    [3, 5],
    [9, 37],
  ];
  for (const [B, A] of sizes) {
    it.each(KL_ESTIMATORS)(`%s matches the reference at B=${B}, A=${A}`, async (est) => {
      const be = await makeBackend();
      const r = rng(B * 100 + A + KL_ESTIMATORS.indexOf(est));
      const logp = f32(negAbs(randn(r, B * A, 2)));
      const ref = f32(negAbs(randn(r, B * A, 2)));
      const scores = f32(randn(r, B, 3));
      const mask = rightPaddedMask(r, B, A, 0); // length 0 (no action token) can occur
      if (B > 3) for (let t = 0; t < A; t++) mask[2 * A + t] = t % 3 === 1 ? 1 : 0; // holes inside a row
      const beta = Math.fround(r.uniform(0.01, 0.5));
      const want = shapeRewardsRef(scores, logp, ref, mask, B, A, beta, est);
      const out = shapeRewards(be, {
        scores: be.tensor(scores, [B]),
        logprobs: be.tensor(logp, [B, A]),
        refLogprobs: be.tensor(ref, [B, A]),
        actionMask: be.tensor(mask, [B, A]),
        beta,
        estimator: est,
      });
      expect(out.rewards.shape).toEqual([B, A]);
      const [rewards, kl] = await be.readMany([out.rewards, out.kl]);
      expectClose(kl, want.kl, TOL.elem.rtol, TOL.elem.atol, `${est} kl`);
      expectClose(rewards, want.rewards, TOL.elem.rtol, TOL.elem.atol, `${est} rewards`);
      // Independent of the reference: each row's rewards sum to −β·Σkl plus its score once (if it has a token).
      for (let b = 0; b < B; b++) {
        let sumR = 0,
          sumKl = 0,
          n = 0;
        for (let t = 0; t < A; t++) {
          sumR += rewards[b * A + t];
          sumKl += kl[b * A + t];
          n += mask[b * A + t];
          if (mask[b * A + t] === 0) expect(rewards[b * A + t]).toBe(0);
        }
        const expected = -beta * sumKl + (n > 0 ? scores[b] : 0);
        expect(Math.abs(sumR - expected)).toBeLessThan(1e-4 * (1 + Math.abs(expected)));
      }
    });
  }

  it('edge cases: empty row, length-1 row, one token in the middle, extreme logits, -inf padding', async () => {
    const be = await makeBackend();
    const A = 5;
    // row 0: no action token; row 1: length 1; row 2: only t = 2; row 3: full, extreme logits.
    const mask = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1];
    const logp = [-1, -2, -3, -4, -5, -0.5, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -1.5, -Infinity, -Infinity, 0, -1e4, -1e4, 0, -3];
    const ref = [-2, -2, -2, -2, -2, -1.5, -1, -1, -1, -1, -1, -1, -0.5, -1, -1, -1e4, 0, -1e4, -1e-4, -3];
    const scores = [7, -2, 3, 0.25];
    const B = 4;
    const beta = 0.125;
    for (const est of KL_ESTIMATORS) {
      const want = shapeRewardsRef(scores, logp, ref, mask, B, A, beta, est);
      const out = shapeRewards(be, {
        scores: be.tensor(scores, [B]),
        logprobs: be.tensor(logp, [B, A]),
        refLogprobs: be.tensor(ref, [B, A]),
        actionMask: be.tensor(mask, [B, A]),
        beta,
        estimator: est,
      });
      const [rewards, kl] = await be.readMany([out.rewards, out.kl]);
      expectClose(kl, want.kl, TOL.elem.rtol, TOL.elem.atol, `${est} kl`);
      expectClose(rewards, want.rewards, TOL.elem.rtol, TOL.elem.atol, `${est} rewards`);
      // hand-checked placements
      expect(Array.from(rewards.slice(0, 5))).toEqual([0, 0, 0, 0, 0]); // no token: no score, no penalty
      expect(rewards[5]).toBeCloseTo(-2 - beta * klValue(-0.5, -1.5, est), 5); // length 1: score there
      expect(rewards[12]).toBeCloseTo(3 - beta * klValue(-1.5, -0.5, est), 5); // middle token gets the score
      expect(rewards[19]).toBeCloseTo(0.25, 5); // last token of the full row, d = 0
    }
  });

  it('all tokens masked: zero rewards and zero KL', async () => {
    const be = await makeBackend();
    const r = rng(7);
    const B = 3,
      A = 4;
    const logp = f32(uniformArray(r, B * A, -5, 0));
    const out = shapeRewards(be, {
      scores: be.tensor(f32(randn(r, B)), [B]),
      logprobs: be.tensor(logp, [B, A]),
      refLogprobs: be.tensor(
        logp.map((x) => x - 1),
        [B, A],
      ),
      actionMask: be.zeros([B, A]),
      beta: 0.1,
      estimator: 'k3',
    });
    const [rewards, kl] = await be.readMany([out.rewards, out.kl]);
    expectClose(rewards, new Float64Array(B * A), 0, 0, 'rewards');
    expectClose(kl, new Float64Array(B * A), 0, 0, 'kl');
  });

  it('rejects mismatched shapes', async () => {
    const be = await makeBackend();
    const x = be.tensor([0, 0, 0, 0], [2, 2]);
    expect(() => shapeRewards(be, { scores: be.tensor([1, 2, 3], [3]), logprobs: x, refLogprobs: x, actionMask: x, beta: 0.1, estimator: 'k1' })).toThrow(/scores/);
    expect(() => shapeRewards(be, { scores: be.tensor([1, 2], [2]), logprobs: x, refLogprobs: x, actionMask: be.tensor([1, 1], [1, 2]), beta: 0.1, estimator: 'k1' })).toThrow(
      /action_mask/,
    );
  });
});
