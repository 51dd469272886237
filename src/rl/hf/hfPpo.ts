// One PPO iteration on a Hugging Face model with LoRA, the three roles on one frozen base: the
// actor is the base plus its adapters, the critic the base plus its own adapters and a value head,
// the reference the base alone (no adapters — so at iteration 0, with B = 0, the actor equals it
// and the KL is exactly 0). The same ops as the character model's trainer: rollout (KV-cached
// sampling), shapeRewards (KL penalty, score on the last token), gae, whiten, policyLoss and
// valueLoss; gradients reach the adapters through hfBackward.ts; AdamW over each role's flat buffer.
// One minibatch (the whole batch) per epoch; the playground's trainer (minibatches, the inspector,
// the page) is not yet on this path.
import type { Tensor } from '../../backend/tensor.ts';
import type { OptimizerParams } from '../../model/gpt.ts';
import { backwardFromRows, backwardToAdapters, disposeTape, responseLogprobsTaped, responseRowsTaped } from '../../model/hf/hfBackward.ts';
import { generate } from '../../model/hf/hfGenerate.ts';
import type { HfModel } from '../../model/hf/hfModel.ts';
import { type LoraTrainable, loraOptimizerStep, zeroLoraGrads } from '../../model/hf/loraParams.ts';
import { responseLogprobs } from '../../model/hf/scoring.ts';
import { valueHeadBackward, valueHeadForward } from '../../model/hf/valueHead.ts';
import { gae } from '../../ops/gae.ts';
import { POLICY_STATS, policyLoss } from '../../ops/policyLoss.ts';
import { shapeRewards } from '../../ops/shapeRewards.ts';
import { VALUE_STATS, valueLoss } from '../../ops/valueLoss.ts';
import { whiten } from '../../ops/whiten.ts';
import type { KlEstimator } from '../../reference/kl.ts';
import type { PolicyLossParams } from '../../reference/policyLoss.ts';
import type { ValueLossParams } from '../../reference/valueLoss.ts';

export interface HfPpoConfig {
  maxNewTokens: number;
  temperature: number;
  topP: number;
  seed: number;
  klCoef: number; // β of the per-token KL penalty in the reward
  klEstimator: KlEstimator;
  gamma: number;
  lam: number;
  ppoEpochs: number;
  policy: PolicyLossParams;
  value: ValueLossParams;
  actorHp: OptimizerParams;
  criticHp: OptimizerParams;
}

export interface HfPpoRoles {
  model: HfModel; // the frozen base, shared
  actor: LoraTrainable;
  critic: LoraTrainable; // with a value head
  eosIds: readonly number[];
  padId: number;
}

/** Scores a finished response (the rule-based reward of a task). */
export type HfScore = (prompt: readonly number[], response: readonly number[]) => number;

export interface HfPpoMetrics {
  responses: number[][];
  scores: number[];
  scoreMean: number;
  klMean: number; // masked mean of the reward's KL term
  responseLength: number;
  policyLoss: number; // last epoch
  clipfrac: number;
  valueLoss: number;
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

/** Rolls out, scores and updates actor and critic once; `iteration` varies the sampling seed. */
export async function hfPpoIteration(roles: HfPpoRoles, prompts: readonly (readonly number[])[], score: HfScore, cfg: HfPpoConfig, iteration: number): Promise<HfPpoMetrics> {
  const { model, actor, critic } = roles;
  const be = model.be;
  const head = critic.valueHead;
  if (!head) throw new Error('hfPpoIteration: the critic needs a value head (newLoraTrainable(…, true))');
  const B = prompts.length;

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
  const scores = prompts.map((p, b) => score(p, responses[b]));
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
  model.setAdapters(critic.adapters);
  const valueTape = responseRowsTaped(model, prompts, responses);
  const v0 = valueHeadForward(be, head.params, valueTape.scored);
  const oldValues = await be.read(v0);
  be.dispose(v0);
  disposeTape(model, valueTape);

  const t = (x: Float64Array) => be.tensor(x, [B, A]);
  const actionMask = t(mask);
  const oldT = t(old);
  const valuesT = t(oldValues);
  const scoresT = be.tensor(scores, [B]);
  const refT = t(ref);
  const shaped = shapeRewards(be, { scores: scoresT, logprobs: oldT, refLogprobs: refT, actionMask, beta: cfg.klCoef, estimator: cfg.klEstimator });
  const g = gae(be, { rewards: shaped.rewards, values: valuesT, actionMask, gamma: cfg.gamma, lam: cfg.lam });
  const advantages = whiten(be, { x: g.advantages, actionMask, shiftMean: true });
  const kl = await be.read(shaped.kl);

  let policyStats: ArrayLike<number> = [0, 0, 0, 0];
  let valueStats: ArrayLike<number> = [0, 0];
  for (let epoch = 0; epoch < cfg.ppoEpochs; epoch++) {
    model.setAdapters(actor.adapters);
    const taped = responseLogprobsTaped(model, prompts, responses);
    const logprobs = be.reshape(taped.logprobs, [B, A]);
    const pl = policyLoss(be, { oldLogprobs: oldT, logprobs, advantages, actionMask, params: cfg.policy });
    zeroLoraGrads(be, actor);
    const gradLogprobs = be.reshape(pl.gradLogprobs, [B * A]);
    backwardToAdapters(model, taped.tape, gradLogprobs, actor.adapterGrads);
    const actorNorm = loraOptimizerStep(be, actor, cfg.actorHp);
    policyStats = await be.read(pl.stats);
    be.dispose(logprobs, gradLogprobs, pl.stats, taped.entropy, actorNorm);
    disposeTape(model, taped.tape);

    model.setAdapters(critic.adapters);
    const rows = responseRowsTaped(model, prompts, responses);
    const values = be.reshape(valueHeadForward(be, head.params, rows.scored), [B, A]);
    const vl = valueLoss(be, { values, oldValues: valuesT, returns: g.returns, actionMask, params: cfg.value });
    zeroLoraGrads(be, critic);
    const gradValues: Tensor = be.reshape(vl.gradValues, [B * A]);
    const gRows = valueHeadBackward(be, head.params, rows.scored, gradValues, head.grads);
    backwardFromRows(model, rows, gRows, critic.adapterGrads);
    const criticNorm = loraOptimizerStep(be, critic, cfg.criticHp);
    valueStats = await be.read(vl.stats);
    be.dispose(values, vl.stats, gradValues, criticNorm);
    disposeTape(model, rows);
  }
  be.dispose(actionMask, oldT, valuesT, scoresT, refT, shaped.rewards, shaped.kl, g.advantages, g.returns, advantages);
  model.setAdapters(actor.adapters);
  return {
    responses,
    scores,
    scoreMean: scores.reduce((s, x) => s + x, 0) / B,
    klMean: maskedMean(kl, mask),
    responseLength: responses.reduce((s, r) => s + r.length, 0) / B,
    policyLoss: policyStats[POLICY_STATS.loss],
    clipfrac: policyStats[POLICY_STATS.clipfrac],
    valueLoss: valueStats[VALUE_STATS.loss],
  };
}
