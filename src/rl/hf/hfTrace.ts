// The inspector's view of one PPO/GRPO iteration on a Hugging Face model: the same IterationTrace
// the character model's trainer captures (src/rl/inspect/trace.ts), built from host copies of
// hfPpo.ts's own tensors, so the Inspect tab, its step-through, "what if" and Check yourself read
// an own-model run as they read a playground run. The knobs are the ones hfPpo.ts runs with:
// the KL in the reward only (no KL loss), no rollout correction (the sampler's log-probs are not
// kept), GAE's advantages whitened, the group estimators' as GROUP_ESTIMATOR_SPECS says, the KL
// shaped into the group estimators' token rewards (groupKlOrder 'openrlhf').
// Each update step runs on its minibatch's longest response (A_m ≤ A); its π_new and values are
// written into the trace's (n, A) rows with zeros past A_m, where every row's mask is 0.
import { DEFAULT_CONFIG } from '../configKnobs.ts';
import { GROUP_ESTIMATOR_SPECS, type GroupEstimator } from '../../reference/groupAdvantages.ts';
import { type PolicyLossParams, policyTokenRef } from '../../reference/policyLoss.ts';
import { type ClipSide, clipSide } from '../inspect/tokenTerms.ts';
import { type InspectKnobs, type IterationTrace, type MinibatchTrace, minibatchStatsOf } from '../inspect/trace.ts';
import type { KlEstimator } from '../../reference/kl.ts';
import type { ValueLossParams } from '../../reference/valueLoss.ts';

/** The settings of an iteration the inspector's knobs come from: hfPpo.ts's HfPpoConfig has them. */
export interface HfLossSettings {
  estimator: 'gae' | GroupEstimator;
  klCoef: number;
  klEstimator: KlEstimator;
  gamma: number;
  lam: number;
  seed: number;
  policy: PolicyLossParams;
  value: ValueLossParams;
}

/** The inspector's knobs of an iteration run with `cfg` (the value loss aggregates as the policy loss: hfPpoConfig sets both from one knob). */
export function hfInspectKnobs(cfg: HfLossSettings): InspectKnobs {
  const p = cfg.policy;
  const optional = <K extends 'sapoTauPos' | 'sapoTauNeg' | 'clipCovRatio' | 'clipCovLb' | 'clipCovUb' | 'klCovRatio' | 'ppoKlCoef'>(k: K) =>
    p[k] === undefined ? {} : { [k]: p[k] };
  return {
    klCoef: cfg.klCoef,
    klEstimator: cfg.klEstimator,
    klInReward: true,
    useKlLoss: false,
    klLossCoef: 0,
    klLossEstimator: DEFAULT_CONFIG.klLossEstimator,
    advantageEstimator: cfg.estimator,
    gamma: cfg.gamma,
    lam: cfg.lam,
    clipLow: p.clipLow,
    clipHigh: p.clipHigh,
    dualClip: p.clipC,
    valueClip: cfg.value.clip,
    lossMode: p.lossMode ?? 'vanilla',
    lossAgg: p.agg,
    normScale: p.normScale ?? 'per_seq',
    tisCap: null,
    groupKlOrder: 'openrlhf',
    seed: cfg.seed,
    ...optional('sapoTauPos'),
    ...optional('sapoTauNeg'),
    ...optional('clipCovRatio'),
    ...optional('clipCovLb'),
    ...optional('clipCovUb'),
    ...optional('klCovRatio'),
    ...optional('ppoKlCoef'),
    whiten: cfg.estimator === 'gae' ? true : GROUP_ESTIMATOR_SPECS[cfg.estimator as GroupEstimator].whitened,
  };
}

/** One update step as hfPpo.ts read it back: its rows, π_new and values at the minibatch's width, its statistics. */
export interface HfStepHost {
  epoch: number;
  index: number;
  rows: Int32Array; // (n) batch rows
  width: number; // A_m, the minibatch's longest response
  logprobs: Float64Array; // (n, A_m) π_new before the step
  values: Float64Array | null; // (n, A_m) the critic's values before its step; null without one
  policyStats: Float64Array; // POLICY_STATS
  valueStats: Float64Array | null; // VALUE_STATS
}

/** Everything of one iteration the trace holds, as host arrays. */
export interface HfTraceInputs {
  iter: number;
  cfg: HfLossSettings;
  prompts: readonly (readonly number[])[]; // (B) prompt ids, unpadded
  responses: readonly (readonly number[])[]; // (B) response ids, EOS included when sampled
  group: Int32Array; // (B)
  padId: number;
  A: number;
  actionMask: Float64Array; // (B, A)
  scores: ArrayLike<number>; // (B)
  oldLogprobs: Float64Array; // (B, A)
  refLogprobs: Float64Array; // (B, A)
  values: Float64Array | null; // (B, A); null without a critic
  kl: Float64Array; // (B, A) the shaped rewards' KL
  rewards: Float64Array; // (B, A) −β·KL_t + score at the last action token
  advantages: Float64Array; // (B, A)
  returns: Float64Array; // (B, A)
  steps: readonly HfStepHost[];
}

/** (n, width) rows widened to (n, A), zeros past `width`. */
function widen(x: Float64Array, n: number, width: number, A: number): Float64Array {
  if (width === A) return x.slice();
  const out = new Float64Array(n * A);
  for (let r = 0; r < n; r++) out.set(x.subarray(r * width, r * width + width), r * A);
  return out;
}

/** The iteration's trace; its arrays are its own (the worker transfers their buffers). */
export function hfIterationTrace(x: HfTraceInputs): IterationTrace {
  const { A, prompts, responses } = x;
  const B = responses.length;
  const P = Math.max(1, ...prompts.map((p) => p.length));
  const promptTokens = new Int32Array(B * P).fill(x.padId);
  const promptMask = new Float64Array(B * P);
  const responseTokens = new Int32Array(B * A).fill(x.padId);
  prompts.forEach((p, b) => {
    promptTokens.set(p, b * P + P - p.length);
    promptMask.fill(1, b * P + P - p.length, b * P + P);
    responseTokens.set(responses[b], b * A);
  });
  const minibatches = x.steps.map((s): MinibatchTrace => {
    const n = s.rows.length;
    const newValues = s.values ? widen(s.values, n, s.width, A) : null;
    return {
      epoch: s.epoch,
      index: s.index,
      rows: Int32Array.from(s.rows),
      newLogprobs: widen(s.logprobs, n, s.width, A),
      newValues,
      stored: minibatchStatsOf(s.policyStats, s.valueStats, null),
    };
  });
  return {
    iter: x.iter,
    B,
    A,
    knobs: hfInspectKnobs(x.cfg),
    responseTokens,
    promptTokens,
    promptMask,
    actionMask: x.actionMask.slice(),
    group: Int32Array.from(x.group),
    scores: Float64Array.from(x.scores),
    rolloutLogprobs: null,
    oldLogprobs: x.oldLogprobs.slice(),
    refLogprobs: x.refLogprobs.slice(),
    values: x.values ? x.values.slice() : new Float64Array(B * A),
    stored: { kl: x.kl.slice(), rewards: x.rewards.slice(), advantages: x.advantages.slice(), returns: x.returns.slice(), tisWeights: null },
    minibatches,
  };
}

/**
 * One response's tokens in the update: the trainer's old, reference and (before the step of the
 * last epoch's minibatch holding it) new log-probs and its advantages; the clip side per token by
 * inspector's rule (tokenTerms.ts clipSide) on those numbers: 'upper' where r > 1 + ε_high with
 * A > 0, 'lower' where r < 1 − ε_low with A < 0, 'dual' where the dual clip bounds a negative advantage.
 */
export interface HfInspectedRow {
  ids: number[];
  old: number[];
  ref: number[];
  logprobs: number[];
  advantages: number[];
  clip: ('upper' | 'lower' | 'dual' | null)[];
}

/** The own-model panel's (and its run file's) names of the inspector's clip sides. */
const PANEL_SIDE: Record<ClipSide, HfInspectedRow['clip'][number]> = { high: 'upper', low: 'lower', dual: 'dual', none: null };

/** Every response's row as the last epoch's update saw it, in batch order, from the trace. */
export function inspectedRows(trace: IterationTrace, responses: readonly (readonly number[])[], p: PolicyLossParams): HfInspectedRow[] {
  const { A } = trace;
  const lastEpoch = Math.max(...trace.minibatches.map((m) => m.epoch));
  const out: HfInspectedRow[] = new Array(trace.B);
  for (const mb of trace.minibatches) {
    if (mb.epoch !== lastEpoch) continue;
    mb.rows.forEach((b, r) => {
      const n = responses[b].length;
      const at = (x: ArrayLike<number>, row: number) => Array.from({ length: n }, (_, j) => x[row * A + j]);
      const old = at(trace.oldLogprobs, b);
      const logprobs = at(mb.newLogprobs, r);
      const advantages = at(trace.stored.advantages, b);
      const clip = old.map((o, j) => PANEL_SIDE[clipSide(policyTokenRef(o, logprobs[j], advantages[j], p), Math.exp(logprobs[j] - o))]);
      out[b] = { ids: [...responses[b]], old, ref: at(trace.refLogprobs, b), logprobs, advantages, clip };
    });
  }
  return out;
}
