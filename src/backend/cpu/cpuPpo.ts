// PPO ops on the float64 reference backend.
import type { KlEstimator, PpoOps } from '../ppoOps.ts';
import { expectShape, type Tensor } from '../tensor.ts';
import { klGradRef, klRef } from '../../reference/kl.ts';
import { gaeRef } from '../../reference/gae.ts';
import { groupAdvantagesRef } from '../../reference/groupAdvantages.ts';
import { shapeRewardsRef } from '../../reference/rewards.ts';
import { whitenRef } from '../../reference/whiten.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';

const notYet = (name: string) => () => {
  throw new Error(`${name} is not implemented on the CPU reference backend yet`);
};

/** (B, A) of a (B, A) tensor, checking that the others share its shape. */
function dimsBA(first: [string, Tensor], ...rest: [string, Tensor][]): [number, number] {
  const [name, t] = first;
  if (t.shape.length !== 2) throw new Error(`${name}: expected shape (B, A), got [${t.shape.join(', ')}]`);
  for (const [n, u] of rest) expectShape(n, u, t.shape);
  return [t.shape[0], t.shape[1]];
}

export class CpuPpoOps implements PpoOps {
  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    expectShape('ref_logprobs', refLogprobs, logprobs.shape);
    return new CpuTensor(klRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32');
  }
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    expectShape('ref_logprobs', refLogprobs, logprobs.shape);
    return new CpuTensor(klGradRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32');
  }
  logprobs = notYet('logprobs') as PpoOps['logprobs'];
  logprobsBackward = notYet('logprobsBackward') as PpoOps['logprobsBackward'];
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
  policyLoss = notYet('policyLoss') as PpoOps['policyLoss'];
  valueLoss = notYet('valueLoss') as PpoOps['valueLoss'];
  aggregate = notYet('aggregate') as PpoOps['aggregate'];
}
