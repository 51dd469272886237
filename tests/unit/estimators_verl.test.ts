// OPO, GRPO pass@k and ReMax: the float64 reference (src/reference/groupAdvantages.ts) against the
// float64 transliterations of verl v0.9.0's own functions (tests/helpers/verl.ts), on fresh random
// inputs and edge cases: ties (pass@k), all-equal scores, groups of 2, length-1 and empty responses.
// Compared at every action token (the project zeroes masked positions; verl's trailing padding is 0
// as well, so right-padded batches are compared everywhere). Tolerance 1e-12: the same sums in
// float64, in another order.
import { describe, expect, it } from 'vitest';
import type { GroupEstimator } from '../../src/reference/groupAdvantages.ts';
import { groupRefOn } from '../helpers/groupBatch.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';
import * as verl from '../helpers/verl.ts';

interface Batch {
  B: number;
  A: number;
  scores: Float64Array;
  logp: Float64Array;
  ref: Float64Array;
  mask: Float64Array;
  group: number[];
  baselines: Float64Array;
}

/** `per` samples per prompt, shuffled; right-padded lengths in [minLen, A]; scores from `draw`. */
function batch(seed: number, B: number, A: number, per: number, draw: (r: ReturnType<typeof rng>) => number, minLen = 1): Batch {
  const r = rng(seed);
  const mask = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = b === 1 ? 1 : r.int(minLen, A + 1);
    for (let a = 0; a < len; a++) mask[b * A + a] = 1;
  }
  const logp = randn(r, B * A, 1).map((v) => -Math.abs(v));
  const ref = Float64Array.from(logp, (l) => l + r.normal() * 0.4);
  const group = r.shuffle(Array.from({ length: B }, (_, b) => 7 + 3 * Math.floor(b / per)));
  return { B, A, scores: Float64Array.from({ length: B }, () => draw(r)), logp, ref, mask, group, baselines: Float64Array.from({ length: B }, () => draw(r)) };
}

const project = (est: GroupEstimator, x: Batch, beta = 0, klOrder: 'verl' | 'openrlhf' = 'verl') =>
  groupRefOn(x, est, { beta, klEstimator: 'k3', gamma: 1, klOrder, baselines: est === 'remax' ? x.baselines : null });

/** verl's path: apply_kl_penalty (β may be 0), then the estimator. */
function verlPath(est: 'opo' | 'grpo_passk' | 'remax', x: Batch, beta = 0) {
  const tr = verl.applyKlPenalty(x.scores, x.logp, x.ref, x.mask, x.B, x.A, beta, 'low_var_kl');
  if (est === 'opo') return { advantages: verl.opoAdvantage(tr, x.mask, x.group, x.B, x.A), returns: null };
  if (est === 'grpo_passk') return { advantages: verl.grpoPasskAdvantage(tr, x.mask, x.group, x.B, x.A), returns: null };
  return verl.remaxAdvantage(tr, x.baselines, x.mask, x.B, x.A);
}

const normal = (r: ReturnType<typeof rng>) => r.normal() * 1.5;
const coarse = (r: ReturnType<typeof rng>) => [0, 0.5, 1][r.int(0, 3)]; // many ties

describe('OPO, GRPO pass@k, ReMax: reference = verl (float64)', () => {
  const shapes: [number, number, number][] = [
    [8, 6, 2],
    [16, 9, 4],
    [24, 5, 8],
  ];
  for (const est of ['opo', 'grpo_passk', 'remax'] as const) {
    for (const [B, A, per] of shapes) {
      for (const [drawName, draw] of [
        ['normal', normal],
        ['tied', coarse],
      ] as const) {
        it(`${est}: B=${B}, A=${A}, groups of ${per}, ${drawName} scores, β = 0 and β = 0.25`, () => {
          for (let seed = 0; seed < 5; seed++) {
            const x = batch(1000 * B + 10 * per + seed + (drawName === 'tied' ? 500 : 0), B, A, per, draw);
            for (const beta of [0, 0.25]) {
              const want = verlPath(est, x, beta);
              const got = project(est, x, beta);
              expectClose(got.advantages, want.advantages, 1e-12, 1e-12, `${est} seed ${seed} β ${beta}`);
              if (want.returns) expectClose(got.returns, want.returns, 1e-12, 1e-12, `${est} returns seed ${seed} β ${beta}`);
              for (const v of got.advantages) expect(Number.isFinite(v)).toBe(true);
            }
          }
        });
      }
    }
  }

  it('all-equal scores: pass@k gives exactly 0 (never 0/ε blown up), OPO 0 to rounding; ReMax gives score − baseline', () => {
    const x = batch(3, 8, 4, 4, () => 0.7);
    // OPO's length-weighted mean of equal scores is the score up to one rounding of Σℓ·s/Σℓ.
    expect(Math.max(...Array.from(project('opo', x).advantages, Math.abs))).toBeLessThan(1e-15);
    expectClose(project('opo', x).advantages, verlPath('opo', x).advantages, 0, 1e-15, 'opo equal');
    expect(Array.from(project('grpo_passk', x).advantages).every((v) => v === 0)).toBe(true);
    expectClose(project('grpo_passk', x).advantages, verlPath('grpo_passk', x).advantages, 0, 0, 'pass@k equal');
    const remax = project('remax', x).advantages;
    for (let b = 0; b < x.B; b++) expect(remax[b * x.A]).toBeCloseTo(0.7 - x.baselines[b], 14);
  });

  it('pass@k: only the best response of each group is non-zero, and it is (best − runner-up)/(std + 1e-6)', () => {
    const x = batch(11, 12, 3, 3, normal);
    const adv = project('grpo_passk', x).advantages;
    const ids = [...new Set(x.group)];
    for (const id of ids) {
      const rows = x.group.map((g, b) => (g === id ? b : -1)).filter((b) => b >= 0);
      const s = rows.map((b) => x.scores[b]);
      const sorted = [...s].sort((a, b) => b - a);
      const mean = s.reduce((a, v) => a + v, 0) / s.length;
      const std = Math.sqrt(s.reduce((a, v) => a + (v - mean) ** 2, 0) / (s.length - 1));
      const nonZero = rows.filter((b) => adv[b * x.A] !== 0);
      expect(nonZero).toEqual([rows[s.indexOf(sorted[0])]]);
      expect(adv[nonZero[0] * x.A]).toBeCloseTo((sorted[0] - sorted[1]) / (std + 1e-6), 12);
    }
  });

  it('ReMax with β > 0 keeps the KL per token under both orders (as verl), returns without the baseline', () => {
    const x = batch(21, 8, 6, 1, normal);
    const want = verlPath('remax', x, 0.3);
    for (const order of ['verl', 'openrlhf'] as const) {
      const got = project('remax', x, 0.3, order);
      expectClose(got.advantages, want.advantages, 1e-12, 1e-12, `remax ${order}`);
      expectClose(got.returns, want.returns!, 1e-12, 1e-12, `remax returns ${order}`);
    }
  });
});
