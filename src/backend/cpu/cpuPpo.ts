// PPO ops on the float64 reference backend.
import type { KlEstimator, LossAgg, NormScale, PolicyLossParams, PpoOps, ValueLossParams } from '../ppoOps.ts';
import type { Tensor } from '../tensor.ts';
import { klGradRef, klRef } from '../../reference/kl.ts';
import { groupAdvantagesRef } from '../../reference/groupAdvantages.ts';
import { shapeRewardsRef } from '../../reference/rewards.ts';
import { whitenRef } from '../../reference/whiten.ts';
import { aggregateRef } from '../../reference/aggregate.ts';
import { actorLossRef, type ActorLossParams } from '../../reference/actorLoss.ts';
import { logprobsBackwardRef, logprobsRef } from '../../reference/logprobs.ts';
import { covSelectRef, policyLossRef, tisWeightsRef } from '../../reference/policyLoss.ts';
import { valueLossRef } from '../../reference/valueLoss.ts';
import { rolloutCorrectionRef, type RolloutCorrectionParams } from '../../reference/rolloutCorrection.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';

export class CpuPpoOps implements PpoOps {
  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    return new CpuTensor(klRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32');
  }
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    return new CpuTensor(klGradRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32');
  }
  logprobs(logits: Tensor, tokens: Tensor, temperature: number): { logprobs: Tensor; entropy: Tensor } {
    const [B, A, V] = logits.shape;
    const r = logprobsRef(cpu(logits).data, cpu(tokens).data, B, A, V, temperature);
    return { logprobs: new CpuTensor(r.logprobs, [B, A], 'f32'), entropy: new CpuTensor(r.entropy, [B, A], 'f32') };
  }
  logprobsBackward(logits: Tensor, tokens: Tensor, temperature: number, gradLogprobs: Tensor, gradEntropy: Tensor | null): Tensor {
    const [B, A, V] = logits.shape;
    const g = logprobsBackwardRef(cpu(logits).data, cpu(tokens).data, B, A, V, temperature, cpu(gradLogprobs).data, gradEntropy ? cpu(gradEntropy).data : null);
    return new CpuTensor(g, [B, A, V], 'f32');
  }
  // ---- advantage side: shapeRewards, gae, whiten, groupAdvantages ----
  shapeRewards(scores: Tensor, logprobs: Tensor, refLogprobs: Tensor, actionMask: Tensor, beta: number, estimator: KlEstimator) {
    const [B, A] = logprobs.shape;
    const r = shapeRewardsRef(cpu(scores).data, cpu(logprobs).data, cpu(refLogprobs).data, cpu(actionMask).data, B, A, beta, estimator);
    return { rewards: new CpuTensor(r.rewards, [B, A], 'f32'), kl: new CpuTensor(r.kl, [B, A], 'f32') };
  }
  whiten(x: Tensor, actionMask: Tensor, shiftMean: boolean): Tensor {
    return new CpuTensor(whitenRef(cpu(x).data, cpu(actionMask).data, shiftMean), x.shape, 'f32');
  }
  groupAdvantages(args: Parameters<PpoOps['groupAdvantages']>[0]) {
    const [B, A] = args.logprobs.shape;
    const r = groupAdvantagesRef({
      ...args,
      scores: cpu(args.scores).data,
      logprobs: cpu(args.logprobs).data,
      refLogprobs: cpu(args.refLogprobs).data,
      actionMask: cpu(args.actionMask).data,
      baselines: args.baselines ? cpu(args.baselines).data : null,
      B,
      A,
    });
    return { advantages: new CpuTensor(r.advantages, [B, A], 'f32'), returns: new CpuTensor(r.returns, [B, A], 'f32') };
  }
  // ---- end advantage side ----
  actorLoss(
    logits: Tensor,
    start: number,
    tokens: Tensor,
    temperature: number,
    oldLogprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: ActorLossParams,
    isWeights: Tensor | null,
    refLogprobs: Tensor | null,
  ) {
    const [B, S, V] = logits.shape;
    const A = tokens.shape[1];
    const r = actorLossRef(
      cpu(logits).data,
      cpu(tokens).data,
      cpu(oldLogprobs).data,
      cpu(advantages).data,
      cpu(actionMask).data,
      { B, S, A, V, start, temperature },
      params,
      isWeights ? cpu(isWeights).data : null,
      refLogprobs ? cpu(refLogprobs).data : null,
    );
    return {
      gradLogits: new CpuTensor(r.gradLogits, [B, S, V], 'f32'),
      logprobs: new CpuTensor(r.logprobs, [B, A], 'f32'),
      policy: new CpuTensor(r.policy, [4], 'f32'),
      entropy: new CpuTensor(Float64Array.of(r.entropy), [1], 'f32'),
      klLoss: new CpuTensor(Float64Array.of(r.klLoss), [1], 'f32'),
    };
  }
  policyLoss(
    oldLogprobs: Tensor,
    logprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: PolicyLossParams,
    isWeights: Tensor | null = null,
  ): { stats: Tensor; gradLogprobs: Tensor } {
    const [B, A] = logprobs.shape;
    const r = policyLossRef(cpu(oldLogprobs).data, cpu(logprobs).data, cpu(advantages).data, cpu(actionMask).data, B, A, params, isWeights ? cpu(isWeights).data : null);
    return { stats: new CpuTensor(r.stats, [4], 'f32'), gradLogprobs: new CpuTensor(r.gradLogprobs, [B, A], 'f32') };
  }
  covSelect(oldLogprobs: Tensor, logprobs: Tensor, advantages: Tensor, actionMask: Tensor, params: PolicyLossParams): Tensor {
    const [B, A] = logprobs.shape;
    const sel = covSelectRef(cpu(oldLogprobs).data, cpu(logprobs).data, cpu(advantages).data, cpu(actionMask).data, B, A, params);
    return new CpuTensor(Float64Array.from(sel), [B, A], 'f32');
  }
  valueLoss(values: Tensor, oldValues: Tensor, returns: Tensor, actionMask: Tensor, params: ValueLossParams): { stats: Tensor; gradValues: Tensor } {
    const [B, A] = values.shape;
    const r = valueLossRef(cpu(values).data, cpu(oldValues).data, cpu(returns).data, cpu(actionMask).data, B, A, params);
    return { stats: new CpuTensor(r.stats, [2], 'f32'), gradValues: new CpuTensor(r.gradValues, [B, A], 'f32') };
  }
  tisWeights(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, cap: number): Tensor {
    const [B, A] = oldLogprobs.shape;
    return new CpuTensor(tisWeightsRef(cpu(oldLogprobs).data, cpu(rolloutLogprobs).data, cpu(actionMask).data, cap), [B, A], 'f32');
  }
  rolloutCorrection(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, params: RolloutCorrectionParams): { weights: Tensor | null; keep: Tensor } {
    const [B, A] = oldLogprobs.shape;
    const r = rolloutCorrectionRef(cpu(oldLogprobs).data, cpu(rolloutLogprobs).data, cpu(actionMask).data, B, A, params);
    return { weights: r.weights ? new CpuTensor(r.weights, [B, A], 'f32') : null, keep: new CpuTensor(r.keep, [B, A], 'f32') };
  }

  aggregate(x: Tensor, actionMask: Tensor, agg: LossAgg, normScale: NormScale = 'per_seq'): { value: Tensor; weights: Tensor } {
    const [B, A] = x.shape;
    const r = aggregateRef(cpu(x).data, cpu(actionMask).data, B, A, agg, normScale);
    return { value: new CpuTensor(Float64Array.of(r.value), [1], 'f32'), weights: new CpuTensor(r.weights, [B, A], 'f32') };
  }
}
