// PPO ops on WebGPU: each records its kernel(s) into the shared encoder and returns new tensors.
import { groups } from '../../gpu/runtime.ts';
import { uniforms } from '../../gpu/uniforms.ts';
import type { KernelSpec } from '../../gpu/pipelines.ts';
import { KL_ESTIMATOR_CODE } from '../../reference/kl.ts';
import { compactGroups, GROUP_ESTIMATOR_CODE, WHITENED_GROUP_ESTIMATORS } from '../../reference/groupAdvantages.ts';
import type { KlEstimator, PpoOps } from '../ppoOps.ts';
import { expectShape, type Tensor } from '../tensor.ts';
import { gpu } from './gpuTensor.ts';
import type { WebGpuBackend } from './webgpuBackend.ts';

const WG = 64;

const KL_FORWARD: KernelSpec = { shader: 'kl', entry: 'kl_forward', uniform: true, storage: ['read', 'read', 'rw'], constants: { WG } };
const KL_BACKWARD: KernelSpec = { ...KL_FORWARD, entry: 'kl_backward' };

// Advantage side (shaders/rewards.wgsl, gae.wgsl, whiten.wgsl, group_advantages.wgsl).
// whiten runs as ONE workgroup with a tree reduction, so its size must be a power of two ≤ 256.
const WG_WHITEN = 256;
const SHAPE_REWARDS: KernelSpec = { shader: 'rewards', entry: 'shape_rewards', uniform: true, storage: ['read', 'read', 'read', 'read', 'rw', 'rw'], constants: { WG } };
const GAE: KernelSpec = { shader: 'gae', entry: 'gae', uniform: true, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG } };
const WHITEN: KernelSpec = { shader: 'whiten', entry: 'whiten', uniform: true, storage: ['read', 'read', 'rw'], constants: { WG: WG_WHITEN } };
const GROUP_SCORES: KernelSpec = { shader: 'group_advantages', entry: 'group_scores', uniform: true, storage: ['read', 'read', 'rw'], constants: { WG } };
const DISCOUNTED_RETURNS: KernelSpec = { ...GROUP_SCORES, entry: 'discounted_returns' };

const notYet = (name: string) => () => {
  throw new Error(`${name} is not implemented on WebGPU yet`);
};

/** (B, A) of a (B, A) tensor, checking that the others share its shape. */
function dimsBA(first: [string, Tensor], ...rest: [string, Tensor][]): [number, number] {
  const [name, t] = first;
  if (t.shape.length !== 2) throw new Error(`${name}: expected shape (B, A), got [${t.shape.join(', ')}]`);
  for (const [n, u] of rest) expectShape(n, u, t.shape);
  return [t.shape[0], t.shape[1]];
}

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
  // ---- advantage side: shapeRewards, gae, whiten, groupAdvantages ----
  shapeRewards(scores: Tensor, logprobs: Tensor, refLogprobs: Tensor, actionMask: Tensor, beta: number, estimator: KlEstimator) {
    const [B, A] = dimsBA(['logprobs', logprobs], ['ref_logprobs', refLogprobs], ['action_mask', actionMask]);
    expectShape('scores', scores, [B]);
    const rewards = this.be.empty([B, A]);
    const kl = this.be.empty([B, A]);
    const u = uniforms().u32(B).u32(A).f32(beta).u32(KL_ESTIMATOR_CODE[estimator]).bytes();
    const bufs = [gpu(scores), gpu(logprobs), gpu(refLogprobs), gpu(actionMask), gpu(rewards), gpu(kl)];
    this.be.rt.dispatch(SHAPE_REWARDS, bufs, u, [groups(B * A, WG)]);
    return { rewards, kl };
  }
  gae(rewards: Tensor, values: Tensor, actionMask: Tensor, gamma: number, lam: number) {
    const [B, A] = dimsBA(['rewards', rewards], ['values', values], ['action_mask', actionMask]);
    const advantages = this.be.empty([B, A]);
    const returns = this.be.empty([B, A]);
    const u = uniforms().u32(B).u32(A).f32(gamma).f32(lam).bytes();
    this.be.rt.dispatch(GAE, [gpu(rewards), gpu(values), gpu(actionMask), gpu(advantages), gpu(returns)], u, [groups(B, WG)]);
    return { advantages, returns };
  }
  whiten(x: Tensor, actionMask: Tensor, shiftMean: boolean): Tensor {
    expectShape('action_mask', actionMask, x.shape);
    const out = this.be.empty(x.shape);
    const u = uniforms().u32(x.size).u32(shiftMean ? 1 : 0).bytes();
    this.be.rt.dispatch(WHITEN, [gpu(x), gpu(actionMask), gpu(out)], u, [x.size > 0 ? 1 : 0]);
    return out;
  }
  groupAdvantages(args: Parameters<PpoOps['groupAdvantages']>[0]) {
    const { estimator, scores, logprobs, refLogprobs, actionMask } = args;
    const [B, A] = dimsBA(['logprobs', logprobs], ['ref_logprobs', refLogprobs], ['action_mask', actionMask]);
    expectShape('scores', scores, [B]);
    // Validation (a group of one sample) throws here, before anything is recorded.
    const compact = compactGroups(args.group, B, estimator);
    const groupIndex = this.be.tensor(compact.index, [B], 'i32');
    const transformed = this.be.empty([B]);
    const ug = uniforms().u32(B).u32(A).f32(args.gamma).u32(GROUP_ESTIMATOR_CODE[estimator]).bytes();
    this.be.rt.dispatch(GROUP_SCORES, [gpu(scores), gpu(groupIndex), gpu(transformed)], ug, [groups(B, WG)]);
    const { rewards, kl } = this.shapeRewards(transformed, logprobs, refLogprobs, actionMask, args.beta, args.klEstimator);
    const returns = this.be.empty([B, A]);
    this.be.rt.dispatch(DISCOUNTED_RETURNS, [gpu(rewards), gpu(actionMask), gpu(returns)], ug, [groups(B, WG)]);
    let advantages: Tensor;
    if (WHITENED_GROUP_ESTIMATORS.has(estimator)) {
      advantages = this.whiten(returns, actionMask, true);
    } else {
      advantages = this.be.empty([B, A]);
      this.be.copy(returns, advantages);
    }
    // Safe to recycle at once: later users of these buffers are recorded (and so run) after these reads.
    this.be.dispose(groupIndex, transformed, rewards, kl);
    return { advantages, returns };
  }
  // ---- end advantage side ----
  policyLoss = notYet('policyLoss') as PpoOps['policyLoss'];
  valueLoss = notYet('valueLoss') as PpoOps['valueLoss'];
  aggregate = notYet('aggregate') as PpoOps['aggregate'];
}
