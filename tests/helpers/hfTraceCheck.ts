// The check both backends run on an own-model iteration's trace (src/rl/hf/hfTrace.ts): every
// number the inspector shows equals the float64 recomputation (src/rl/inspect/recompute.ts) from
// the trace's own inputs, the trace agrees with the metrics the iteration reported to the own-model
// panel, and the panel's clip marks are the inspector's clip sides. Where the device gave
// something the trace's arrays do not already fix: each step's stored statistics (loss, clip
// fractions, approx KL, value loss), the first step's π_new against π_old (two forwards of one set
// of weights), the shaped rewards, returns and advantages.
import { expect } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { Backend } from '../../src/backend/backend.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { GPT2_LORA_MODULES, LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { disposeLoraTrainable, newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import type { SyntheticFamily } from '../../src/model/hf/synthetic.ts';
import { type HfEstimator, type HfPpoMetrics, hfPpoIteration } from '../../src/rl/hf/hfPpo.ts';
import { hfPpoConfig } from '../../src/rl/hf/hfPpoDefaults.ts';
import { checkTraceShapes, dimSizes, gatherRows, openrlhfExperience, recomputeTrace, verlBatch } from '../../src/rl/inspect/index.ts';
import { epochMinibatches } from '../../src/rl/minibatch.ts';
import { actorPolicyParams } from '../../src/rl/policyParams.ts';
import { advantagePair, type CaptureTolerances, clipUndecided, expectExperienceMatches, FRACTION_KEYS, fractionSlack, withSlack } from './captureCheck.ts';
import { rng } from './random.ts';

export interface HfTraceCase {
  family: SyntheticFamily;
  estimator: HfEstimator;
  samplesPerPrompt: number;
  miniBatches: number;
  ppoEpochs: number;
  /** Large enough that later steps clip. */
  lr: number;
}

/** Three families, with and without a critic, in minibatches and epochs. */
export const HF_TRACE_CASES: [string, HfTraceCase][] = [
  ['Qwen3, GRPO (group_norm), 2 minibatches × 2 epochs', { family: 'qwen3', estimator: 'group_norm', samplesPerPrompt: 2, miniBatches: 2, ppoEpochs: 2, lr: 0.1 }],
  ['Llama, GAE with a critic, 2 minibatches × 2 epochs', { family: 'llama', estimator: 'gae', samplesPerPrompt: 1, miniBatches: 2, ppoEpochs: 2, lr: 0.1 }],
  ['GPT-2, RLOO, one minibatch × 3 epochs', { family: 'gpt2', estimator: 'rloo', samplesPerPrompt: 2, miniBatches: 1, ppoEpochs: 3, lr: 0.1 }],
];

const PROMPTS = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [10]];
// Responses score apart (a position-weighted sum of ids), so no group's advantages are all 0.
const rule = (_p: readonly (readonly number[])[], rs: readonly (readonly number[])[]) => rs.map((x) => x.reduce((s, id, j) => s + ((id * (j + 1)) % 17) * 0.05, 0));

/** Two inspected iterations of a fresh synthetic folder on `be`, each one's trace checked; how many tokens the last epochs clipped. */
export async function runHfTracedIterations(be: Backend, c: HfTraceCase, tol: CaptureTolerances): Promise<{ clipped: number }> {
  const folder = await synthesizeToMemory({ family: c.family, dtype: 'F32', shards: 1, seed: rng(6100 + c.family.length).nextU32() });
  const model = await HfModel.load(be, folder, await openHfFolder(folder), 'f32');
  const targets = c.family === 'gpt2' ? GPT2_LORA_MODULES : LORA_TARGETS;
  const settings = { r: 2, alpha: 4, rslora: false, targets };
  const actor = newLoraTrainable(model, settings, 3);
  const critic = c.estimator === 'gae' ? newLoraTrainable(model, settings, 4, true) : null;
  const roles = { model, actor, critic, eosIds: [], padId: 0 };
  const cfg = {
    ...hfPpoConfig({
      estimator: c.estimator,
      samplesPerPrompt: c.samplesPerPrompt,
      maxNewTokens: 5,
      seed: 7,
      klCoef: 0.05,
      lr: c.lr,
      ppoEpochs: c.ppoEpochs,
      miniBatches: c.miniBatches,
    }),
    inspect: true,
  };
  let clipped = 0;
  try {
    for (let it = 0; it < 2; it++) {
      const m = await hfPpoIteration(roles, PROMPTS, rule, cfg, it);
      clipped += expectHfTraceMatches(m, c, cfg.seed, it, tol, `${c.family} iteration ${it}`);
      // the knobs give back the loss's own parameters
      expect(actorPolicyParams(m.trace!.knobs, cfg.policy.covSeed ?? 0)).toEqual(cfg.policy);
    }
  } finally {
    disposeLoraTrainable(be, actor);
    if (critic) disposeLoraTrainable(be, critic);
    model.dispose();
  }
  return { clipped };
}

const PANEL_SIDE = { high: 'upper', low: 'lower', dual: 'dual', none: null } as const;

/** Checks one iteration's trace; returns how many tokens the last epoch clipped. */
export function expectHfTraceMatches(m: HfPpoMetrics, c: HfTraceCase, seed: number, iteration: number, tol: CaptureTolerances, where: string): number {
  const trace = m.trace;
  expect(trace, `${where}: trace`).not.toBeNull();
  if (!trace) return 0;
  checkTraceShapes(trace);
  const { B, A } = trace;
  expect(B).toBe(PROMPTS.length * c.samplesPerPrompt);
  expect(A).toBe(Math.max(...m.responses.map((r) => r.length)));
  expect(trace.iter).toBe(iteration + 1);
  expect(trace.knobs.advantageEstimator).toBe(c.estimator);
  expect(trace.minibatches).toHaveLength(c.ppoEpochs * c.miniBatches);
  expect(trace.minibatches.every((mb) => (mb.newValues !== null) === (c.estimator === 'gae'))).toBe(true);
  expect(Array.from(trace.scores)).toEqual(m.scores);
  for (let b = 0; b < B; b++)
    for (let a = 0; a < A; a++) {
      const n = m.responses[b].length;
      expect(trace.actionMask[b * A + a]).toBe(a < n ? 1 : 0);
      if (a < n) expect(trace.responseTokens[b * A + a]).toBe(m.responses[b][a]);
    }

  const rec = recomputeTrace(trace);
  const { close } = expectExperienceMatches(trace, rec, tol, where);
  const adv = advantagePair(trace, rec);
  const slacks = rec.minibatches.map((step) => fractionSlack(step, adv, trace.knobs));

  trace.minibatches.forEach((mb, j) => {
    const want = c.miniBatches === 1 ? Array.from({ length: B }, (_, i) => i) : Array.from(epochMinibatches(B, c.miniBatches, seed, iteration, mb.epoch)[mb.index]);
    expect(Array.from(mb.rows), `${where}: step ${j} rows`).toEqual(want);
    const stored = mb.stored!;
    const got = rec.minibatches[j].stats;
    const slack = slacks[j];
    for (const k of ['policyLoss', 'approxKl', 'valueLoss'] as const) if (stored[k] !== null) close([stored[k]!], [got[k]!], tol.reduce, `step ${j} ${k}`);
    for (const k of FRACTION_KEYS) if (stored[k] !== null) close([stored[k]!], [got[k]!], withSlack(tol.fraction, slack[k]), `step ${j} ${k}`);
  });
  // The first step's forward ran on the weights of the experience pass.
  const first = trace.minibatches[0];
  close(first.newLogprobs, gatherRows(trace.oldLogprobs, A, first.rows), tol.elem, 'first step π_new = π_old');

  // The iteration's losses and clip fraction are every update step's recomputed ones, averaged (as the playground's).
  const steps = rec.minibatches;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  expect(steps.length, `${where}: update steps`).toBe(c.ppoEpochs * c.miniBatches);
  close([m.policyLoss], [mean(steps.map((x) => x.stats.policyLoss))], tol.reduce, 'iteration metrics');
  close([m.clipfrac], [mean(steps.map((x) => x.stats.clipFraction))], withSlack(tol.reduce, mean(slacks.map((slack) => slack.clipFraction))), 'iteration metrics: clipfrac');
  close([m.klMean], [rec.summary.klMean], tol.reduce, 'KL metric');
  if (c.estimator === 'gae') close([m.valueLoss!], [mean(steps.map((x) => x.stats.valueLoss!))], tol.reduce, 'value loss metric');
  else expect(m.valueLoss).toBeNull();

  // The panel's clip marks are the inspector's clip sides of the last epoch, token for token.
  let clipped = 0;
  for (const step of steps.filter((x) => x.epoch === c.ppoEpochs - 1))
    step.rows.forEach((b, r) => {
      const row = m.inspected![b];
      row.clip.forEach((side, t) => {
        const want = step.clipSide[r * A + t];
        if (side) clipped++;
        // A token whose clip the two may rightly decide apart (its advantage's sign differs: a tied group's ~1e-7) is not compared.
        const u = clipUndecided(step, r * A + t, adv, trace.knobs);
        if (!u.clip && !u.dual) expect(side, `${where}: row ${b} token ${t} clip side`).toBe(PANEL_SIDE[want]);
      });
    });

  // The Experience / DataProto view: the left-padded prompt then the response.
  const sizes = dimSizes(trace);
  const P = sizes.S - A;
  const named = new Map([...openrlhfExperience(trace), ...verlBatch(trace)].map((f) => [f.name, f.data]));
  const seq = named.get('sequences')!;
  const attn = named.get('attention_mask')!;
  const prompts = m.trace!.promptTokens!;
  for (let b = 0; b < B; b++) {
    const p = PROMPTS[Math.floor(b / c.samplesPerPrompt)];
    expect(Array.from(prompts.subarray(b * P + P - p.length, b * P + P))).toEqual(p);
    expect(Array.from({ length: p.length }, (_, i) => seq[b * sizes.S + P - p.length + i])).toEqual(p);
    for (let q = 0; q < P; q++) expect(attn[b * sizes.S + q]).toBe(q >= P - p.length ? 1 : 0);
  }
  return clipped;
}

/** The float64 backend's tolerances: one set of float64 operations against another. */
export const F64_TRACE: CaptureTolerances = {
  elem: { rtol: 1e-12, atol: 1e-12 },
  scan: { rtol: 1e-12, atol: 1e-12 },
  reduce: { rtol: 1e-10, atol: 1e-12 },
  fraction: { rtol: 0, atol: 1e-12 },
};

export const cpuTraceBackend = () => new CpuBackend();
