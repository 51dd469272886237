// PPO ops on the float64 reference backend.
import type { KlEstimator, PpoOps } from '../ppoOps.ts';
import { expectShape, type Tensor } from '../tensor.ts';
import { klGradRef, klRef } from '../../reference/kl.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';

const notYet = (name: string) => () => {
  throw new Error(`${name} is not implemented on the CPU reference backend yet`);
};

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
  shapeRewards = notYet('shapeRewards') as PpoOps['shapeRewards'];
  gae = notYet('gae') as PpoOps['gae'];
  whiten = notYet('whiten') as PpoOps['whiten'];
  groupAdvantages = notYet('groupAdvantages') as PpoOps['groupAdvantages'];
  policyLoss = notYet('policyLoss') as PpoOps['policyLoss'];
  valueLoss = notYet('valueLoss') as PpoOps['valueLoss'];
  aggregate = notYet('aggregate') as PpoOps['aggregate'];
}
