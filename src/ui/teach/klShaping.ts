// The KL-shaping view's numbers for one sample row: per response token the penalty −β·KL_t, the
// score added at the last action token and the return R_t, as the batch trained with them, and a
// "what if" recomputation under other knobs through the float64 reference functions (the same
// shaping, GAE and discounted returns the reference tests hold the trainer to).
import type { GroupEstimator, GroupKlOrder } from '../../reference/groupAdvantages.ts';
import { discountedReturnsRef, klSummedIntoScore } from '../../reference/groupAdvantages.ts';
import { gaeRef } from '../../reference/gae.ts';
import type { KlEstimator } from '../../reference/kl.ts';
import { shapeRewardsRef } from '../../reference/rewards.ts';
import type { SampleRow } from '../../rl/samples.ts';

/** One response token as the view draws it. */
export interface KlCell {
  text: string;
  /** −β·KL_t: the shaped reward without the score. */
  penalty: number;
  /** The score the returns start from where it is added (the last action token), else 0: the task score for GAE, a group estimator's s̃. */
  score: number;
  /** R_t; NaN when the batch did not send returns. */
  ret: number;
}

/** The knobs a recomputation depends on; β is the one applied to the rewards (0 with the KL out of them). */
export interface ShapingKnobs {
  beta: number;
  gamma: number;
  lam: number;
}

/** What the batch was computed with besides the knobs: they are the run's, not the settings'. */
export interface ShapingSetup {
  klEstimator: KlEstimator;
  advantageEstimator: 'gae' | GroupEstimator;
  /** Where a group estimator's in-reward KL enters (absent = 'openrlhf', per token). */
  groupKlOrder?: GroupKlOrder;
}

/** verl's order sums the batch's −β·KL into a group estimator's score before the group comparison: no per-token penalty reaches R_t. */
export function klInScore(batchBeta: number, setup: ShapingSetup): boolean {
  return setup.advantageEstimator !== 'gae' && klSummedIntoScore(setup.advantageEstimator, setup.groupKlOrder, batchBeta);
}

/**
 * The row's tokens with the penalty and return the batch trained with, at the batch's β. The score
 * cell is the one the returns start from (estimatorScore: s̃ for a group estimator), so the
 * penalties and the score add up to the returns; `startScore` defaults to the task score.
 */
export function actualCells(row: SampleRow, beta: number, startScore: number = row.reward): KlCell[] {
  const last = row.tokens.length - 1;
  return row.tokens.map((t, i) => {
    // The trainer's own shaped reward when sent (the exact device value, the raw task score in it), else −β·KL_t.
    const penalty = t.reward !== undefined ? t.reward - (i === last ? row.reward : 0) : -beta * t.kl;
    return { text: t.text, penalty, score: i === last ? startScore : 0, ret: t.return ?? Number.NaN };
  });
}

/**
 * The returns arrive in float32 from the device: a score read off them that is smaller than their
 * precision at this magnitude is 0 (GRPO's equal scores give s̃ = 0, not a rounding residue).
 */
const RETURN_PRECISION = 1e-6;

/**
 * The score the advantage estimator started the returns from. GAE uses the task score itself; the
 * group estimators (RLOO, GRPO, …) first compare it with the other samples of the prompt, and the
 * row does not carry the group: at the last action token R = −β·KL + s̃ (nothing follows it), so
 * s̃ = R_last + β·KL_last; under verl's order the KL is already in s̃ and R_last = s̃. Under
 * OpenRLHF's order it does not depend on β, so a what-if reuses it.
 */
export function estimatorScore(row: SampleRow, batchBeta: number, setup: ShapingSetup): number | null {
  if (setup.advantageEstimator === 'gae') return row.reward;
  const last = row.tokens[row.tokens.length - 1];
  if (!last || last.return === undefined) return null;
  const penalty = klInScore(batchBeta, setup) ? 0 : batchBeta * last.kl;
  const s = last.return + penalty;
  return Math.abs(s) <= RETURN_PRECISION * Math.max(1, Math.abs(last.return), Math.abs(penalty)) ? 0 : s;
}

/** Why a row cannot be recomputed; the view says it in the page's language (teach:kl.problem.<code>). */
export type WhatIfProblem = 'noTokens' | 'noLogprobs' | 'noReturns' | 'klInScore';

/** For the error a misuse throws: developers read it, not students. */
const PROBLEM_FOR_DEVELOPERS: Record<WhatIfProblem, string> = {
  noTokens: 'the response has no tokens',
  noLogprobs: 'this batch did not send the log-probabilities to recompute from',
  noReturns: 'this batch did not send its returns',
  klInScore: 'verl’s order puts β into the group comparison, which needs the other responses of the prompt',
};

/** Why a row cannot be recomputed, or null when it can. This module stays free of the page's i18n: e2e specs import it in Node. */
export function whatIfProblem(row: SampleRow, batchBeta: number, setup: ShapingSetup, whatIfBeta?: number): WhatIfProblem | null {
  if (row.tokens.length === 0) return 'noTokens';
  if (row.tokens.some((t) => t.oldLogprob === undefined || t.refLogprob === undefined)) return 'noLogprobs';
  if (estimatorScore(row, batchBeta, setup) === null) return 'noReturns';
  // s̃ holds the batch's β·ΣKL compared within the group: another β changes it by the whole group's KL.
  if ((klInScore(batchBeta, setup) || (whatIfBeta !== undefined && klInScore(whatIfBeta, setup))) && whatIfBeta !== batchBeta) return 'klInScore';
  return null;
}

/**
 * The row's penalties and returns recomputed under `knobs` with the reference functions: shaping
 * from log π_old and log π_ref with the run's KL estimator, then GAE (critic values) or the group
 * estimators' discounted returns. Throws when whatIfProblem says it cannot.
 */
export function whatIfCells(row: SampleRow, batchBeta: number, setup: ShapingSetup, knobs: ShapingKnobs): KlCell[] {
  const problem = whatIfProblem(row, batchBeta, setup, knobs.beta);
  if (problem) throw new Error(`what-if: ${PROBLEM_FOR_DEVELOPERS[problem]}`);
  const n = row.tokens.length;
  const logp = row.tokens.map((t) => t.oldLogprob as number);
  const ref = row.tokens.map((t) => t.refLogprob as number);
  const mask = new Float64Array(n).fill(1);
  const startScore = estimatorScore(row, batchBeta, setup) as number;
  const tokenBeta = klInScore(knobs.beta, setup) ? 0 : knobs.beta;
  const { rewards, kl } = shapeRewardsRef([startScore], logp, ref, mask, 1, n, tokenBeta, setup.klEstimator);
  const returns =
    setup.advantageEstimator === 'gae'
      ? gaeRef(
          rewards,
          row.tokens.map((t) => t.value),
          mask,
          1,
          n,
          knobs.gamma,
          knobs.lam,
        ).returns
      : discountedReturnsRef(rewards, mask, 1, n, knobs.gamma);
  return row.tokens.map((t, i) => ({ text: t.text, penalty: -knobs.beta * kl[i], score: i === n - 1 ? startScore : 0, ret: returns[i] }));
}

/** Words for wrapping: a run of tokens up to and including the spaces after it, so lines break between words. */
export function wordsOf<T extends { text: string }>(cells: readonly T[]): T[][] {
  const words: T[][] = [];
  let word: T[] = [];
  for (const c of cells) {
    const space = c.text.trim() === '';
    if (!space && word.length > 0 && word[word.length - 1].text.trim() === '') {
      words.push(word);
      word = [];
    }
    word.push(c);
  }
  if (word.length > 0) words.push(word);
  return words;
}

/** Largest |penalty| and |return| over several cell lists (at least a tiny positive), so bars share one scale. */
export function barScale(...lists: readonly KlCell[][]): { penalty: number; ret: number } {
  let penalty = 0;
  let ret = 0;
  for (const cells of lists)
    for (const c of cells) {
      if (Number.isFinite(c.penalty)) penalty = Math.max(penalty, Math.abs(c.penalty));
      if (Number.isFinite(c.ret)) ret = Math.max(ret, Math.abs(c.ret));
    }
  return { penalty: Math.max(penalty, 1e-9), ret: Math.max(ret, 1e-9) };
}

/** Which knobs differ, as "β = 0.6, γ = 0.9" for the what-if label; '' when none does. */
export function changedKnobs(batch: ShapingKnobs, settings: ShapingKnobs, usesLam: boolean): string {
  const parts: string[] = [];
  const same = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
  if (!same(batch.beta, settings.beta)) parts.push(`β = ${fmt(settings.beta)}`);
  if (!same(batch.gamma, settings.gamma)) parts.push(`γ = ${fmt(settings.gamma)}`);
  if (usesLam && !same(batch.lam, settings.lam)) parts.push(`λ = ${fmt(settings.lam)}`);
  return parts.join(', ');
}

/** Sums the view prints under each strip: Σ penalty, the score and R at the first token. */
export function cellTotals(cells: readonly KlCell[]): { penalty: number; score: number; firstReturn: number } {
  return {
    penalty: cells.reduce((a, c) => a + c.penalty, 0),
    score: cells.reduce((a, c) => a + c.score, 0),
    firstReturn: cells[0]?.ret ?? Number.NaN,
  };
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return '—';
  if (x === 0) return '0';
  return Math.abs(x) >= 100 || Math.abs(x) < 1e-3 ? x.toExponential(2) : Number(x.toPrecision(3)).toString();
}
