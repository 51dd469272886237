// The KL-shaping view's numbers (src/ui/teach/klShaping.ts): the batch's cells come from the
// row's own shaped rewards and returns, and a what-if with another β / γ / λ equals the float64
// reference pipeline run on the whole batch with those knobs (RLOO's group baseline included,
// which the row itself does not carry). Words wrap between words, never inside one.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, t } from '../../src/i18n/index.ts';
import { gaeRef } from '../../src/reference/gae.ts';
import { compactGroups, transformScoresRef, type GroupEstimator } from '../../src/reference/groupAdvantages.ts';
import type { KlEstimator } from '../../src/reference/kl.ts';
import { shapeRewardsRef } from '../../src/reference/rewards.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { findPreset, REWARD_HACKING } from '../../src/rl/presets.ts';
import type { SampleRow } from '../../src/rl/samples.ts';
import type { RunRecord } from '../../src/store/runs.ts';
import { klBatchContext } from '../../src/ui/teach/klBatch.ts';
import { actualCells, barScale, changedKnobs, estimatorScore, klInScore, type ShapingSetup, whatIfCells, whatIfProblem, wordsOf } from '../../src/ui/teach/klShaping.ts';
import { groupRefOn } from '../helpers/groupBatch.ts';
import { expectClose, randn, rightPaddedMask, rng } from '../helpers/random.ts';

interface Batch {
  B: number;
  A: number;
  mask: Float64Array;
  logp: Float64Array;
  ref: Float64Array;
  values: Float64Array;
  scores: Float64Array;
  group: Int32Array;
}

function batch(salt: number): Batch {
  const r = rng(salt);
  const B = 4;
  const A = 7;
  const logp = Float64Array.from(randn(r, B * A), (x) => -Math.abs(x) - 0.1);
  return {
    B,
    A,
    mask: rightPaddedMask(r, B, A, 2),
    logp,
    ref: Float64Array.from(logp, (x) => x + r.normal() * 0.5),
    values: randn(r, B * A, 0.6),
    scores: Float64Array.from({ length: B }, () => r.uniform(-1, 1)),
    group: new Int32Array(B), // one prompt, four samples
  };
}

/** What the trainer computes for the batch at (β, γ, λ): shaped rewards, KL and returns, and the rewards the returns scan adds. */
function experience(x: Batch, setup: ShapingSetup, beta: number, gamma: number, lam: number) {
  const { rewards, kl } = shapeRewardsRef(x.scores, x.logp, x.ref, x.mask, x.B, x.A, beta, setup.klEstimator);
  if (setup.advantageEstimator === 'gae') return { rewards, kl, returns: gaeRef(rewards, x.values, x.mask, x.B, x.A, gamma, lam).returns, scanRewards: rewards };
  // A group estimator's scan starts from s̃, the score compared within its group (OpenRLHF's order).
  const est = setup.advantageEstimator as GroupEstimator;
  const normalised = transformScoresRef(x.scores, compactGroups(x.group, x.B, est), est);
  const scanRewards = shapeRewardsRef(normalised, x.logp, x.ref, x.mask, x.B, x.A, beta, setup.klEstimator).rewards;
  return { rewards, kl, returns: groupRefOn(x, est, { beta, klEstimator: setup.klEstimator, gamma }).returns, scanRewards };
}

/** Row b as the trainer's sampleRows builds it: action tokens only, each with its quantities. */
function rowOf(x: Batch, e: ReturnType<typeof experience>, b: number): SampleRow {
  const tokens = [];
  for (let a = 0; a < x.A; a++) {
    const k = b * x.A + a;
    if (x.mask[k] === 0) continue;
    tokens.push({
      text: String.fromCharCode(97 + a),
      advantage: 0,
      kl: e.kl[k],
      ratio: 1,
      value: x.values[k],
      reward: e.rewards[k],
      return: e.returns[k],
      oldLogprob: x.logp[k],
      refLogprob: x.ref[k],
    });
  }
  return { prompt: 'p', response: tokens.map((t) => t.text).join(''), reward: x.scores[b], endedWithEos: true, tokens };
}

const actionOnly = (x: Batch, a: Float64Array, b: number) => Array.from(a.subarray(b * x.A, (b + 1) * x.A)).filter((_, t) => x.mask[b * x.A + t] !== 0);

const SETUPS: [string, ShapingSetup, number, number][] = [
  ['RLOO, k1', { klEstimator: 'k1', advantageEstimator: 'rloo' }, 1, 1],
  ['GRPO, k3', { klEstimator: 'k3', advantageEstimator: 'group_norm' }, 0.95, 1],
  ['GAE, k2', { klEstimator: 'k2' as KlEstimator, advantageEstimator: 'gae' }, 0.9, 0.8],
];

describe('KL shaping view: the batch and a what-if', () => {
  beforeAll(() => loadNamespaces(['teach']));
  it.each(SETUPS)('%s: the batch cells are its shaped rewards split into penalty and score, with its returns', (_, setup, gamma, lam) => {
    const x = batch(1);
    const e = experience(x, setup, 0.3, gamma, lam);
    for (let b = 0; b < x.B; b++) {
      const row = rowOf(x, e, b);
      const cells = actualCells(row, 0.3);
      const n = cells.length;
      expectClose(
        cells.map((c) => c.penalty),
        actionOnly(x, e.kl, b).map((k) => -0.3 * k),
        1e-12,
        1e-12,
        'penalty',
      );
      expect(cells.map((c) => c.score)).toEqual([...Array(n - 1).fill(0), x.scores[b]]);
      expect(cells.map((c) => c.ret)).toEqual(actionOnly(x, e.returns, b));
    }
  });

  it.each(SETUPS)('%s: a what-if with another β, γ, λ equals the reference pipeline on the whole batch', (_, setup, gamma, lam) => {
    const x = batch(2);
    const trained = experience(x, setup, 0.3, gamma, lam);
    const knobs = { beta: 0.85, gamma: gamma * 0.9, lam: lam * 0.7 };
    const expected = experience(x, setup, knobs.beta, knobs.gamma, knobs.lam);
    for (let b = 0; b < x.B; b++) {
      const cells = whatIfCells(rowOf(x, trained, b), 0.3, setup, knobs);
      expectClose(
        cells.map((c) => c.ret),
        actionOnly(x, expected.returns, b),
        1e-12,
        1e-12,
        `returns row ${b}`,
      );
      // The score cell is the one the returns start from (s̃ for a group estimator): penalty + score is what the scan adds.
      expectClose(
        cells.map((c) => c.penalty + c.score),
        actionOnly(x, expected.scanRewards, b),
        1e-12,
        1e-12,
        `rewards row ${b}`,
      );
    }
  });

  it('a what-if with the batch’s own knobs gives the batch back; β = 0 removes every penalty', () => {
    const x = batch(3);
    const setup: ShapingSetup = { klEstimator: 'k1', advantageEstimator: 'rloo' };
    const e = experience(x, setup, 0.6, 1, 1);
    const row = rowOf(x, e, 0);
    const same = whatIfCells(row, 0.6, setup, { beta: 0.6, gamma: 1, lam: 1 });
    expectClose(
      same.map((c) => c.ret),
      actualCells(row, 0.6).map((c) => c.ret),
      1e-12,
      1e-12,
      'returns',
    );
    const none = whatIfCells(row, 0.6, setup, { beta: 0, gamma: 1, lam: 1 });
    expect(none.every((c) => c.penalty === 0)).toBe(true);
    // With no penalty every return is the baselined score.
    expect(new Set(none.map((c) => c.ret)).size).toBe(1);
    expect(none[0].ret).not.toBeCloseTo(actualCells(row, 0.6)[0].ret, 6);
  });

  it('a group estimator’s score cell is s̃, read off the returns to their precision: equal scores give 0, not a residue', () => {
    const x = batch(4);
    x.scores.fill(1); // one prompt, four equal scores: GRPO's s̃ is 0 for each
    const setup: ShapingSetup = { klEstimator: 'k1', advantageEstimator: 'group_norm' };
    const e = experience(x, setup, 0.3, 1, 1);
    // The device's returns are float32: R_last + β·KL_last leaves a rounding residue.
    const f32 = { ...e, returns: Float64Array.from(e.returns, (r) => Math.fround(r)) };
    for (let b = 0; b < x.B; b++) {
      const row = rowOf(x, f32, b);
      const s = estimatorScore(row, 0.3, setup)!;
      expect(s).toBe(0);
      const cells = actualCells(row, 0.3, s);
      expect(cells[cells.length - 1].score).toBe(0);
      // The strip adds up: Σ penalties + s̃ is the return at the first token (γ = 1), to float32 precision.
      expect(Math.abs(cells.reduce((a, c) => a + c.penalty + c.score, 0) - cells[0].ret)).toBeLessThan(1e-6);
    }
  });

  it('under verl’s KL order the penalties are in s̃: R_t starts from s̃ alone, and another β cannot be recomputed', () => {
    const x = batch(5);
    const setup: ShapingSetup = { klEstimator: 'k1', advantageEstimator: 'rloo', groupKlOrder: 'verl' };
    expect(klInScore(0.3, setup)).toBe(true);
    expect(klInScore(0, setup)).toBe(false);
    expect(klInScore(0.3, { ...setup, advantageEstimator: 'remax' })).toBe(false);
    const returns = groupRefOn(x, 'rloo', { beta: 0.3, klEstimator: 'k1', gamma: 1, klOrder: 'verl' }).returns;
    const e = { ...experience(x, setup, 0.3, 1, 1), returns };
    const row = rowOf(x, e, 2);
    const s = estimatorScore(row, 0.3, setup)!;
    expect(s).toBe(row.tokens[row.tokens.length - 1].return);
    expect(whatIfProblem(row, 0.3, setup, 0.5)).toBe('klInScore');
    expect(whatIfProblem(row, 0.3, setup, 0.3)).toBeNull();
    // γ alone can change: the returns start from s̃ with no per-token penalty.
    const cells = whatIfCells(row, 0.3, setup, { beta: 0.3, gamma: 0.5, lam: 1 });
    const n = cells.length;
    expectClose(
      cells.map((c) => c.ret),
      cells.map((_, i) => s * 0.5 ** (n - 1 - i)),
      1e-12,
      1e-12,
      'returns',
    );
  });

  it('a row without log-probs (an older batch) says why it cannot be recomputed', () => {
    const row: SampleRow = { prompt: '1+2=', response: '3', reward: 1, endedWithEos: true, tokens: [{ text: '3', advantage: 1, kl: 0.1, ratio: 1, value: 0 }] };
    const setup: ShapingSetup = { klEstimator: 'k1', advantageEstimator: 'gae' };
    expect(whatIfProblem(row, 0.1, setup)).toBe('noLogprobs');
    expect(t('teach:kl.problem.noLogprobs')).toBe('this batch did not send the log-probabilities to recompute from');
    expect(() => whatIfCells(row, 0.1, setup, { beta: 0.2, gamma: 1, lam: 1 })).toThrow(/log-probabilities/);
    // Without trainer rewards, the penalty is −β·KL_t.
    expect(actualCells(row, 0.1)[0]).toEqual({ text: '3', penalty: -0.1 * 0.1, score: 1, ret: Number.NaN });
  });
});

describe('KL shaping view: layout', () => {
  const cell = (text: string) => ({ text });
  it('wraps between words: each word keeps the spaces after it', () => {
    const words = wordsOf(['i', ' ', 'l', 'o', 'v', 'e', ' ', ' ', 'i', 't', '<eos>'].map(cell));
    expect(words.map((w) => w.map((c) => c.text).join(''))).toEqual(['i ', 'love  ', 'it<eos>']);
  });

  it('a three-token arithmetic answer is one word; no tokens, no words', () => {
    expect(wordsOf(['1', '9', '<eos>'].map(cell)).length).toBe(1);
    expect(wordsOf([])).toEqual([]);
  });

  it('bars share one scale across the batch and the what-if', () => {
    const a = [{ text: 'a', penalty: -0.2, score: 0, ret: 0.5 }];
    const b = [{ text: 'a', penalty: -0.9, score: 0, ret: Number.NaN }];
    expect(barScale(a, b)).toEqual({ penalty: 0.9, ret: 0.5 });
    expect(barScale([]).penalty).toBeGreaterThan(0);
  });

  it('names only the knobs that changed (λ only where GAE uses it)', () => {
    const batchKnobs = { beta: 0, gamma: 1, lam: 0.95 };
    expect(changedKnobs(batchKnobs, { beta: 0, gamma: 1, lam: 0.95 }, true)).toBe('');
    expect(changedKnobs(batchKnobs, { beta: 0.6, gamma: 1, lam: 0.9 }, false)).toBe('β = 0.6');
    expect(changedKnobs(batchKnobs, { beta: 0.6, gamma: 0.99, lam: 0.9 }, true)).toBe('β = 0.6, γ = 0.99, λ = 0.9');
  });
});

describe('KL shaping view: the batch’s knobs and the settings’', () => {
  const hacking = { ...DEFAULT_CONFIG, ...findPreset(REWARD_HACKING)!.values, klCoef: 0 };
  const runOf = (config: PpoConfig, betas: number[]): RunRecord => ({
    id: 'r',
    name: 'β = 0',
    color: '#000',
    visible: true,
    config,
    backend: 'cpu',
    createdAt: 0,
    metrics: betas.map((beta, iter) => ({ iter, values: { beta } })),
  });

  it('β is the one the run reported at the samples’ iteration; unchanged settings make no what-if', () => {
    const adaptive = { ...hacking, klCoef: 0.5, klController: 'adaptive' as const };
    const ctx = klBatchContext(runOf(adaptive, [0.5, 0.45, 0.41]), 1, adaptive);
    expect(ctx.batch.beta).toBe(0.45);
    expect(ctx.setup).toEqual({ klEstimator: 'k1', advantageEstimator: 'rloo', groupKlOrder: 'openrlhf' });
    expect(ctx.whatIf).toBeNull(); // the controller moved β, the user did not
  });

  it('a β changed in the settings is a labelled what-if with the settings’ β', () => {
    const ctx = klBatchContext(runOf(hacking, [0, 0]), 1, { ...hacking, klCoef: 0.6 });
    expect(ctx.batch.beta).toBe(0);
    expect(ctx.whatIf).toEqual({ knobs: { beta: 0.6, gamma: hacking.gamma, lam: hacking.lam }, label: 'β = 0.6' });
    // The KL taken out of the reward is β applied = 0: the same as the batch's, so no what-if.
    expect(klBatchContext(runOf(hacking, [0]), 0, { ...hacking, klCoef: 0.6, klInReward: false }).whatIf).toBeNull();
  });

  it('samples without a run take the settings and offer no what-if', () => {
    const ctx = klBatchContext(undefined, 4, { ...hacking, klCoef: 0.3 });
    expect(ctx.batch.beta).toBe(0.3);
    expect(ctx.whatIf).toBeNull();
  });
});
