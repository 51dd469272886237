// Token-level truncated importance sampling weights (verl rollout correction, token TIS).
// Math: shaders/tis.wgsl's header; float64 reference: tisWeightsRef in src/reference/policyLoss.ts.
import type { Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { tisWeightsRef, validateTisCap } from '../reference/policyLoss.ts';
import { bt, jsonOutputs, maskTensor, numberField } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

export interface TisWeightsArgs {
  oldLogprobs: Tensor; // (B, A) f32, the trainer's policy at experience time
  rolloutLogprobs: Tensor; // (B, A) f32, the sampler's own log-probs
  actionMask: Tensor; // (B, A) f32
  cap: number; // > 0
}

const WG = 64;
const TIS_UNIFORM = uniformLayout('Params', { n: 'u32', cap: 'f32' });
const TIS_WEIGHTS = kernel({ shader: 'tis', entry: 'tis_weights', uniform: TIS_UNIFORM, storage: ['read', 'read', 'read', 'rw'], constants: { WG } });

/** mask · min(exp(clamp(old − rollout, ±20)), cap) → (B, A) f32. */
export const tisWeights: Op<TisWeightsArgs, Tensor> = defineOp({
  name: 'tisWeights',
  kernels: [TIS_WEIGHTS],
  check({ oldLogprobs, rolloutLogprobs, actionMask, cap }) {
    validateTisCap(cap);
    expectBA(['old_logprobs', oldLogprobs], ['rollout_logprobs', rolloutLogprobs], ['action_mask', actionMask]);
  },
  cpu({ oldLogprobs, rolloutLogprobs, actionMask, cap }) {
    const [B, A] = oldLogprobs.shape;
    return new CpuTensor(tisWeightsRef(cpu(oldLogprobs).data, cpu(rolloutLogprobs).data, cpu(actionMask).data, cap), [B, A], 'f32');
  },
  webgpu({ oldLogprobs, rolloutLogprobs, actionMask, cap }, be) {
    const [B, A] = oldLogprobs.shape;
    const out = be.empty([B, A]);
    be.rt.dispatch(TIS_WEIGHTS, [gpu(oldLogprobs), gpu(rolloutLogprobs), gpu(actionMask), gpu(out)], { n: B * A, cap }, [groups(B * A, WG)]);
    return out;
  },
  json: {
    name: 'tis_weights',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['old_logprobs', 'rollout_logprobs']);
      const actionMask = maskTensor(be, input, shape, 'old_logprobs');
      const cap = numberField(input, 'cap', { min: 0, exclusiveMin: true })!;
      return jsonOutputs(be, { weights: tisWeights(be, { oldLogprobs: tensors[0], rolloutLogprobs: tensors[1], actionMask, cap }) });
    },
  },
});
