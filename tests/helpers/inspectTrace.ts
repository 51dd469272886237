// Iteration traces for the inspector's tests, built the way the trainer builds an iteration:
// random log-probs, values and scores, then the experience and every minibatch step's statistics
// through the float64 references (src/reference/), in the trainer's order of operations.
import { aggregateRef } from '../../src/reference/aggregate.ts';
import { gaeRef } from '../../src/reference/gae.ts';
import { groupAdvantagesRef, type GroupEstimator } from '../../src/reference/groupAdvantages.ts';
import { klRef } from '../../src/reference/kl.ts';
import { covKnobs, covStepSeed, policyLossRef, tisWeightsRef } from '../../src/reference/policyLoss.ts';
import { shapeRewardsRef } from '../../src/reference/rewards.ts';
import { valueLossRef } from '../../src/reference/valueLoss.ts';
import { whitenRef } from '../../src/reference/whiten.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { knobsFromConfig, minibatchStatsOf, type InspectKnobs, type IterationTrace, type MinibatchTrace } from '../../src/rl/inspect/index.ts';
import { epochMinibatches } from '../../src/rl/minibatch.ts';
import type { Rng } from '../../src/util/rng.ts';
import { randn, rightPaddedMask } from './random.ts';

export interface TraceSpec {
  prompts?: number;
  samples?: number;
  A?: number;
  knobs?: Partial<InspectKnobs>;
  ppoEpochs?: number;
  miniBatches?: number;
  /** Rows with special masks: no action token, one action token, a masked position in the middle. */
  allMaskedRow?: number;
  lengthOneRow?: number;
  holeRow?: number;
  /** Put log-prob gaps of ±30 (old vs ref, new vs old) into the batch. */
  extreme?: boolean;
  /** Every response of a group gets the same score. */
  equalScores?: boolean;
  /** Spread of π_new around π_old (drives how many tokens clip). */
  newSpread?: number;
}

/** Default knobs of the page's config at β = 0.05, with `over` applied. */
export function knobs(over: Partial<InspectKnobs> = {}): InspectKnobs {
  return { ...knobsFromConfig(DEFAULT_CONFIG, 0.05), ...over };
}

function rowsOf(src: ArrayLike<number>, A: number, rows: Int32Array): Float64Array {
  const out = new Float64Array(rows.length * A);
  rows.forEach((b, i) => {
    for (let a = 0; a < A; a++) out[i * A + a] = src[b * A + a];
  });
  return out;
}

export function buildTrace(r: Rng, spec: TraceSpec = {}): IterationTrace {
  const prompts = spec.prompts ?? 3;
  const samples = spec.samples ?? 4;
  const B = prompts * samples;
  const A = spec.A ?? 6;
  const k = knobs(spec.knobs);
  const ppoEpochs = spec.ppoEpochs ?? 2;
  const miniBatches = spec.miniBatches ?? 2;
  const mask = rightPaddedMask(r, B, A, 1);
  const setRow = (b: number | undefined, len: number) => {
    if (b === undefined) return;
    for (let a = 0; a < A; a++) mask[b * A + a] = a < len ? 1 : 0;
  };
  setRow(spec.allMaskedRow, 0);
  setRow(spec.lengthOneRow, 1);
  if (spec.holeRow !== undefined) {
    setRow(spec.holeRow, A);
    mask[spec.holeRow * A + Math.floor(A / 2)] = 0;
  }
  const group = Int32Array.from({ length: B }, (_, b) => Math.floor(b / samples));
  const scores = spec.equalScores ? Float64Array.from(group, (g) => g + 0.5) : randn(r, B);
  const oldLogprobs = Float64Array.from(randn(r, B * A), (x) => -Math.abs(x) * 2 - 0.05);
  const refLogprobs = Float64Array.from(oldLogprobs, (x) => Math.min(-1e-4, x + r.normal() * 0.4));
  const rolloutLogprobs = Float64Array.from(oldLogprobs, (x) => x + r.normal() * 0.05);
  const values = k.advantageEstimator === 'gae' ? randn(r, B * A, 0.7) : new Float64Array(B * A);
  const spread = spec.newSpread ?? 0.25;
  const newFor = (rows: Int32Array) => Float64Array.from(rowsOf(oldLogprobs, A, rows), (x) => x + r.normal() * spread);
  if (spec.extreme) {
    oldLogprobs[0] = -30;
    refLogprobs[0] = -1e-3;
    oldLogprobs[1] = -1e-3;
    refLogprobs[1] = -30;
    rolloutLogprobs[2] = oldLogprobs[2] + 30;
  }
  const responseTokens = Int32Array.from({ length: B * A }, () => r.int(0, 20));

  // The experience stage, as makeExperience orders it.
  const rewardBeta = k.klInReward ? k.klCoef : 0;
  const { rewards, kl } = shapeRewardsRef(scores, oldLogprobs, refLogprobs, mask, B, A, rewardBeta, k.klEstimator);
  let advantages: Float64Array;
  let returns: Float64Array;
  // ReMax's greedy-reward baselines: drawn after everything else, so other estimators' traces are unchanged.
  const baselines = k.advantageEstimator === 'remax' ? randn(r, B) : null;
  if (k.advantageEstimator === 'gae') {
    const g = gaeRef(rewards, values, mask, B, A, k.gamma, k.lam);
    advantages = whitenRef(g.advantages, mask, true);
    returns = g.returns;
  } else {
    const g = groupAdvantagesRef({
      estimator: k.advantageEstimator as GroupEstimator,
      scores,
      group,
      logprobs: oldLogprobs,
      refLogprobs,
      actionMask: mask,
      B,
      A,
      beta: rewardBeta,
      klEstimator: k.klEstimator,
      gamma: k.gamma,
      klOrder: k.groupKlOrder,
      baselines,
    });
    advantages = g.advantages;
    returns = g.returns;
  }
  const tisWeights = k.tisCap !== null ? tisWeightsRef(oldLogprobs, rolloutLogprobs, mask, k.tisCap) : null;

  // The update: every epoch's minibatches, each step's statistics as the device reports them.
  const minibatches: MinibatchTrace[] = [];
  for (let epoch = 0; epoch < ppoEpochs; epoch++) {
    epochMinibatches(B, miniBatches, 7, 3, epoch).forEach((rows, index) => {
      const n = rows.length;
      const newLogprobs = newFor(rows);
      if (spec.extreme && epoch === 0 && index === 0) {
        newLogprobs[0] += 30;
        newLogprobs[1] -= 30;
      }
      const m = rowsOf(mask, A, rows);
      const policy = policyLossRef(
        rowsOf(oldLogprobs, A, rows),
        newLogprobs,
        rowsOf(advantages, A, rows),
        m,
        n,
        A,
        // the cov knobs and clip_cov's per-step seed as the trainer passes them (iter 3, below)
        {
          clipLow: k.clipLow,
          clipHigh: k.clipHigh,
          clipC: k.dualClip,
          agg: k.lossAgg,
          lossMode: k.lossMode,
          normScale: k.normScale,
          ...covKnobs(k),
          covSeed: covStepSeed(k.seed ?? 0, 3, epoch, index),
        },
        tisWeights ? rowsOf(tisWeights, A, rows) : null,
      ).stats;
      const klLoss = k.useKlLoss ? aggregateRef(klRef(newLogprobs, rowsOf(refLogprobs, A, rows), k.klLossEstimator), m, n, A, k.lossAgg, k.normScale).value : null;
      let newValues: Float64Array | null = null;
      let value: Float64Array | null = null;
      if (k.advantageEstimator === 'gae') {
        newValues = Float64Array.from(rowsOf(values, A, rows), (v) => v + r.normal() * 0.3);
        value = valueLossRef(newValues, rowsOf(values, A, rows), rowsOf(returns, A, rows), m, n, A, { clip: k.valueClip, agg: k.lossAgg, normScale: k.normScale }).stats;
      }
      minibatches.push({ epoch, index, rows, newLogprobs, newValues, stored: minibatchStatsOf(policy, value, klLoss) });
    });
  }
  return {
    iter: 3,
    B,
    A,
    knobs: k,
    responseTokens,
    actionMask: mask,
    group,
    scores,
    ...(baselines ? { baselines } : {}),
    rolloutLogprobs,
    oldLogprobs,
    refLogprobs,
    values,
    stored: { kl, rewards, advantages, returns, tisWeights },
    minibatches,
  };
}
