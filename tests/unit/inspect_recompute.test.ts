// The inspector's recomputation: with the trace's own knobs it reproduces what the iteration
// stored (built here through the references in the trainer's order), and a "what if" moves only
// what its knob feeds.
import { describe, expect, it } from 'vitest';
import { actorLossRef } from '../../src/reference/actorLoss.ts';
import { logprobsBackwardRef } from '../../src/reference/logprobs.ts';
import { policyLossRef } from '../../src/reference/policyLoss.ts';
import { valueLossRef } from '../../src/reference/valueLoss.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { FixedKlController, klCoefsApplied } from '../../src/rl/klController.ts';
import {
  appliedKl,
  gatherRows,
  knobsFromConfig,
  recomputeTrace,
  storedMismatch,
  type InspectKnobs,
  type IterationTrace,
  type RecomputedTrace,
} from '../../src/rl/inspect/index.ts';
import { buildTrace, type TraceSpec } from '../helpers/inspectTrace.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

/** float64 against float64 through the same references: only rounding-level differences allowed. */
const RTOL = 1e-12;
const ATOL = 1e-14;

function allFinite(rec: RecomputedTrace): void {
  const arrays: [string, ArrayLike<number> | null][] = [
    ['kl', rec.kl],
    ['klReward', rec.klReward],
    ['rewards', rec.rewards],
    ['scanRewards', rec.scanRewards],
    ['delta', rec.delta],
    ['advantagesRaw', rec.advantagesRaw],
    ['advantages', rec.advantages],
    ['returns', rec.returns],
    ['tisWeights', rec.tisWeights],
  ];
  for (const mb of rec.minibatches) {
    arrays.push(['ratio', mb.ratio], ['tokenLoss', mb.tokenLoss], ['aggWeight', mb.aggWeight], ['gradWeight', mb.gradWeight], ['klLossTerm', mb.klLossTerm]);
    if (mb.value) arrays.push(['value.loss', mb.value.map((v) => v.loss)], ['value.clippedTerm', mb.value.map((v) => v.clippedTerm)]);
    for (const [key, v] of Object.entries(mb.stats)) if (v !== null) expect(Number.isFinite(v), `stats.${key}`).toBe(true);
  }
  for (const [name, a] of arrays) {
    if (!a) continue;
    for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) throw new Error(`${name}[${i}] = ${a[i]}`);
  }
  for (const [key, v] of Object.entries(rec.summary)) if (v !== null) expect(Number.isFinite(v), `summary.${key}`).toBe(true);
}

function expectReproduces(trace: IterationTrace): RecomputedTrace {
  const rec = recomputeTrace(trace);
  expectClose(rec.kl, trace.stored.kl, RTOL, ATOL, 'kl');
  expectClose(rec.rewards, trace.stored.rewards, RTOL, ATOL, 'rewards');
  expectClose(rec.advantages, trace.stored.advantages, RTOL, ATOL, 'advantages');
  expectClose(rec.returns, trace.stored.returns, RTOL, ATOL, 'returns');
  expect(rec.tisWeights === null).toBe(trace.stored.tisWeights === null);
  if (rec.tisWeights) expectClose(rec.tisWeights, trace.stored.tisWeights!, RTOL, ATOL, 'tisWeights');
  trace.minibatches.forEach((mb, j) => {
    const got = rec.minibatches[j].stats;
    const want = mb.stored!;
    for (const key of Object.keys(want) as (keyof typeof want)[]) {
      if (want[key] === null) expect(got[key], `${key} of step ${j}`).toBeNull();
      else expectClose([got[key]!], [want[key]!], RTOL, ATOL, `${key} of step ${j}`);
    }
  });
  for (const [key, d] of Object.entries(storedMismatch(trace, rec))) expect(d, `storedMismatch.${key}`).toBeLessThanOrEqual(1e-12);
  allFinite(rec);
  return rec;
}

const CASES: [string, Partial<InspectKnobs>][] = [
  ['GAE, defaults', {}],
  ['GAE, γ < 1, λ = 1, k3 in the reward', { gamma: 0.9, lam: 1, klEstimator: 'k3' }],
  ['GAE, KL loss (k3) besides the reward', { useKlLoss: true, klLossCoef: 0.2, klLossEstimator: 'k3' }],
  ['GAE, KL only in the loss (k1+), no dual clip, no value clip', { klInReward: false, useKlLoss: true, klLossEstimator: 'k1+', dualClip: null, valueClip: null }],
  ['GAE, abs estimator, seq-mean-token-mean', { klEstimator: 'abs', lossAgg: 'seq-mean-token-mean' }],
  ['GAE, k1_clamped, seq-mean-token-sum-norm (verl scale)', { klEstimator: 'k1_clamped', lossAgg: 'seq-mean-token-sum-norm', normScale: 'verl' }],
  ['GAE, asymmetric clip, seq-mean-token-sum, TIS', { clipLow: 0.1, clipHigh: 0.28, lossAgg: 'seq-mean-token-sum', tisCap: 2 }],
  ['GAE, GSPO', { lossMode: 'gspo' }],
  ['GAE, CISPO', { lossMode: 'cispo', clipHigh: 0.5 }],
  ['GRPO, SAPO, TIS', { advantageEstimator: 'group_norm', whiten: false, lossMode: 'sapo', tisCap: 2 }],
  ['GAE, GPG, seq-mean-token-sum', { lossMode: 'gpg', lossAgg: 'seq-mean-token-sum' }],
  ['GRPO, GMPO (geo_mean), TIS', { advantageEstimator: 'group_norm', whiten: false, lossMode: 'geo_mean', tisCap: 2 }],
  [
    'GRPO, Clip-Cov (several picks), TIS',
    { advantageEstimator: 'group_norm', whiten: false, lossMode: 'clip_cov', clipCovRatio: 0.2, clipCovLb: -1, clipCovUb: 1, seed: 7, tisCap: 2 },
  ],
  ['GAE, KL-Cov (several picks)', { lossMode: 'kl_cov', klCovRatio: 0.2, ppoKlCoef: 0.5 }],
  ['GRPO (group_norm), KL loss', { advantageEstimator: 'group_norm', whiten: false, klInReward: false, useKlLoss: true }],
  ['RLOO', { advantageEstimator: 'rloo', whiten: false }],
  ['RLOO, KL summed into the score first (group KL order verl)', { advantageEstimator: 'rloo', whiten: false, groupKlOrder: 'verl' }],
  ['REINFORCE++ baseline, group KL order verl', { advantageEstimator: 'reinforce_baseline', whiten: true, groupKlOrder: 'verl' }],
  ['Dr. GRPO', { advantageEstimator: 'dr_grpo', whiten: false, lossAgg: 'seq-mean-token-sum-norm' }],
  ['REINFORCE++ (whitened)', { advantageEstimator: 'reinforce', whiten: true, klEstimator: 'k2' }],
  ['REINFORCE++ baseline', { advantageEstimator: 'reinforce_baseline', whiten: true }],
  ['OPO, group KL order verl', { advantageEstimator: 'opo', whiten: false, groupKlOrder: 'verl' }],
  ['OPO, group KL order openrlhf', { advantageEstimator: 'opo', whiten: false }],
  ['GRPO pass@k', { advantageEstimator: 'grpo_passk', whiten: false, groupKlOrder: 'verl' }],
  ['ReMax (greedy-reward baselines)', { advantageEstimator: 'remax', whiten: false, klEstimator: 'k3' }],
];

describe('recomputeTrace with the trace’s own knobs', () => {
  CASES.forEach(([name, over], c) => {
    it(`reproduces the stored experience and every step's statistics: ${name}`, () => {
      expectReproduces(buildTrace(rng(100 + c), { knobs: over }));
    });
  });

  const EDGES: [string, TraceSpec][] = [
    ['an all-masked row, a length-1 row, a masked middle position', { allMaskedRow: 1, lengthOneRow: 2, holeRow: 3 }],
    ['log-prob gaps of ±30', { extreme: true, newSpread: 3 }],
    ['log-prob gaps of ±30 with k3, a KL loss and TIS', { extreme: true, knobs: { klEstimator: 'k3', useKlLoss: true, tisCap: 3 } }],
    ['a group estimator with equal scores in every group', { equalScores: true, knobs: { advantageEstimator: 'group_norm', whiten: false } }],
    ['equal scores, REINFORCE baseline, an all-masked row', { equalScores: true, allMaskedRow: 0, knobs: { advantageEstimator: 'reinforce_baseline', whiten: true } }],
    ['a response length of 1', { A: 1 }],
    ['OPO and an all-masked row, a length-1 row', { allMaskedRow: 1, lengthOneRow: 2, knobs: { advantageEstimator: 'opo', whiten: false } }],
    ['GRPO pass@k with equal scores in every group', { equalScores: true, knobs: { advantageEstimator: 'grpo_passk', whiten: false } }],
    ['ReMax, a masked middle position, length 1', { holeRow: 3, lengthOneRow: 2, knobs: { advantageEstimator: 'remax', whiten: false } }],
  ];
  EDGES.forEach(([name, spec], c) => {
    it(`reproduces the stored values, no NaN: ${name}`, () => {
      expectReproduces(buildTrace(rng(200 + c), spec));
    });
  });

  it('gives equal scores of a group a zero advantage (GRPO)', () => {
    const trace = buildTrace(rng(300), { equalScores: true, knobs: { advantageEstimator: 'group_norm', whiten: false, klInReward: false } });
    const rec = recomputeTrace(trace);
    for (const a of rec.advantages) expect(a).toBe(0);
    for (const s of rec.group!.std) expect(s).toBe(0);
  });

  it('gives an all-masked row no KL, no reward, and no weight in any loss', () => {
    const trace = buildTrace(rng(301), { allMaskedRow: 4 });
    const rec = recomputeTrace(trace);
    const A = trace.A;
    for (let t = 0; t < A; t++) {
      expect(rec.kl[4 * A + t]).toBe(0);
      expect(rec.rewards[4 * A + t]).toBe(0);
    }
    for (const mb of rec.minibatches) {
      const j = mb.rows.indexOf(4);
      if (j < 0) continue;
      for (let t = 0; t < A; t++) {
        expect(mb.aggWeight[j * A + t]).toBe(0);
        expect(mb.gradWeight[j * A + t]).toBe(0);
        expect(mb.clipSide[j * A + t]).toBe('none');
      }
    }
  });
});

describe('knobsFromConfig', () => {
  it('applies the same β and KL-loss coefficient as the trainer (klCoefsApplied) for every KL setup', () => {
    for (const klController of ['fixed', 'adaptive'] as const) {
      for (const klInReward of [true, false]) {
        for (const useKlLoss of [true, false]) {
          const cfg: PpoConfig = { ...DEFAULT_CONFIG, klController, klInReward, useKlLoss, klCoef: 0.07, klLossCoef: 0.3 };
          const beta = 0.123;
          const want = klCoefsApplied(cfg, new FixedKlController(beta));
          expect(appliedKl(knobsFromConfig(cfg, beta)), `${klController} reward=${klInReward} loss=${useKlLoss}`).toEqual(want);
        }
      }
    }
  });

  it('whitens GAE and the REINFORCE pair, not GRPO, RLOO or Dr. GRPO', () => {
    const w = (advantageEstimator: PpoConfig['advantageEstimator']) => knobsFromConfig({ ...DEFAULT_CONFIG, advantageEstimator, gamma: 1 }, 0.05).whiten;
    expect([w('gae'), w('reinforce'), w('reinforce_baseline'), w('group_norm'), w('rloo'), w('dr_grpo')]).toEqual([true, true, true, false, false, false]);
  });
});

describe('per-token terms against the references’ losses', () => {
  for (const lossMode of ['vanilla', 'cispo', 'sapo', 'gpg', 'clip_cov', 'kl_cov'] as const) {
    it(`each token's ratio is π_new/π_old, exp(clamp(log π_new − log π_old, ±20)), above 1 as below (${lossMode})`, () => {
      const trace = buildTrace(rng(401), { knobs: { lossMode, clipLow: 0.15, clipHigh: 0.25 }, newSpread: 0.4 });
      const rec = recomputeTrace(trace);
      const A = trace.A;
      let above = 0;
      let below = 0;
      rec.minibatches.forEach((mb, j) => {
        const mask = gatherRows(trace.actionMask, A, mb.rows);
        const old = gatherRows(trace.oldLogprobs, A, mb.rows);
        const logp = trace.minibatches[j].newLogprobs;
        for (let i = 0; i < mask.length; i++) {
          if (mask[i] === 0) continue;
          const want = Math.exp(Math.min(20, Math.max(-20, logp[i] - old[i])));
          expectClose([mb.ratio[i]], [want], 1e-15, 0, `step ${j} token ${i} ratio`);
          if (want > 1) above++;
          if (want < 1) below++;
        }
      });
      expect(above).toBeGreaterThan(0);
      expect(below).toBeGreaterThan(0);
    });
  }

  for (const lossMode of ['vanilla', 'gspo', 'cispo', 'sapo', 'gpg', 'geo_mean'] as const) {
    it(`token losses, weights and clip sides add up to policyLossRef's loss and clip fractions (${lossMode})`, () => {
      const trace = buildTrace(rng(400), { knobs: { lossMode, clipLow: 0.15, clipHigh: 0.25, tisCap: 1.5 }, newSpread: 0.4, holeRow: 0 });
      const rec = recomputeTrace(trace);
      const A = trace.A;
      let sawClip = false;
      rec.minibatches.forEach((mb, j) => {
        const mask = gatherRows(trace.actionMask, A, mb.rows);
        const adv = gatherRows(rec.advantages, A, mb.rows);
        let loss = 0;
        let clipped = 0;
        let lower = 0;
        let tokens = 0;
        for (let i = 0; i < mask.length; i++) {
          if (mask[i] === 0) continue;
          tokens++;
          loss += mb.aggWeight[i] * mb.tisWeight![i] * mb.tokenLoss[i];
          const side = mb.clipSide[i];
          if (lossMode === 'geo_mean') {
            // GMPO's flags split the token log-ratio clip by the sign of A (verl pg_clipfrac / _lower)
            if (side !== 'none' && adv[i] > 0) clipped++;
            if (side !== 'none' && adv[i] < 0) lower++;
            if (side !== 'none') expect(Math.log(mb.ratio[i]) > 0.25 || Math.log(mb.ratio[i]) < -0.15).toBe(true);
          } else {
            if (side === 'low' || side === 'high') clipped++;
            if (side === 'dual') lower++;
          }
          if (side !== 'none') sawClip = true;
          const r = mb.ratio[i];
          if (lossMode === 'vanilla') {
            if (side === 'high') expect(r > 1 + 0.25 && adv[i] > 0).toBe(true);
            if (side === 'low') expect(r < 1 - 0.15 && adv[i] < 0).toBe(true);
            if (side === 'dual') expect(adv[i] < 0 && r > 3).toBe(true);
            if (side === 'none') expect((adv[i] > 0 && r > 1.25) || (adv[i] < 0 && r < 0.85)).toBe(false);
          }
          if (lossMode === 'cispo') expect(side !== 'none').toBe(r > 1.25 || r < 0.85);
        }
        expectClose([loss], [mb.stats.policyLoss], 1e-12, 1e-14, `Σ w·is·L_t of step ${j}`);
        expectClose([clipped / tokens, lower / tokens], [mb.stats.clipFraction, mb.stats.clipFractionLower], 1e-12, 0, `clip fractions of step ${j}`);
        expectClose(
          mb.gradWeight,
          policyLossRef(
            gatherRows(trace.oldLogprobs, A, mb.rows),
            trace.minibatches[j].newLogprobs,
            adv,
            mask,
            mb.rows.length,
            A,
            { clipLow: 0.15, clipHigh: 0.25, clipC: trace.knobs.dualClip, agg: trace.knobs.lossAgg, lossMode },
            // GMPO's shown weight is its row's geometric mean; the loss reads the tokens' own
            lossMode === 'geo_mean' ? gatherRows(rec.tisWeights!, A, mb.rows) : mb.tisWeight,
          ).gradLogprobs,
          0,
          0,
          `gradWeight of step ${j}`,
        );
      });
      expect(sawClip).toBe(lossMode !== 'sapo' && lossMode !== 'gpg'); // SAPO and GPG have no hard clip
    });
  }

  it('the value terms: loss = max of the two terms, clipped when the clipped term is larger, Σ w·loss = valueLossRef', () => {
    const trace = buildTrace(rng(401), { knobs: { valueClip: 0.1 } });
    const rec = recomputeTrace(trace);
    const A = trace.A;
    let sawClipped = false;
    rec.minibatches.forEach((mb, j) => {
      const mask = gatherRows(trace.actionMask, A, mb.rows);
      let loss = 0;
      mb.value!.forEach((v, i) => {
        if (mask[i] === 0) return;
        expect(v.loss).toBe(Math.max(v.unclipped, v.clippedTerm));
        expect(v.clipped).toBe(v.clippedTerm > v.unclipped);
        sawClipped ||= v.clipped;
        loss += mb.aggWeight[i] * v.loss;
      });
      const ref = valueLossRef(trace.minibatches[j].newValues!, gatherRows(trace.values, A, mb.rows), gatherRows(rec.returns, A, mb.rows), mask, mb.rows.length, A, {
        clip: 0.1,
        agg: trace.knobs.lossAgg,
      });
      expectClose([loss, mb.stats.valueLoss!], [ref.stats[0], ref.stats[0]], 1e-12, 1e-14, `value loss of step ${j}`);
    });
    expect(sawClipped).toBe(true);
  });

  it('the gradient weight is what the actor loss back-propagates into the logits (KL loss included)', () => {
    const r = rng(402);
    const trace = buildTrace(r, {
      prompts: 2,
      samples: 2,
      A: 4,
      ppoEpochs: 1,
      miniBatches: 1,
      knobs: { useKlLoss: true, klLossCoef: 0.3, klLossEstimator: 'k3', lossAgg: 'seq-mean-token-mean' },
    });
    const { B, A } = trace;
    const V = 7;
    const T = 0.9;
    const rows = trace.minibatches[0].rows;
    const logits = randn(r, B * A * V, 2); // (n, A, V): the action rows only, start 0
    const tokens = Int32Array.from({ length: B * A }, () => r.int(0, V));
    const k = trace.knobs;
    const rec0 = recomputeTrace(trace);
    const old = gatherRows(trace.oldLogprobs, A, rows);
    const adv = gatherRows(rec0.advantages, A, rows);
    const mask = gatherRows(trace.actionMask, A, rows);
    const ref = gatherRows(trace.refLogprobs, A, rows);
    const out = actorLossRef(
      logits,
      tokens,
      old,
      adv,
      mask,
      { B, S: A, A, V, start: 0, temperature: T },
      { clipLow: k.clipLow, clipHigh: k.clipHigh, clipC: k.dualClip, agg: k.lossAgg, entropyCoef: 0, kl: { coef: 0.3, estimator: 'k3' } },
      null,
      ref,
    );
    trace.minibatches[0].newLogprobs = out.logprobs;
    const rec = recomputeTrace(trace);
    expectClose([rec.minibatches[0].stats.klLoss, rec.minibatches[0].stats.policyLoss], [out.klLoss, out.policy[0]], 1e-12, 1e-14, 'KL and policy loss');
    expectClose(logprobsBackwardRef(logits, tokens, B, A, V, T, rec.minibatches[0].gradWeight, null), out.gradLogits, 1e-12, 1e-14, '∂loss/∂logits');
  });
});

describe('what if', () => {
  it('β = 0 zeroes the KL part of every r_t and leaves the score at the last action token', () => {
    const trace = buildTrace(rng(500), { holeRow: 1 });
    const rec = recomputeTrace(trace, { ...trace.knobs, klCoef: 0 });
    const { A, B } = trace;
    for (let i = 0; i < B * A; i++) expect(rec.klReward[i]).toBe(0);
    for (let b = 0; b < B; b++) {
      let last = -1;
      for (let t = 0; t < A; t++) if (trace.actionMask[b * A + t] !== 0) last = t;
      for (let t = 0; t < A; t++) expect(rec.rewards[b * A + t]).toBe(t === last ? trace.scores[b] : 0);
    }
    expect(rec.summary.klPenaltyMean).toBe(0);
    // the KL itself is a property of the batch, not of β
    expectClose(rec.kl, trace.stored.kl, 0, 0, 'kl');
    expect(recomputeTrace(trace).summary.klPenaltyMean).not.toBe(0);
  });

  it('moving the KL from the reward into the loss removes it from r_t and adds the KL loss', () => {
    const trace = buildTrace(rng(501));
    const own = recomputeTrace(trace);
    const rec = recomputeTrace(trace, { ...trace.knobs, klInReward: false, useKlLoss: true, klLossCoef: 0.1 });
    for (const x of rec.klReward) expect(x).toBe(0);
    expect(own.summary.klLoss).toBe(0);
    expect(rec.summary.klLoss).not.toBe(0);
    expect(rec.klLossCoef).toBe(0.1);
  });

  it('a larger ε never raises the clip fraction, a larger c never raises the dual-clip fraction', () => {
    const trace = buildTrace(rng(502), { newSpread: 0.6 });
    const eps = [0.02, 0.05, 0.1, 0.2, 0.4, 0.8];
    const sweep = (f: (e: number) => Partial<InspectKnobs>) => eps.map((e) => recomputeTrace(trace, { ...trace.knobs, ...f(e) }));
    const check = (recs: RecomputedTrace[], key: 'clipFraction' | 'clipFractionLower') => {
      for (let i = 1; i < recs.length; i++) {
        for (const [j, mb] of recs[i].minibatches.entries()) expect(mb.stats[key]).toBeLessThanOrEqual(recs[i - 1].minibatches[j].stats[key]);
        expect(recs[i].summary[key]).toBeLessThanOrEqual(recs[i - 1].summary[key]);
      }
      expect(recs[0].summary[key]).toBeGreaterThan(recs[recs.length - 1].summary[key]);
    };
    check(
      sweep((e) => ({ clipLow: e, clipHigh: e })),
      'clipFraction',
    );
    check(
      sweep((e) => ({ clipHigh: e })),
      'clipFraction',
    );
    check(
      sweep((e) => ({ clipLow: e })),
      'clipFraction',
    );
    check(
      [1.01, 1.2, 1.5, 2, 3, 10].map((c) => recomputeTrace(trace, { ...trace.knobs, dualClip: c })),
      'clipFractionLower',
    );
  });

  it('whitening off leaves the raw advantages; γ and λ move the advantages but never the log-probs or values', () => {
    const trace = buildTrace(rng(503));
    const off = recomputeTrace(trace, { ...trace.knobs, whiten: false });
    expectClose(off.advantages, off.advantagesRaw, 0, 0, 'advantages');
    expect(off.whitening).toBeNull();
    const before = [trace.oldLogprobs, trace.refLogprobs, trace.values, ...trace.minibatches.map((m) => m.newLogprobs)].map((a) => Float64Array.from(a));
    const moved = recomputeTrace(trace, { ...trace.knobs, gamma: 0.8, lam: 0.5 });
    expect(moved.advantages).not.toEqual(recomputeTrace(trace).advantages);
    const after = [trace.oldLogprobs, trace.refLogprobs, trace.values, ...trace.minibatches.map((m) => m.newLogprobs)];
    for (const [i, a] of after.entries()) expect(Float64Array.from(a)).toEqual(before[i]);
  });
});
