// The check both backends run on a captured iteration: every number the inspector shows equals
// the float64 recomputation (src/rl/inspect/recompute.ts) from the trace's own inputs, and the
// trace agrees with what the same iteration reported to the charts and the clipping view.
// Per update step, token by token, where the device gave something independent of the trace's
// own arrays: each step's rows are the seeded shuffle's; the first step's π_new is π_old (the
// weights have not moved yet); the last step's ratios are the device's (the clipping view). The
// trace holds every step's π_new from the device but the device's ratios of the last step only,
// so earlier steps' ratios are checked through their step statistics (loss, clip fractions,
// approx KL), not per token: recomputing them from the trace's π_new would check it against itself.
import { expect } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import {
  checkTraceShapes,
  dimSizes,
  gatherRows,
  openrlhfExperience,
  recomputeTrace,
  verlBatch,
  type InspectKnobs,
  type IterationTrace,
  type MinibatchRecomputed,
  type MinibatchStats,
  type RecomputedTrace,
} from '../../src/rl/inspect/index.ts';
import { epochMinibatches } from '../../src/rl/minibatch.ts';
import { PpoTrainer, type IterationResult } from '../../src/rl/trainer.ts';
import type { SampleToken } from '../../src/rl/samples.ts';
import { traceBatch } from '../../src/store/traceBatch.ts';
import { expectClose, TOL } from './random.ts';
import { tinyCheckpoint, tinyConfig } from './rl.ts';

export interface Tol {
  rtol: number;
  atol: number;
}

/** Tolerances of one backend, each named after the kind of computation it bounds. */
export interface CaptureTolerances {
  /** Per-token arithmetic: KL_t, r_t, TIS weights, ratios; and two forwards of one set of weights. */
  elem: Tol;
  /** A reverse scan over the response (GAE, discounted returns). */
  scan: Tol;
  /** Reductions over the minibatch: losses, approx KL. */
  reduce: Tol;
  /** Fractions of tokens (clip fractions): a count over n, so any miscount shows. */
  fraction: Tol;
}

/** Trainer configs the capture is checked under: GAE with the critic, RLOO and GRPO, KL in the reward and in the loss, dual clip. */
export const CAPTURE_CASES: [string, Partial<PpoConfig>][] = [
  [
    'GAE, KL in reward (k1) and in the loss (k3), dual clip, value clip, TIS',
    { advantageEstimator: 'gae', klInReward: true, klCoef: 0.1, useKlLoss: true, klLossCoef: 0.05, dualClip: 2, valueClip: 0.2, tisCap: 2 },
  ],
  [
    'RLOO with the KL loss only, adaptive controller, dual clip',
    { advantageEstimator: 'rloo', klInReward: false, useKlLoss: true, klLossCoef: 0.1, klController: 'adaptive', dualClip: 3 },
  ],
  [
    'GRPO (group_norm), KL in reward (k3) and the loss, seq-mean-token-mean',
    { advantageEstimator: 'group_norm', klInReward: true, klEstimator: 'k3', klCoef: 0.2, useKlLoss: true, dualClip: 3, lossAgg: 'seq-mean-token-mean' },
  ],
  [
    'GAE, top-k sampler, sequence IS in the IcePop band, seq_sum_k2 rejection sampling',
    // With top-k 3 the tiny model's π_old/π_rollout is ≈ 0.21 per token, so a response's weight is
    // ≈ 0.21^L (4e-4 at L = 5, 9e-5 at 6): the band's lower end 1e-5 keeps them, and the update
    // moves the policy. Its seq_sum_k2 statistics lie at 6.0 and 7.10–7.33: 7.2 keeps some, drops some.
    { advantageEstimator: 'gae', topK: 3, tisCap: 3, rolloutIs: 'sequence', icepopLower: 1e-5, rolloutRs: 'seq_sum_k2', rolloutRsThreshold: 7.2 },
  ],
];

/** WebGPU's tolerances for a captured iteration (tests/gpu/inspect_capture.test.ts says where each comes from). */
export const F32_CAPTURE: CaptureTolerances = {
  elem: TOL.elem,
  scan: { rtol: 1e-5, atol: 1e-5 },
  reduce: TOL.reduce,
  fraction: { rtol: 0, atol: 1e-6 },
};

/**
 * The experience a trace stored against its recomputation: KL_t and r_t per token, the scan's
 * returns, the advantages (whitening multiplies the scan's error by 1/σ: their tolerance scales
 * with it). Returns the closeness check and that scale for the caller's further checks.
 */
export function expectExperienceMatches(trace: IterationTrace, rec: RecomputedTrace, tol: CaptureTolerances, where: string) {
  const s = trace.stored;
  const close = (got: ArrayLike<number>, want: ArrayLike<number>, t: Tol, what: string) => expectClose(got, want, t.rtol, t.atol, `${where}: ${what}`);
  close(s.kl, rec.kl, tol.elem, 'KL_t');
  close(s.rewards, rec.rewards, tol.elem, 'r_t');
  close(s.returns, rec.returns, tol.scan, 'returns');
  const scale = rec.whitening?.scale ?? 1;
  close(s.advantages, rec.advantages, { rtol: tol.reduce.rtol, atol: tol.scan.atol * scale + tol.reduce.atol }, 'advantages');
  return { close, scale };
}

const STAT_KEYS = ['policyLoss', 'approxKl', 'klLoss', 'valueLoss'] as const;
export const FRACTION_KEYS = ['clipFraction', 'clipFractionLower', 'vfClipFraction'] as const;

/**
 * A ratio this close to a clip bound may land on either side of it in float32 (the kernel's exp of
 * a float32 log-ratio is a few ulp, ~1e-7, from the float64 one), so its token may be counted
 * clipped by one and not by the other.
 */
const RATIO_AT_BOUND = 1e-5;

type ClipKnobs = Pick<InspectKnobs, 'clipLow' | 'clipHigh' | 'dualClip'>;

/** A trace's advantages (B, A) as the trainer used them (float32) and as recomputed (float64). */
export interface AdvantagePair {
  A: number;
  trainer: ArrayLike<number>;
  recomputed: ArrayLike<number>;
}

/** The pair of a trace and its recomputation. */
export const advantagePair = (trace: IterationTrace, rec: RecomputedTrace): AdvantagePair => ({ A: rec.A, trainer: trace.stored.advantages, recomputed: rec.advantages });

/**
 * Whether the float32 trainer and the float64 recomputation may rightly disagree on token i's clip
 * in a step, and on which side: its advantage has another sign in each (the clip compares −A·r with
 * −A·clip(r), so A's sign decides; a group whose scores tie up to rounding has advantages ~1e-7 of
 * either sign, within the advantages' own tolerance), or its recomputed ratio lies within
 * RATIO_AT_BOUND of a bound the clip compares it with (1 − ε_low and 1 + ε_high; the dual clip's
 * c for the lower side).
 */
export function clipUndecided(step: MinibatchRecomputed, i: number, adv: AdvantagePair, knobs: ClipKnobs): { clip: boolean; dual: boolean } {
  const r = step.ratio[i];
  const at = step.rows[Math.floor(i / adv.A)] * adv.A + (i % adv.A);
  const signsDiffer = Math.sign(adv.trainer[at]) !== Math.sign(adv.recomputed[at]);
  return {
    clip: signsDiffer || Math.abs(r - (1 - knobs.clipLow)) <= RATIO_AT_BOUND || Math.abs(r - (1 + knobs.clipHigh)) <= RATIO_AT_BOUND,
    dual: knobs.dualClip !== null && (signsDiffer || Math.abs(r - knobs.dualClip) <= RATIO_AT_BOUND),
  };
}

/**
 * The share of a step's tokens whose clip the two may rightly decide apart (clipUndecided): how far
 * the float32 clip fractions may differ from the float64 ones without a token being miscounted.
 * Zero in most draws; every other token still counts exactly.
 */
export function fractionSlack(step: MinibatchRecomputed, adv: AdvantagePair, knobs: ClipKnobs): Record<(typeof FRACTION_KEYS)[number], number> {
  let tokens = 0;
  let atClip = 0;
  let atDual = 0;
  step.aggWeight.forEach((w, i) => {
    if (w === 0) return;
    tokens++;
    const u = clipUndecided(step, i, adv, knobs);
    if (u.clip) atClip++;
    if (u.dual) atDual++;
  });
  return tokens === 0 ? { clipFraction: 0, clipFractionLower: 0, vfClipFraction: 0 } : { clipFraction: atClip / tokens, clipFractionLower: atDual / tokens, vfClipFraction: 0 };
}

/** A fraction's tolerance widened by its slack (fractionSlack). */
export const withSlack = (t: Tol, slack: number): Tol => ({ rtol: t.rtol, atol: t.atol + slack });

/** Runs `iters` captured iterations of a tiny "stop" trainer and checks each one's trace. */
export async function runCapturedIterations(be: Backend, over: Partial<PpoConfig>, tol: CaptureTolerances, iters = 2): Promise<IterationTrace[]> {
  const cfg = tinyConfig({ seed: 11, actorLr: 3e-3, criticLr: 3e-3, ppoEpochs: 2, miniBatches: 2, ...over });
  const t = await PpoTrainer.create({ be, config: cfg, actorCheckpoint: await tinyCheckpoint('stop') });
  const traces: IterationTrace[] = [];
  try {
    for (let i = 0; i < iters; i++) {
      const res = await t.iteration({ capture: true });
      expectTraceMatches(res, cfg, tol, `iteration ${i}`);
      traces.push(res.trace!);
    }
  } finally {
    t.dispose();
  }
  if ((over.rolloutRs ?? 'off') !== 'off') {
    // The case's threshold rejects some responses and keeps others, so the update runs on a changed mask.
    const count = (keep: (k: number) => boolean) => traces.reduce((n, tr) => n + Array.from(tr.stored.rsMask ?? []).filter((k, i) => tr.actionMask[i] !== 0 && keep(k)).length, 0);
    expect(
      count((k) => k === 0),
      'tokens rejected',
    ).toBeGreaterThan(0);
    expect(
      count((k) => k !== 0),
      'tokens kept',
    ).toBeGreaterThan(0);
  }
  return traces;
}

export function expectTraceMatches(res: IterationResult, cfg: PpoConfig, tol: CaptureTolerances, where: string): void {
  const trace = res.trace;
  expect(trace, `${where}: trace`).toBeDefined();
  if (!trace) return;
  checkTraceShapes(trace);
  const { B, A } = trace;
  expect(B).toBe(cfg.promptsPerBatch * cfg.samplesPerPrompt);
  expect(A).toBe(cfg.maxResponseLength);
  expect(trace.iter).toBe(res.metrics.iter);
  // The knobs are the iteration's own, with the coefficients the controller applied.
  expect(trace.knobs.klInReward ? trace.knobs.klCoef : 0, `${where}: β`).toBe(res.metrics.beta);
  if (cfg.useKlLoss) expect(trace.knobs.klLossCoef, `${where}: KL-loss coefficient`).toBe(res.metrics.kl_loss_coef);
  expect(trace.minibatches.length).toBe(res.metrics.update_steps);
  expect(trace.minibatches.every((m) => (m.newValues !== null) === (cfg.advantageEstimator === 'gae'))).toBe(true);

  const rec = recomputeTrace(trace);
  const s = trace.stored;
  const { close, scale } = expectExperienceMatches(trace, rec, tol, where);
  const adv = advantagePair(trace, rec);
  expect(s.tisWeights === null, `${where}: TIS weights present`).toBe(cfg.tisCap === null);
  // Sequence-level weights are exp of a float32 row sum: a reduction's tolerance.
  if (s.tisWeights && rec.tisWeights) close(s.tisWeights, rec.tisWeights, cfg.rolloutIs === 'sequence' ? tol.reduce : tol.elem, 'TIS weights');
  // Rejection sampling: the trainer's mask is the recomputation's, token for token.
  expect(s.rsMask == null, `${where}: rejection mask present`).toBe(cfg.rolloutRs === 'off');
  if (s.rsMask && rec.rsMask) {
    expect(Array.from(s.rsMask), `${where}: rejection mask`).toEqual(Array.from(rec.rsMask));
  }

  const slacks = rec.minibatches.map((step) => fractionSlack(step, adv, trace.knobs));
  trace.minibatches.forEach((mb, j) => {
    expect(Array.from(mb.rows), `${where}: step ${j} rows`).toEqual(Array.from(epochMinibatches(B, cfg.miniBatches, cfg.seed, trace.iter, mb.epoch)[mb.index]));
    const stored = mb.stored as MinibatchStats;
    const got = rec.minibatches[j].stats;
    const slack = slacks[j];
    for (const k of STAT_KEYS) if (stored[k] !== null) close([stored[k]!], [got[k]!], tol.reduce, `step ${j} ${k}`);
    for (const k of FRACTION_KEYS) if (stored[k] !== null) close([stored[k]!], [got[k]!], withSlack(tol.fraction, slack[k]), `step ${j} ${k}`);
  });

  // The charts' batch numbers are the recomputed summary's (the fractions' means within their steps' mean slack).
  const m = res.metrics;
  const meanSlack = (k: 'clipFraction' | 'clipFractionLower') => slacks.reduce((sum, slack) => sum + slack[k], 0) / Math.max(1, slacks.length);
  close([m.clipfrac], [rec.summary.clipFraction], withSlack(tol.reduce, meanSlack('clipFraction')), 'update metrics: clipfrac');
  close([m.clipfrac_lower], [rec.summary.clipFractionLower], withSlack(tol.reduce, meanSlack('clipFractionLower')), 'update metrics: clipfrac_lower');
  close([m.approx_kl, m.policy_loss], [rec.summary.approxKl, rec.summary.policyLoss], tol.reduce, 'update metrics');
  close([m.kl, m.kl_token_mean], [rec.summary.klMean, rec.summary.klTokenMean], tol.reduce, 'KL metrics');
  if (rec.summary.valueLoss !== null) close([m.value_loss], [rec.summary.valueLoss], tol.reduce, 'value loss metric');

  // The Experience / DataProto view shows the trace's tensors under the frameworks' names: the
  // recomputed ones equal, the sequences the left-padded prompt then the response.
  const sizes = dimSizes(trace);
  const P = sizes.S - A;
  expect(P, `${where}: prompt width`).toBeGreaterThan(0);
  const named = new Map([...openrlhfExperience(trace), ...verlBatch(trace)].map((f) => [f.name, f.data]));
  close(named.get('kl')!, rec.kl, tol.elem, 'Experience.kl');
  close(named.get('token_level_rewards')!, rec.rewards, tol.elem, 'token_level_rewards');
  close(named.get('returns')!, rec.returns, tol.scan, 'Experience.returns');
  close(named.get('advantages')!, rec.advantages, { rtol: tol.reduce.rtol, atol: tol.scan.atol * scale + tol.reduce.atol }, 'Experience.advantages');
  const seq = named.get('sequences')!;
  const attn = named.get('attention_mask')!;
  for (let b = 0; b < B; b++) {
    for (let a = 0; a < A; a++) expect(seq[b * sizes.S + P + a]).toBe(trace.responseTokens[b * A + a]);
    // Left padding: the prompt's attention starts at its first token and stays on.
    const row = Array.from({ length: P }, (_, p) => attn[b * sizes.S + p]);
    expect(
      row.slice(row.indexOf(1)).every((m) => m === 1),
      `${where}: row ${b} prompt mask ${row}`,
    ).toBe(true);
    expect(row[P - 1], `${where}: row ${b} last prompt position attended`).toBe(1);
  }

  // The first step's forward ran on the weights of the experience pass: π_new = π_old per token.
  const first = trace.minibatches[0];
  expect([first.epoch, first.index]).toEqual([0, 0]);
  close(first.newLogprobs, gatherRows(trace.oldLogprobs, A, first.rows), tol.elem, 'first step π_new = π_old');

  // The clipping view's ratios (the device's, last step) are the recomputed last step's, over the
  // tokens the loss saw (rejection sampling's mask when it is on).
  const last = rec.minibatches[rec.minibatches.length - 1];
  const lossMask = trace.stored.rsMask ?? trace.actionMask;
  const mask = last.rows.length ? Array.from(last.rows).flatMap((b) => Array.from(lossMask.subarray(b * A, b * A + A))) : [];
  const ratios = Array.from(last.ratio).filter((_, i) => mask[i] !== 0);
  close(res.ratios.ratios, ratios, tol.elem, 'last step ratios');

  expectTraceBatchIsPosted(res, trace, tol, where);
}

/**
 * The teaching views' batch read off the trace (traceBatch, as an own-model iteration's is) is the
 * one the trainer posted: the same rows of the last step, each token's stored quantities exactly,
 * its ratio within the per-token tolerance (the device's against float64), the same clip_cov
 * picks; the clipping view's ratios and advantages likewise. Token text is the tokenizer's (the
 * trace holds ids), so it is left to the own-model checks, which have the worker's text.
 */
function expectTraceBatchIsPosted(res: IterationResult, trace: IterationTrace, tol: CaptureTolerances, where: string): void {
  const prompts = res.prompts ?? [];
  const batch = traceBatch({ trace, prompts, tokenText: Array.from(trace.responseTokens, String) });
  const rows = batch.samples!.rows;
  expect(rows.length, `${where}: sample rows`).toBe(res.samples.length);
  rows.forEach((row, i) => {
    const posted = res.samples[i];
    expect(row.prompt, `${where}: row ${i} prompt`).toBe(posted.prompt);
    expect(row.reward, `${where}: row ${i} reward`).toBe(posted.reward);
    expect(row.tokens.length, `${where}: row ${i} tokens`).toBe(posted.tokens.length);
    const exact = ({ text: _t, ratio: _r, rolloutLogprob: _l, ...rest }: SampleToken) => rest;
    expect(row.tokens.map(exact), `${where}: row ${i} token quantities`).toEqual(posted.tokens.map(exact));
    // π_rollout: the trainer posts the rollout's float32 host copy, the trace the full-precision one (a float32 rounding apart).
    const closeTo = { ratio: tol.elem, rolloutLogprob: { rtol: Math.max(tol.elem.rtol, 2 ** -23), atol: tol.elem.atol } };
    for (const k of ['ratio', 'rolloutLogprob'] as const) {
      expect(row.tokens.map((t) => t[k] === undefined)).toEqual(posted.tokens.map((t) => t[k] === undefined));
      const got = row.tokens.flatMap((t) => t[k] ?? []);
      const want = posted.tokens.flatMap((t) => t[k] ?? []);
      expectClose(got, want, closeTo[k].rtol, closeTo[k].atol, `${where}: row ${i} token ${k}`);
    }
  });
  const r = batch.ratios!;
  expect(r.iter).toBe(trace.iter);
  expect(r.advantages, `${where}: clipping view advantages`).toEqual(res.ratios.advantages);
  expectClose(r.ratios, res.ratios.ratios, tol.elem.rtol, tol.elem.atol, `${where}: clipping view ratios`);
  expectClose(r.seqAdvantages!, res.ratios.seqAdvantages!, tol.reduce.rtol, tol.reduce.atol, `${where}: sequence advantages`);
  expectClose(r.seqRatios!, res.ratios.seqRatios!, tol.reduce.rtol, tol.reduce.atol, `${where}: sequence ratios`);
  expect(r.clip).toEqual({ clipLow: trace.knobs.clipLow, clipHigh: trace.knobs.clipHigh, dualClip: trace.knobs.dualClip });
}
