// A group estimator's token table adds up: r_t (what the return scan adds) is −β·KL_t where that
// enters per token plus the normalised score s̃ at the last action token, the raw advantage is the
// discounted sum of r_t (less ReMax's baseline), and A_t is that whitened where the estimator
// whitens. Summed from the table's own columns and compared with groupAdvantagesRef's advantages
// (the trace stores them from the reference, independently of the inspector), to 1e-12.
import { describe, expect, it } from 'vitest';
import { GROUP_ESTIMATOR_SPECS, GROUP_ESTIMATORS, type GroupKlOrder } from '../../src/reference/groupAdvantages.ts';
import { recomputeTrace, tokenTable } from '../../src/rl/inspect/index.ts';
import { buildTrace, knobs } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

/** Absolute and relative tolerance of a column sum: float64 sums of at most A terms of order 1. */
const TOL = 1e-12;
const near = (a: number, b: number) => Math.abs(a - b) <= TOL * Math.max(1, Math.abs(b));

describe('a group estimator’s columns sum to A_t', () => {
  const orders: GroupKlOrder[] = ['openrlhf', 'verl'];
  for (const estimator of GROUP_ESTIMATORS) {
    for (const order of orders) {
      it(`${estimator}, KL in the reward (β = 0.3, k3), ${order}’s order`, () => {
        const k = knobs({
          advantageEstimator: estimator,
          whiten: GROUP_ESTIMATOR_SPECS[estimator].whitened,
          klInReward: true,
          klCoef: 0.3,
          klEstimator: 'k3',
          gamma: 0.9,
          groupKlOrder: order,
        });
        const trace = buildTrace(rng(4200 + GROUP_ESTIMATORS.indexOf(estimator) * 2 + orders.indexOf(order)), { knobs: k, holeRow: 1, A: 7 });
        const rec = recomputeTrace(trace);
        const { A } = trace;
        for (let row = 0; row < trace.B; row++) {
          const table = tokenTable(trace, row, rec);
          // Column by column: r_t = (−β·KL_t where it enters per token) + s̃ at the last action token.
          for (const r of table.rows) {
            if (r.masked) continue;
            const want = (table.klInScan ? r.klReward : 0) + (r.normScore ?? 0);
            expect(near(r.scanReward, want), `${estimator} row ${row} t ${r.t}: r_t ${r.scanReward} vs ${want}`).toBe(true);
            expect(r.normScore !== null).toBe(r.scored);
          }
          // The raw advantage: Σ_{u ≥ t} γ^{u−t} r_u over action tokens (a masked position carries), less ReMax's b.
          let g = 0;
          const raw = new Array<number>(A);
          for (let t = A - 1; t >= 0; t--) {
            const r = table.rows[t];
            if (!r.masked) g = r.scanReward + k.gamma * g;
            raw[t] = g;
          }
          const w = rec.whitening;
          for (const r of table.rows) {
            if (r.masked) continue;
            const rawT = raw[r.t] - (table.baseline ?? 0);
            expect(near(r.advantageRaw, rawT), `${estimator} row ${row} t ${r.t}: A raw`).toBe(true);
            const a = w ? (rawT - w.mean) * w.scale : rawT;
            // The sum of the columns is the advantage the reference computed for the trainer.
            expect(near(a, trace.stored.advantages[row * A + r.t]), `${estimator} row ${row} t ${r.t}: A ${a} vs ${trace.stored.advantages[row * A + r.t]}`).toBe(true);
            expect(near(r.advantage, a)).toBe(true);
          }
        }
        expect(rec.klInScan).toBe(!(order === 'verl' && !['reinforce', 'remax'].includes(estimator)));
      });
    }
  }

  it('GAE keeps r_t = −β·KL_t plus the raw score, with no s̃ column', () => {
    const trace = buildTrace(rng(4250), { knobs: { klCoef: 0.2 } });
    const rec = recomputeTrace(trace);
    const table = tokenTable(trace, 0, rec);
    for (const r of table.rows) {
      expect(r.normScore).toBeNull();
      expect(r.scanReward).toBe(r.reward);
      if (!r.masked) expect(near(r.reward, r.klReward + (r.scored ? table.score : 0))).toBe(true);
    }
    expect(table.baseline).toBeNull();
  });
});
