// PPO ops on the float64 reference backend.
import type { KlEstimator, LossAgg, NormScale, PolicyLossParams, PpoOps, ValueLossParams } from '../ppoOps.ts';
import { expectShape, type Tensor } from '../tensor.ts';
import { klGradRef, klRef } from '../../reference/kl.ts';
import { gaeRef } from '../../reference/gae.ts';
import { groupAdvantagesRef } from '../../reference/groupAdvantages.ts';
import { shapeRewardsRef } from '../../reference/rewards.ts';
import { whitenRef } from '../../reference/whiten.ts';
import { aggregateRef } from '../../reference/aggregate.ts';
import { logprobsBackwardRef, logprobsRef } from '../../reference/logprobs.ts';
import { policyLossRef, tisWeightsRef, validatePolicyLossParams, validateTisCap } from '../../reference/policyLoss.ts';
import { valueLossRef, validateValueLossParams } from '../../reference/valueLoss.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';
import { checkLogprobsArgs, dimsBA } from '../ppoArgs.ts';


export class CpuPpoOps implements PpoOps {
  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    expectShape('ref_logprobs', refLogprobs, logprobs.shape);
    return new CpuTensor(klRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32');
  }
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    expectShape('ref_logprobs', refLogprobs, logprobs.shape);
    return new CpuTensor(klGradRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32');
  }
  logprobs(logits: Tensor, tokens: Tensor, temperature: number): { logprobs: Tensor; entropy: Tensor } {
    const [B, A, V] = checkLogprobsArgs(logits, tokens, temperature);
    const r = logprobsRef(cpu(logits).data, cpu(tokens).data, B, A, V, temperature);
    return { logprobs: new CpuTensor(r.logprobs, [B, A], 'f32'), entropy: new CpuTensor(r.entropy, [B, A], 'f32') };
  }
  logprobsBackward(logits: Tensor, tokens: Tensor, temperature: number, gradLogprobs: Tensor, gradEntropy: Tensor | null): Tensor {
    const [B, A, V] = checkLogprobsArgs(logits, tokens, temperature);
    expectShape('grad_logprobs', gradLogprobs, [B, A]);
    if (gradEntropy) expectShape('grad_entropy', gradEntropy, [B, A]);
    const g = logprobsBackwardRef(cpu(logits).data, cpu(tokens).data, B, A, V, temperature, cpu(gradLogprobs).data, gradEntropy ? cpu(gradEntropy).data : null);
    return new CpuTensor(g, [B, A, V], 'f32');
  }
  // ---- advantage side: shapeRewards, gae, whiten, groupAdvantages ----
  shapeRewards(scores: Tensor, logprobs: Tensor, refLogprobs: Tensor, actionMask: Tensor, beta: number, estimator: KlEstimator) {
    const [B, A] = dimsBA(['logprobs', logprobs], ['ref_logprobs', refLogprobs], ['action_mask', actionMask]);
    expectShape('scores', scores, [B]);
    const r = shapeRewardsRef(cpu(scores).data, cpu(logprobs).data, cpu(refLogprobs).data, cpu(actionMask).data, B, A, beta, estimator);
    return { rewards: new CpuTensor(r.rewards, [B, A], 'f32'), kl: new CpuTensor(r.kl, [B, A], 'f32') };
  }
  gae(rewards: Tensor, values: Tensor, actionMask: Tensor, gamma: number, lam: number) {
    const [B, A] = dimsBA(['rewards', rewards], ['values', values], ['action_mask', actionMask]);
    const r = gaeRef(cpu(rewards).data, cpu(values).data, cpu(actionMask).data, B, A, gamma, lam);
    return { advantages: new CpuTensor(r.advantages, [B, A], 'f32'), returns: new CpuTensor(r.returns, [B, A], 'f32') };
  }
  whiten(x: Tensor, actionMask: Tensor, shiftMean: boolean): Tensor {
    expectShape('action_mask', actionMask, x.shape);
    return new CpuTensor(whitenRef(cpu(x).data, cpu(actionMask).data, shiftMean), x.shape, 'f32');
  }
  groupAdvantages(args: Parameters<PpoOps['groupAdvantages']>[0]) {
    const [B, A] = dimsBA(['logprobs', args.logprobs], ['ref_logprobs', args.refLogprobs], ['action_mask', args.actionMask]);
    expectShape('scores', args.scores, [B]);
    const r = groupAdvantagesRef({
      ...args,
      scores: cpu(args.scores).data,
      logprobs: cpu(args.logprobs).data,
      refLogprobs: cpu(args.refLogprobs).data,
      actionMask: cpu(args.actionMask).data,
      B,
      A,
    });
    return { advantages: new CpuTensor(r.advantages, [B, A], 'f32'), returns: new CpuTensor(r.returns, [B, A], 'f32') };
  }
  // ---- end advantage side ----
  policyLoss(oldLogprobs: Tensor, logprobs: Tensor, advantages: Tensor, actionMask: Tensor, params: PolicyLossParams, isWeights: Tensor | null = null): { stats: Tensor; gradLogprobs: Tensor } {
    validatePolicyLossParams(params);
    const [B, A] = dimsBA(['logprobs', logprobs], ['old_logprobs', oldLogprobs], ['advantages', advantages], ['action_mask', actionMask]);
    if (isWeights) expectShape('is_weights', isWeights, [B, A]);
    const r = policyLossRef(cpu(oldLogprobs).data, cpu(logprobs).data, cpu(advantages).data, cpu(actionMask).data, B, A, params, isWeights ? cpu(isWeights).data : null);
    return { stats: new CpuTensor(r.stats, [4], 'f32'), gradLogprobs: new CpuTensor(r.gradLogprobs, [B, A], 'f32') };
  }
  valueLoss(values: Tensor, oldValues: Tensor, returns: Tensor, actionMask: Tensor, params: ValueLossParams): { stats: Tensor; gradValues: Tensor } {
    validateValueLossParams(params);
    const [B, A] = dimsBA(['values', values], ['old_values', oldValues], ['returns', returns], ['action_mask', actionMask]);
    const r = valueLossRef(cpu(values).data, cpu(oldValues).data, cpu(returns).data, cpu(actionMask).data, B, A, params);
    return { stats: new CpuTensor(r.stats, [2], 'f32'), gradValues: new CpuTensor(r.gradValues, [B, A], 'f32') };
  }
  tisWeights(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, cap: number): Tensor {
    validateTisCap(cap);
    const [B, A] = dimsBA(['old_logprobs', oldLogprobs], ['rollout_logprobs', rolloutLogprobs], ['action_mask', actionMask]);
    return new CpuTensor(tisWeightsRef(cpu(oldLogprobs).data, cpu(rolloutLogprobs).data, cpu(actionMask).data, cap), [B, A], 'f32');
  }
  aggregate(x: Tensor, actionMask: Tensor, agg: LossAgg, normScale: NormScale = 'per_seq'): { value: Tensor; weights: Tensor } {
    const [B, A] = dimsBA(['x', x], ['action_mask', actionMask]);
    const r = aggregateRef(cpu(x).data, cpu(actionMask).data, B, A, agg, normScale);
    return { value: new CpuTensor(Float64Array.of(r.value), [1], 'f32'), weights: new CpuTensor(r.weights, [B, A], 'f32') };
  }
}
