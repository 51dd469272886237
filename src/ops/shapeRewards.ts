// Reward shaping: a KL penalty per token and the score on the last action token.
// Math: shaders/rewards.wgsl's header; float64 reference: src/reference/rewards.ts.
import type { Tensor } from '../backend/tensor.ts';
import { expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { KL_ESTIMATOR_CODE } from '../reference/kernelCodes.ts';
import { KL_ESTIMATORS, type KlEstimator } from '../reference/kl.ts';
import { shapeRewardsRef } from '../reference/rewards.ts';
import { bt, choiceField, jsonOutputs, maskTensor, numberField, scoresTensor } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

export interface ShapeRewardsArgs {
  scores: Tensor; // (B) f32, one score per response
  logprobs: Tensor; // (B, A) f32
  refLogprobs: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  beta: number; // KL coefficient β
  estimator: KlEstimator;
}

export interface ShapeRewardsResult {
  rewards: Tensor; // (B, A) f32
  kl: Tensor; // (B, A) f32, mask·KL_t
}

const WG = 64;
const REWARDS_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', beta: 'f32', estimator: 'u32' });
const SHAPE_REWARDS = kernel({ shader: 'rewards', entry: 'shape_rewards', uniform: REWARDS_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw', 'rw'], constants: { WG } });

/**
 * kl = mask·KL_t; rewards = −β·kl, plus scores[b] at the last action position of row b (a row with
 * no action token gets no score).
 */
export const shapeRewards: Op<ShapeRewardsArgs, ShapeRewardsResult> = defineOp({
  name: 'shapeRewards',
  kernels: [SHAPE_REWARDS],
  check({ scores, logprobs, refLogprobs, actionMask }) {
    const [B] = expectBA(['logprobs', logprobs], ['ref_logprobs', refLogprobs], ['action_mask', actionMask]);
    expectShape('scores', scores, [B]);
  },
  cpu({ scores, logprobs, refLogprobs, actionMask, beta, estimator }) {
    const [B, A] = logprobs.shape;
    const r = shapeRewardsRef(cpu(scores).data, cpu(logprobs).data, cpu(refLogprobs).data, cpu(actionMask).data, B, A, beta, estimator);
    return { rewards: new CpuTensor(r.rewards, [B, A], 'f32'), kl: new CpuTensor(r.kl, [B, A], 'f32') };
  },
  webgpu({ scores, logprobs, refLogprobs, actionMask, beta, estimator }, be) {
    const [B, A] = logprobs.shape;
    const rewards = be.empty([B, A]);
    const kl = be.empty([B, A]);
    const u = { B, A, beta, estimator: KL_ESTIMATOR_CODE[estimator] };
    const bufs = [gpu(scores), gpu(logprobs), gpu(refLogprobs), gpu(actionMask), gpu(rewards), gpu(kl)];
    be.rt.dispatch(SHAPE_REWARDS, bufs, u, [groups(B * A, WG)]);
    return { rewards, kl };
  },
  json: {
    name: 'shape_rewards',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['logprobs', 'ref_logprobs']);
      const actionMask = maskTensor(be, input, shape, 'logprobs');
      const beta = numberField(input, 'beta', { min: 0 })!;
      const estimator = choiceField(input, 'estimator', KL_ESTIMATORS);
      const r = shapeRewards(be, { scores: scoresTensor(be, input, shape[0]), logprobs: tensors[0], refLogprobs: tensors[1], actionMask, beta, estimator });
      return jsonOutputs(be, { rewards: r.rewards, kl: r.kl });
    },
  },
  bench: {
    label: 'shape_rewards',
    run: (be, x) => shapeRewards(be, { scores: x.scores, logprobs: x.logp, refLogprobs: x.ref, actionMask: x.mask, beta: 0.05, estimator: 'k1' }),
  },
});
