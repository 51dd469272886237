// One PPO iteration on a Hugging Face model with LoRA, the roles on one frozen base: the actor is
// the base plus its adapters, the critic (GAE only) the base plus its own adapters and a value
// head, the reference the base alone (no adapters — so at iteration 0, with B = 0, the actor equals
// it and the KL is exactly 0). The same ops as the character model's trainer: rollout (KV-cached
// sampling), shapeRewards (KL penalty, score on the last token), then gae + whiten with a critic,
// or groupAdvantages (GRPO, RLOO, …: samplesPerPrompt responses per prompt, no critic), then
// policyLoss and valueLoss; gradients reach the adapters through hfBackward.ts; AdamW over each
// role's flat buffer; minibatches as the playground's (epochMinibatches). With `inspect`, the
// iteration's IterationTrace (hfTrace.ts) from the same tensors, read back once at the end.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import type { OptimizerParams } from '../../model/gpt.ts';
import { backwardFromRows, backwardToAdapters, disposeTape, responseLogprobsTaped, responseRowsTaped } from '../../model/hf/hfBackward.ts';
import { generate } from '../../model/hf/hfGenerate.ts';
import type { HfModel } from '../../model/hf/hfModel.ts';
import { type LoraTrainable, loraOptimizerStep, zeroLoraGrads } from '../../model/hf/loraParams.ts';
import { responseLogprobs, responseRows } from '../../model/hf/scoring.ts';
import { valueHeadBackward, valueHeadForward } from '../../model/hf/valueHead.ts';
import { estimatorAdvantages } from '../advantages.ts';
import { epochMinibatches } from '../minibatch.ts';
import { POLICY_STATS, policyLoss } from '../../ops/policyLoss.ts';
import { shapeRewards } from '../../ops/shapeRewards.ts';
import { VALUE_STATS, valueLoss } from '../../ops/valueLoss.ts';
import { BASELINE_ESTIMATORS, GROUP_ESTIMATORS, GROUPED_ESTIMATORS, type GroupEstimator } from '../../reference/groupAdvantages.ts';
import type { KlEstimator } from '../../reference/kl.ts';
import type { PolicyLossParams } from '../../reference/policyLoss.ts';
import type { ValueLossParams } from '../../reference/valueLoss.ts';
import type { IterationTrace } from '../inspect/trace.ts';
import { type HfInspectedRow, type HfStepHost, hfIterationTrace, inspectedRows } from './hfTrace.ts';

/** 'gae' (a critic) or an outcome-reward group estimator (no critic). */
export type HfEstimator = 'gae' | GroupEstimator;

export interface HfPpoConfig {
  estimator: HfEstimator;
  /** Responses sampled per prompt (group estimators compare them; ≥ 2 there). */
  samplesPerPrompt: number;
  maxNewTokens: number;
  temperature: number;
  topP: number;
  seed: number;
  klCoef: number; // β of the per-token KL penalty in the reward
  klEstimator: KlEstimator;
  gamma: number;
  lam: number;
  ppoEpochs: number;
  /** Optimizer steps per epoch, each on an equal shuffled share of the batch (the playground's miniBatches); the tape holds one minibatch. */
  miniBatches: number;
  /** Capture the iteration's trace for the inspector, and every response's tokens as the last epoch's update saw them. */
  inspect?: boolean;
  policy: PolicyLossParams;
  value: ValueLossParams;
  actorHp: OptimizerParams;
  criticHp: OptimizerParams;
  /**
   * Benchmarks only: called at the end of each stage with its wall time, the device synced first so
   * the work is counted where it was recorded (a stage may come more than once: each epoch's updates,
   * advantages after the KL read and after the values). Unset, nothing waits on the device.
   */
  onStage?: (stage: HfPpoStage, ms: number) => void;
}

export type HfPpoStage = 'rollout' | 'reward' | 'logprobs' | 'values' | 'advantages' | 'actor update' | 'critic update';

/** The stage clock of `onStage`: each call syncs the device and reports the time since the last. */
function stageClock(be: Backend, onStage: NonNullable<HfPpoConfig['onStage']>): (stage: HfPpoStage) => Promise<void> {
  let t0 = performance.now();
  return async (stage) => {
    await be.flushThen(() => {});
    const t1 = performance.now();
    onStage(stage, t1 - t0);
    t0 = t1;
  };
}

export interface HfPpoRoles {
  model: HfModel; // the frozen base, shared
  actor: LoraTrainable;
  critic: LoraTrainable | null; // with a value head; GAE only
  eosIds: readonly number[];
  padId: number;
}

/** Scores a batch of finished responses (a task's rule, or the user's reward function), one score each. */
export type HfScore = (prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[]) => ArrayLike<number> | Promise<ArrayLike<number>>;

export interface HfPpoMetrics {
  responses: number[][];
  scores: number[];
  scoreMean: number;
  klMean: number; // masked mean of the reward's KL term
  responseLength: number;
  /** Policy loss, clip fraction and value loss: the mean over every update step (all epochs' minibatches). */
  policyLoss: number;
  clipfrac: number;
  valueLoss: number | null; // null without a critic
  /** With cfg.inspect: every response's tokens as the last epoch's update saw them, in batch order. */
  inspected: HfInspectedRow[] | null;
  /** With cfg.inspect: the iteration as the inspector reads it (`iter` = iteration + 1, as the rows count). */
  trace: IterationTrace | null;
}

const maskedMean = (x: Float64Array, mask: Float64Array) => {
  let s = 0;
  let n = 0;
  mask.forEach((m, i) => {
    s += m * x[i];
    n += m;
  });
  return n > 0 ? s / n : 0;
};

/** The rows of one minibatch: their prompts and responses, and a gather of (B, A) host rows into (rows, A_m), A_m their longest response. */
function minibatchOf(rows: Int32Array, prompts: readonly (readonly number[])[], responses: readonly number[][], A: number) {
  const mbResponses = Array.from(rows, (i) => responses[i]);
  const Am = Math.max(...mbResponses.map((r) => r.length));
  return {
    B: rows.length,
    A: Am,
    prompts: Array.from(rows, (i) => prompts[i]),
    responses: mbResponses,
    gather: (host: ArrayLike<number>) => {
      const out = new Float64Array(rows.length * Am);
      rows.forEach((i, r) => {
        for (let j = 0; j < Am; j++) out[r * Am + j] = host[i * A + j];
      });
      return out;
    },
  };
}

/** Why these roles and settings cannot run together, or null. */
export function hfPpoProblem(roles: HfPpoRoles, cfg: HfPpoConfig, batch?: number): string | null {
  if (!Number.isInteger(cfg.miniBatches) || cfg.miniBatches < 1) return `miniBatches = ${cfg.miniBatches}: an integer ≥ 1 is required`;
  if (batch !== undefined && batch % cfg.miniBatches !== 0)
    return `miniBatches = ${cfg.miniBatches}: the batch of ${batch} responses does not split into ${cfg.miniBatches} equal minibatches`;
  if (cfg.estimator === 'gae') {
    if (!roles.critic?.valueHead) return 'the gae estimator needs a critic with a value head (newLoraTrainable(…, true))';
    return null;
  }
  if (BASELINE_ESTIMATORS.has(cfg.estimator))
    return `the ${cfg.estimator} estimator needs a greedy baseline per prompt, which this path does not sample; use ${GROUP_ESTIMATORS.filter((e) => !BASELINE_ESTIMATORS.has(e)).join(', ')} or gae`;
  if (GROUPED_ESTIMATORS.has(cfg.estimator) && cfg.samplesPerPrompt < 2)
    return `samplesPerPrompt = ${cfg.samplesPerPrompt}: the ${cfg.estimator} estimator compares samples of the same prompt, so it needs at least 2`;
  return null;
}

/**
 * Rolls out samplesPerPrompt responses to each prompt, scores them and updates the actor (and the
 * critic) once; `iteration` varies the sampling seed.
 */
export async function hfPpoIteration(roles: HfPpoRoles, uniquePrompts: readonly (readonly number[])[], score: HfScore, cfg: HfPpoConfig, iteration: number): Promise<HfPpoMetrics> {
  const problem = hfPpoProblem(roles, cfg, uniquePrompts.length * cfg.samplesPerPrompt);
  if (problem) throw new Error(`hfPpoIteration: ${problem}`);
  const { model, actor } = roles;
  const critic = cfg.estimator === 'gae' ? roles.critic : null;
  const head = critic?.valueHead ?? null;
  const be = model.be;
  const G = cfg.samplesPerPrompt;
  const prompts = uniquePrompts.flatMap((p) => Array.from({ length: G }, () => p));
  const group = Int32Array.from(prompts, (_, i) => Math.floor(i / G));
  const B = prompts.length;
  const stageDone = cfg.onStage ? stageClock(be, cfg.onStage) : null;

  model.setAdapters(actor.adapters);
  const gen = await generate(model, prompts, {
    maxNewTokens: cfg.maxNewTokens,
    greedy: false,
    temperature: cfg.temperature,
    topP: cfg.topP,
    topK: 0,
    seed: (cfg.seed + iteration * 0x9e3779b9) >>> 0,
    eosIds: roles.eosIds,
    padId: roles.padId,
  });
  const responses = gen.tokens;
  await stageDone?.('rollout');
  const scores = Array.from(await score(prompts, responses));
  await stageDone?.('reward');
  const A = Math.max(...responses.map((r) => r.length));
  const mask = new Float64Array(B * A);
  responses.forEach((r, b) => {
    mask.fill(1, b * A, b * A + r.length);
  });
  const pack = (rows: number[][]) => {
    const out = new Float64Array(B * A);
    rows.forEach((row, b) => {
      out.set(row, b * A);
    });
    return out;
  };

  // Experience: old log-probs (actor), reference log-probs (the base), values (critic).
  const old = pack((await responseLogprobs(model, prompts, responses)).logprobs);
  model.setAdapters(null);
  const ref = pack((await responseLogprobs(model, prompts, responses)).logprobs);
  await stageDone?.('logprobs');

  const t = (x: Float64Array) => be.tensor(x, [B, A]);
  const actionMask = t(mask);
  const oldT = t(old);
  const scoresT = be.tensor(scores, [B]);
  const refT = t(ref);
  // The shaped rewards' KL is the metric for every estimator (the group ones shape their own too).
  const shaped = shapeRewards(be, { scores: scoresT, logprobs: oldT, refLogprobs: refT, actionMask, beta: cfg.klCoef, estimator: cfg.klEstimator });
  const kl = await be.read(shaped.kl);
  await stageDone?.('advantages');
  let valuesT: Tensor | null = null;
  if (critic && head) {
    model.setAdapters(critic.adapters);
    const rows = responseRows(model, prompts, responses);
    valuesT = be.reshape(valueHeadForward(be, head.params, rows), [B, A]);
    be.dispose(rows);
    await stageDone?.('values');
  }
  const { advantages, returns } = estimatorAdvantages(be, {
    estimator: cfg.estimator,
    rewards: shaped.rewards,
    values: valuesT,
    actionMask,
    scores: scoresT,
    group,
    logprobs: oldT,
    refLogprobs: refT,
    beta: cfg.klCoef,
    klEstimator: cfg.klEstimator,
    gamma: cfg.gamma,
    lam: cfg.lam,
  });
  await stageDone?.('advantages');

  // The update reads these per minibatch: host copies (exact: f32 both ways), gathered by row.
  const [advHost, returnsHost, valuesHost] = await be.readMany([advantages, ...(returns && valuesT ? [returns, valuesT] : [])]);
  // Every step's loss stats (and, inspected, its π_new and values) stay on the device until one
  // readback after the update: no readback per optimizer step.
  const steps: { epoch: number; index: number; rows: Int32Array; width: number; policy: Tensor; value: Tensor | null; logprobs: Tensor | null; values: Tensor | null }[] = [];
  for (let epoch = 0; epoch < cfg.ppoEpochs; epoch++) {
    const minibatches = cfg.miniBatches === 1 ? [Int32Array.from({ length: B }, (_, i) => i)] : epochMinibatches(B, cfg.miniBatches, cfg.seed, iteration, epoch);
    for (const [index, rows] of minibatches.entries()) {
      const mb = minibatchOf(rows, prompts, responses, A);
      const up = (host: Float64Array) => be.tensor(mb.gather(host), [mb.B, mb.A]);
      const maskM = up(mask);
      const oldM = up(old);
      const advM = up(advHost);

      model.setAdapters(actor.adapters);
      const taped = responseLogprobsTaped(model, mb.prompts, mb.responses);
      const logprobs = be.reshape(taped.logprobs, [mb.B, mb.A]);
      const pl = policyLoss(be, { oldLogprobs: oldM, logprobs, advantages: advM, actionMask: maskM, params: cfg.policy });
      zeroLoraGrads(be, actor);
      const gradLogprobs = be.reshape(pl.gradLogprobs, [mb.B * mb.A]);
      backwardToAdapters(model, taped.tape, gradLogprobs, actor.adapterGrads);
      const actorNorm = loraOptimizerStep(be, actor, cfg.actorHp);
      const step = { epoch, index, rows, width: mb.A, policy: pl.stats, value: null as Tensor | null, logprobs: cfg.inspect ? logprobs : null, values: null as Tensor | null };
      steps.push(step);
      be.dispose(cfg.inspect ? null : logprobs, gradLogprobs, taped.entropy, actorNorm, oldM, advM);
      disposeTape(model, taped.tape);
      await stageDone?.('actor update');

      if (critic && head) {
        model.setAdapters(critic.adapters);
        const tape = responseRowsTaped(model, mb.prompts, mb.responses);
        const values = be.reshape(valueHeadForward(be, head.params, tape.scored), [mb.B, mb.A]);
        const oldValuesM = up(valuesHost);
        const returnsM = up(returnsHost);
        const vl = valueLoss(be, { values, oldValues: oldValuesM, returns: returnsM, actionMask: maskM, params: cfg.value });
        zeroLoraGrads(be, critic);
        const gradValues: Tensor = be.reshape(vl.gradValues, [mb.B * mb.A]);
        const gRows = valueHeadBackward(be, head.params, tape.scored, gradValues, head.grads);
        backwardFromRows(model, tape, gRows, critic.adapterGrads);
        const criticNorm = loraOptimizerStep(be, critic, cfg.criticHp);
        step.value = vl.stats;
        step.values = cfg.inspect ? values : null;
        be.dispose(cfg.inspect ? null : values, gradValues, criticNorm, oldValuesM, returnsM);
        disposeTape(model, tape);
        await stageDone?.('critic update');
      }
      be.dispose(maskM);
    }
  }
  // One readback: every step's tensors, and with a trace the shaped rewards and (without a critic,
  // whose returns the update already read) the returns.
  const reads: Tensor[] = [];
  const slot = (t: Tensor | null) => (t ? reads.push(t) - 1 : -1);
  const slots = steps.map((x) => ({ policy: slot(x.policy), value: slot(x.value), logprobs: slot(x.logprobs), values: slot(x.values) }));
  const rewardsSlot = cfg.inspect ? slot(shaped.rewards) : -1;
  const returnsSlot = cfg.inspect && !returnsHost ? slot(returns) : -1;
  const host = await be.readMany(reads);
  const got = (i: number) => (i < 0 ? null : host[i]);
  const stepHosts = steps.map(
    (x, j): HfStepHost => ({
      epoch: x.epoch,
      index: x.index,
      rows: x.rows,
      width: x.width,
      logprobs: got(slots[j].logprobs) ?? new Float64Array(0), // read with a trace only
      values: got(slots[j].values),
      policyStats: host[slots[j].policy],
      valueStats: got(slots[j].value),
    }),
  );
  // The iteration's losses and clip fraction: every update step's, averaged, as the playground's
  // trainer (metrics.ts updateMetrics) and verl's actor/pg_loss, actor/pg_clipfrac do.
  const mean = (rows: Float64Array[], at: number) => rows.reduce((sum, r) => sum + r[at], 0) / rows.length;
  const valueStats = stepHosts.flatMap((x) => (x.valueStats ? [x.valueStats] : []));
  const trace = cfg.inspect
    ? hfIterationTrace({
        iter: iteration + 1,
        cfg,
        prompts,
        responses,
        group,
        padId: roles.padId,
        A,
        actionMask: mask,
        scores,
        oldLogprobs: old,
        refLogprobs: ref,
        values: valuesHost ?? null,
        kl,
        rewards: host[rewardsSlot],
        advantages: advHost,
        returns: returnsHost ?? host[returnsSlot],
        steps: stepHosts,
      })
    : null;
  be.dispose(...steps.flatMap((x) => [x.policy, x.value, x.logprobs, x.values]));
  be.dispose(actionMask, oldT, valuesT, scoresT, refT, shaped.rewards, shaped.kl, returns, advantages);
  model.setAdapters(actor.adapters);
  return {
    responses,
    scores,
    scoreMean: scores.reduce((s, x) => s + x, 0) / B,
    klMean: maskedMean(kl, mask),
    responseLength: responses.reduce((s, r) => s + r.length, 0) / B,
    policyLoss: mean(
      stepHosts.map((x) => x.policyStats),
      POLICY_STATS.loss,
    ),
    clipfrac: mean(
      stepHosts.map((x) => x.policyStats),
      POLICY_STATS.clipfrac,
    ),
    valueLoss: valueStats.length > 0 ? mean(valueStats, VALUE_STATS.loss) : null,
    inspected: trace ? inspectedRows(trace, responses, cfg.policy) : null,
    trace,
  };
}
