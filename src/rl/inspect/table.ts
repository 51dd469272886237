// What the inspector shows of one response: its token table, the reverse scan step by step, and
// how a "what if" moves the batch numbers.
import { lastActionIndex } from '../../reference/rewards.ts';
import { recomputeTrace, type RecomputedTrace, type TraceSummary } from './recompute.ts';
import type { ClipSide, ValueTokenTerms } from './tokenTerms.ts';
import type { IterationTrace } from './trace.ts';

/** One update step a token was in. */
export interface TokenUpdateCell {
  /** Index of the update step among the iteration's minibatch steps. */
  step: number;
  epoch: number;
  minibatch: number;
  newLogprob: number;
  ratio: number;
  clipSide: ClipSide;
  /** The token's policy loss before its aggregation weight. */
  tokenLoss: number;
  /** clip_cov / kl_cov acted on the token in this step (false for the other modes). */
  covPicked: boolean;
  aggWeight: number;
  /** ∂loss/∂logπ_new of the token (policy loss and KL loss). */
  gradWeight: number;
  klLossTerm: number | null;
  value: (ValueTokenTerms & { newValue: number }) | null;
}

export interface TokenRow {
  /** Position in the response. */
  t: number;
  token: number;
  /** Not an action token (padding after EOS): it carries the scan's values and has no loss. */
  masked: boolean;
  /** The last action token, where the score enters r_t. */
  scored: boolean;
  rolloutLogprob: number | null;
  oldLogprob: number;
  refLogprob: number;
  kl: number;
  /** −β·KL_t. */
  klReward: number;
  /** r_t as the trainer stores it: −β·KL_t, plus the raw score at the last action token. */
  reward: number;
  /**
   * The reward the advantage scan adds at t: r_t for GAE; for a group estimator the normalised
   * score s̃ at the last action token plus −β·KL_t where that enters per token (klInScan).
   */
  scanReward: number;
  /** A group estimator's normalised score s̃ at the last action token, where it enters the scan; null elsewhere and for GAE. */
  normScore: number | null;
  /** V_t; null for a group estimator (no critic). */
  value: number | null;
  delta: number | null;
  advantageRaw: number;
  advantage: number;
  return: number;
  tisWeight: number | null;
  updates: TokenUpdateCell[];
}

/** A group estimator's numbers for the response's group, in place of V_t and δ_t. */
export interface GroupRowStats {
  members: number[]; // batch rows of the group
  scores: number[]; // their scores, in member order
  mean: number;
  std: number;
  transformedScore: number;
}

export interface TokenTable {
  row: number;
  klEstimator: string;
  /** The KL loss's estimator, whether or not the KL is in the loss. */
  klLossEstimator: string;
  advantageEstimator: string;
  score: number;
  /** −β·KL_t is part of each r_t the scan adds (false where verl's order sums the KL into the score first). */
  klInScan: boolean;
  /** ReMax's baseline b (the prompt's greedy reward) subtracted after the scan; null for the other estimators. */
  baseline: number | null;
  /** Action tokens of the response. */
  length: number;
  group: GroupRowStats | null;
  rows: TokenRow[];
}

/** The token table of batch row `row`, one entry per response position, masked ones included. */
export function tokenTable(trace: IterationTrace, row: number, recomputed: RecomputedTrace = recomputeTrace(trace)): TokenTable {
  const { A, B, actionMask: mask } = trace;
  if (!(Number.isInteger(row) && row >= 0 && row < B)) throw new Error(`tokenTable: row ${row} outside [0, ${B})`);
  const rec = recomputed;
  const last = lastActionIndex(mask, row, A);
  const gae = rec.knobs.advantageEstimator === 'gae';
  const rows: TokenRow[] = [];
  for (let t = 0; t < A; t++) {
    const i = row * A + t;
    const masked = mask[i] === 0;
    const updates: TokenUpdateCell[] = [];
    rec.minibatches.forEach((mb, m) => {
      const j = mb.rows.indexOf(row);
      if (j < 0) return;
      const k = j * A + t;
      const { newLogprobs, newValues } = trace.minibatches[m];
      updates.push({
        step: m,
        epoch: mb.epoch,
        minibatch: mb.index,
        newLogprob: newLogprobs[k],
        ratio: mb.ratio[k],
        clipSide: mb.clipSide[k],
        tokenLoss: mb.tokenLoss[k],
        covPicked: mb.covPicked ? mb.covPicked[k] === 1 : false,
        aggWeight: mb.aggWeight[k],
        gradWeight: mb.gradWeight[k],
        klLossTerm: mb.klLossTerm ? mb.klLossTerm[k] : null,
        value: mb.value && newValues ? { ...mb.value[k], newValue: newValues[k] } : null,
      });
    });
    rows.push({
      t,
      token: trace.responseTokens[i],
      masked,
      scored: t === last,
      rolloutLogprob: trace.rolloutLogprobs ? trace.rolloutLogprobs[i] : null,
      oldLogprob: trace.oldLogprobs[i],
      refLogprob: trace.refLogprobs[i],
      kl: rec.kl[i],
      klReward: rec.klReward[i],
      reward: rec.rewards[i],
      scanReward: rec.scanRewards[i],
      normScore: rec.group && t === last && !masked ? rec.group.transformedScores[row] : null,
      value: gae ? trace.values[i] : null,
      delta: rec.delta ? rec.delta[i] : null,
      advantageRaw: rec.advantagesRaw[i],
      advantage: rec.advantages[i],
      return: rec.returns[i],
      tisWeight: rec.tisWeights ? rec.tisWeights[i] : null,
      updates,
    });
  }
  let group: GroupRowStats | null = null;
  if (rec.group) {
    const g = rec.group.index[row];
    const members = [...rec.group.index.keys()].filter((b) => rec.group!.index[b] === g);
    group = { members, scores: members.map((b) => trace.scores[b]), mean: rec.group.mean[g], std: rec.group.std[g], transformedScore: rec.group.transformedScores[row] };
  }
  let length = 0;
  for (let t = 0; t < A; t++) if (mask[row * A + t] !== 0) length++;
  return {
    row,
    klEstimator: rec.knobs.klEstimator,
    klLossEstimator: rec.knobs.klLossEstimator,
    advantageEstimator: rec.knobs.advantageEstimator,
    score: trace.scores[row],
    klInScan: rec.klInScan,
    baseline: rec.knobs.advantageEstimator === 'remax' && trace.baselines ? trace.baselines[row] : null,
    length,
    group,
    rows,
  };
}

/** One batch number before and under the "what if" (null where the iteration has none, e.g. no critic). */
export interface SummaryChange {
  actual: number | null;
  whatIf: number | null;
  change: number | null;
}

export interface WhatIfDiff {
  summary: Record<keyof TraceSummary, SummaryChange>;
  /** Action tokens of the update steps whose clip side differs. */
  clipSideChanges: number;
  /** Largest |ΔA_t| over action tokens. */
  maxAdvantageChange: number;
}

/** How the batch numbers move from `actual` to `whatIf` (two recomputations of one trace). */
export function whatIfDiff(actual: RecomputedTrace, whatIf: RecomputedTrace): WhatIfDiff {
  if (actual.B !== whatIf.B || actual.A !== whatIf.A || actual.minibatches.length !== whatIf.minibatches.length) {
    throw new Error('whatIfDiff: the two recomputations are of different traces');
  }
  const summary = {} as Record<keyof TraceSummary, SummaryChange>;
  for (const key of Object.keys(actual.summary) as (keyof TraceSummary)[]) {
    const a = actual.summary[key];
    const w = whatIf.summary[key];
    summary[key] = { actual: a, whatIf: w, change: a === null || w === null ? null : w - a };
  }
  let clipSideChanges = 0;
  actual.minibatches.forEach((mb, j) => {
    mb.clipSide.forEach((s, k) => {
      clipSideChanges += s !== whatIf.minibatches[j].clipSide[k] ? 1 : 0;
    });
  });
  let maxAdvantageChange = 0;
  // Masked positions carry values no loss reads; only action tokens count.
  for (let i = 0; i < actual.advantages.length; i++) {
    if (actual.actionMask[i] !== 0) maxAdvantageChange = Math.max(maxAdvantageChange, Math.abs(whatIf.advantages[i] - actual.advantages[i]));
  }
  return { summary, clipSideChanges, maxAdvantageChange };
}

/** One step of the reverse scan at position t (GAE, or a group estimator's returns scan). */
export interface ScanStep {
  t: number;
  /** Not an action token: the carried values pass through unchanged. */
  masked: boolean;
  /** r_t the scan adds (a group estimator's uses its transformed score). */
  reward: number;
  /** V_t; 0 for a group estimator. */
  value: number;
  /** V of the next action token, 0 past the end. */
  nextValue: number;
  /** r_t + γ·V_next − V_t; null at a masked position. */
  delta: number | null;
  /** A_{t+1}: the running value carried in from the right (0 past the end). */
  carried: number;
  /** The factor on the carried value: γλ for GAE, γ for the returns scan. */
  carryFactor: number;
  /** A_t = δ_t + carryFactor·A_{t+1} at an action token, the carried value at a masked one. */
  advantage: number;
}

/** The reverse scan of row `row`, t from the last position to the first, for the animated GAE step. */
export function gaeScanSteps(trace: IterationTrace, row: number, recomputed: RecomputedTrace = recomputeTrace(trace)): ScanStep[] {
  const { A, actionMask: mask } = trace;
  const rec = recomputed;
  const gae = rec.knobs.advantageEstimator === 'gae';
  const carryFactor = gae ? rec.knobs.gamma * rec.knobs.lam : rec.knobs.gamma;
  const steps: ScanStep[] = [];
  let nextValue = 0;
  for (let t = A - 1; t >= 0; t--) {
    const i = row * A + t;
    const masked = mask[i] === 0;
    const value = gae ? trace.values[i] : 0;
    steps.push({
      t,
      masked,
      reward: rec.scanRewards[i],
      value,
      nextValue,
      // a group estimator's scan has no critic: its δ_t is r_t
      delta: masked ? null : gae ? rec.delta![i] : rec.scanRewards[i],
      carried: t + 1 < A ? rec.advantagesRaw[i + 1] : 0,
      carryFactor,
      advantage: rec.advantagesRaw[i],
    });
    if (!masked) nextValue = value;
  }
  return steps;
}
