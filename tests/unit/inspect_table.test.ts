// The inspector's token table, reverse-scan steps and what-if differences.
import { describe, expect, it } from 'vitest';
import { gaeRef } from '../../src/reference/gae.ts';
import { discountedReturnsRef } from '../../src/reference/groupAdvantages.ts';
import { lastActionIndex } from '../../src/reference/rewards.ts';
import { gaeScanSteps, recomputeTrace, tokenTable, whatIfDiff, type TokenRow } from '../../src/rl/inspect/index.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { expectClose, rng } from '../helpers/random.ts';

const close = (a: number, b: number, what: string) => expectClose([a], [b], 1e-12, 1e-14, what);

function finiteRow(r: TokenRow): void {
  const nums = [r.oldLogprob, r.refLogprob, r.kl, r.klReward, r.reward, r.advantageRaw, r.advantage, r.return, r.rolloutLogprob, r.value, r.delta, r.tisWeight];
  for (const u of r.updates) nums.push(u.newLogprob, u.ratio, u.tokenLoss, u.aggWeight, u.gradWeight, u.klLossTerm, u.value?.loss ?? null, u.value?.newValue ?? null);
  for (const x of nums) if (x !== null) expect(Number.isFinite(x), `position ${r.t}`).toBe(true);
}

describe('tokenTable', () => {
  it('has one row per response position, masked ones flagged, the score at the last action token, and the steps the row was in', () => {
    const trace = buildTrace(rng(600), { holeRow: 2, ppoEpochs: 3, miniBatches: 3, knobs: { useKlLoss: true, tisCap: 2 } });
    const rec = recomputeTrace(trace);
    const { A } = trace;
    for (let row = 0; row < trace.B; row++) {
      const table = tokenTable(trace, row, rec);
      expect(table.rows.map((r) => r.t)).toEqual([...Array(A).keys()]);
      expect(table.rows.map((r) => r.masked)).toEqual([...Array(A).keys()].map((t) => trace.actionMask[row * A + t] === 0));
      expect(table.rows.filter((r) => r.scored).map((r) => r.t)).toEqual([lastActionIndex(trace.actionMask, row, A)]);
      expect(table.length).toBe(table.rows.filter((r) => !r.masked).length);
      expect(table.group).toBeNull();
      for (const r of table.rows) {
        const i = row * A + r.t;
        expect([r.token, r.oldLogprob, r.refLogprob, r.value, r.rolloutLogprob]).toEqual([
          trace.responseTokens[i],
          trace.oldLogprobs[i],
          trace.refLogprobs[i],
          trace.values[i],
          trace.rolloutLogprobs![i],
        ]);
        expect([r.kl, r.reward, r.advantage, r.return, r.tisWeight]).toEqual([
          trace.stored.kl[i],
          trace.stored.rewards[i],
          trace.stored.advantages[i],
          trace.stored.returns[i],
          trace.stored.tisWeights![i],
        ]);
        // every epoch covers every row once
        expect(r.updates.map((u) => u.epoch)).toEqual([0, 1, 2]);
        for (const u of r.updates) {
          const step = trace.minibatches.find((m) => m.epoch === u.epoch && m.index === u.minibatch)!;
          const j = step.rows.indexOf(row);
          expect(u.newLogprob).toBe(step.newLogprobs[j * A + r.t]);
          expect(u.value!.newValue).toBe(step.newValues![j * A + r.t]);
          expect(u.klLossTerm).not.toBeNull();
          if (r.masked) expect([u.aggWeight, u.gradWeight, u.tokenLoss, u.clipSide]).toEqual([0, 0, 0, 'none']);
        }
        finiteRow(r);
      }
    }
  });

  it('replaces V and δ by the group’s scores, mean and std for a group estimator', () => {
    const trace = buildTrace(rng(601), { prompts: 3, samples: 4, knobs: { advantageEstimator: 'group_norm', whiten: false } });
    const table = tokenTable(trace, 5);
    expect(table.rows.every((r) => r.value === null && r.delta === null)).toBe(true);
    const g = table.group!;
    expect(g.members).toEqual([4, 5, 6, 7]);
    expect(g.scores).toEqual(g.members.map((b) => trace.scores[b]));
    const mean = g.scores.reduce((s, x) => s + x, 0) / 4;
    close(g.mean, mean, 'group mean');
    close(g.std, Math.sqrt(g.scores.reduce((s, x) => s + (x - mean) ** 2, 0) / 3), 'group std');
    expectClose([g.transformedScore], [(trace.scores[5] - mean) / (g.std + 1e-9)], 1e-12, 1e-14, 'GRPO score');
  });

  it('shows a "what if" through the recomputation it is given, and no NaN on edge cases', () => {
    const trace = buildTrace(rng(602), { allMaskedRow: 0, lengthOneRow: 1, extreme: true, newSpread: 3 });
    const whatIf = recomputeTrace(trace, { ...trace.knobs, klCoef: 0 });
    for (let row = 0; row < trace.B; row++) {
      const table = tokenTable(trace, row, whatIf);
      for (const r of table.rows) {
        expect(r.klReward).toBe(0);
        finiteRow(r);
      }
    }
    expect(tokenTable(trace, 0).length).toBe(0);
    expect(tokenTable(trace, 1).length).toBe(1);
    expect(() => tokenTable(trace, trace.B)).toThrow(/outside/);
  });
});

describe('gaeScanSteps', () => {
  for (const [name, spec] of [
    ['right-padded rows', {}],
    ['a masked middle position, γ < 1', { holeRow: 0, knobs: { gamma: 0.9, lam: 0.8 } }],
    ['an all-masked row and a length-1 row', { allMaskedRow: 1, lengthOneRow: 2 }],
  ] as const) {
    it(`runs from the last position to the first and ends on the reference GAE: ${name}`, () => {
      const trace = buildTrace(rng(700), spec);
      const rec = recomputeTrace(trace);
      const { A, B } = trace;
      const { gamma, lam } = trace.knobs;
      const gae = gaeRef(rec.rewards, trace.values, trace.actionMask, B, A, gamma, lam);
      for (let row = 0; row < B; row++) {
        const steps = gaeScanSteps(trace, row, rec);
        expect(steps.map((s) => s.t)).toEqual([...Array(A).keys()].reverse());
        let carried = 0;
        for (const s of steps) {
          const i = row * A + s.t;
          expect(s.carried).toBe(carried);
          expect(s.advantage).toBe(gae.advantages[i]);
          expect(s.masked).toBe(trace.actionMask[i] === 0);
          if (s.masked) {
            expect(s.delta).toBeNull();
            expect(s.advantage).toBe(s.carried);
          } else {
            close(s.delta!, s.reward + gamma * s.nextValue - s.value, `δ at ${row},${s.t}`);
            close(s.advantage, s.delta! + gamma * lam * s.carried, `A at ${row},${s.t}`);
          }
          carried = s.advantage;
        }
        // the final step (t = 0) holds the reference's A_0
        expect(steps[A - 1].advantage).toBe(gae.advantages[row * A]);
      }
    });
  }

  it('runs the returns scan of a group estimator, δ_t = r_t with its transformed score', () => {
    const trace = buildTrace(rng(701), { holeRow: 3, knobs: { advantageEstimator: 'rloo', whiten: false } });
    const rec = recomputeTrace(trace);
    const { A, B } = trace;
    const G = discountedReturnsRef(rec.scanRewards, trace.actionMask, B, A, 1);
    for (let row = 0; row < B; row++) {
      for (const s of gaeScanSteps(trace, row, rec)) {
        expect(s.advantage).toBe(G[row * A + s.t]);
        expect(s.value).toBe(0);
        if (!s.masked) close(s.advantage, s.delta! + s.carryFactor * s.carried, `G at ${row},${s.t}`);
      }
    }
  });
});

describe('whatIfDiff', () => {
  it('is zero for the same knobs', () => {
    const trace = buildTrace(rng(800));
    const d = whatIfDiff(recomputeTrace(trace), recomputeTrace(trace));
    for (const c of Object.values(d.summary)) if (c.change !== null) expect(c.change).toBe(0);
    expect(d.clipSideChanges).toBe(0);
    expect(d.maxAdvantageChange).toBe(0);
  });

  it('reports the KL penalty gone at β = 0 and the clip fraction drop of a wider clip', () => {
    const trace = buildTrace(rng(801), { newSpread: 0.6 });
    const actual = recomputeTrace(trace);
    const noKl = whatIfDiff(actual, recomputeTrace(trace, { ...trace.knobs, klCoef: 0 }));
    expect(noKl.summary.klPenaltyMean.whatIf).toBe(0);
    close(noKl.summary.klPenaltyMean.change!, -actual.summary.klPenaltyMean, 'KL penalty change');
    expect(noKl.maxAdvantageChange).toBeGreaterThan(0);
    const wide = whatIfDiff(actual, recomputeTrace(trace, { ...trace.knobs, clipLow: 0.9, clipHigh: 5 }));
    expect(wide.summary.clipFraction.change!).toBeLessThan(0);
    expect(wide.clipSideChanges).toBeGreaterThan(0);
    expect(wide.maxAdvantageChange).toBe(0);
  });

  it('has no value loss to compare without a critic', () => {
    const trace = buildTrace(rng(802), { knobs: { advantageEstimator: 'dr_grpo', whiten: false } });
    const d = whatIfDiff(recomputeTrace(trace), recomputeTrace(trace, { ...trace.knobs, clipHigh: 0.4 }));
    expect(d.summary.valueLoss).toEqual({ actual: null, whatIf: null, change: null });
  });
});
