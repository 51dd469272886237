// PPO ops on WebGPU: each records its kernel(s) into the shared encoder and returns new tensors.
import { groups } from '../../gpu/runtime.ts';
import { uniforms } from '../../gpu/uniforms.ts';
import type { KernelSpec } from '../../gpu/pipelines.ts';
import { KL_ESTIMATOR_CODE } from '../../reference/kl.ts';
import type { KlEstimator, PpoOps } from '../ppoOps.ts';
import { expectShape, type Tensor } from '../tensor.ts';
import { gpu } from './gpuTensor.ts';
import type { WebGpuBackend } from './webgpuBackend.ts';

const WG = 64;

const KL_FORWARD: KernelSpec = { shader: 'kl', entry: 'kl_forward', uniform: true, storage: ['read', 'read', 'rw'], constants: { WG } };
const KL_BACKWARD: KernelSpec = { ...KL_FORWARD, entry: 'kl_backward' };

const notYet = (name: string) => () => {
  throw new Error(`${name} is not implemented on WebGPU yet`);
};

export class WebGpuPpoOps implements PpoOps {
  constructor(private readonly be: WebGpuBackend) {}

  private klKernel(spec: KernelSpec, logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    expectShape('ref_logprobs', refLogprobs, logprobs.shape);
    const out = this.be.empty(logprobs.shape);
    const u = uniforms().u32(logprobs.size).u32(KL_ESTIMATOR_CODE[estimator]).bytes();
    this.be.rt.dispatch(spec, [gpu(logprobs), gpu(refLogprobs), gpu(out)], u, [groups(logprobs.size, WG)]);
    return out;
  }

  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    return this.klKernel(KL_FORWARD, logprobs, refLogprobs, estimator);
  }
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    return this.klKernel(KL_BACKWARD, logprobs, refLogprobs, estimator);
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
