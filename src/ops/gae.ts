// Generalized advantage estimation: a reverse scan per row, in parallel over the batch.
// Math: shaders/gae.wgsl's header; float64 reference: src/reference/gae.ts.
import type { Tensor } from '../backend/tensor.ts';
import { CpuTensor, cpu } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { gaeRef } from '../reference/gae.ts';
import { bt, jsonOutputs, maskTensor, numberField } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

export interface GaeArgs {
  rewards: Tensor; // (B, A) f32, token rewards (shaped)
  values: Tensor; // (B, A) f32, the critic's value of each state
  actionMask: Tensor; // (B, A) f32, 1 on action tokens
  gamma: number; // discount γ
  lam: number; // GAE λ
}

export interface GaeResult {
  advantages: Tensor; // (B, A) f32, not whitened; masked positions carry the running value
  returns: Tensor; // (B, A) f32, advantages + values
}

const WG = 64;
const GAE_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', gamma: 'f32', lam: 'f32' });
const GAE = kernel({ shader: 'gae', entry: 'gae', uniform: GAE_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG } });

/**
 * Where mask: δ = r + γ·next − v; last = δ + γλ·last; next = v (next = last = 0 past the end).
 * Masked positions carry `next` and `last` through. advantages = last at each t; returns =
 * advantages + values.
 */
export const gae: Op<GaeArgs, GaeResult> = defineOp({
  name: 'gae',
  kernels: [GAE],
  check: ({ rewards, values, actionMask }) => void expectBA(['rewards', rewards], ['values', values], ['action_mask', actionMask]),
  cpu({ rewards, values, actionMask, gamma, lam }) {
    const [B, A] = rewards.shape;
    const r = gaeRef(cpu(rewards).data, cpu(values).data, cpu(actionMask).data, B, A, gamma, lam);
    return { advantages: new CpuTensor(r.advantages, [B, A], 'f32'), returns: new CpuTensor(r.returns, [B, A], 'f32') };
  },
  webgpu({ rewards, values, actionMask, gamma, lam }, be) {
    const [B, A] = rewards.shape;
    const advantages = be.empty([B, A]);
    const returns = be.empty([B, A]);
    be.rt.dispatch(GAE, [gpu(rewards), gpu(values), gpu(actionMask), gpu(advantages), gpu(returns)], { B, A, gamma, lam }, [groups(B, WG)]);
    return { advantages, returns };
  },
  json: {
    name: 'gae',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['rewards', 'values']);
      const actionMask = maskTensor(be, input, shape, 'rewards');
      const gamma = numberField(input, 'gamma', { min: 0, max: 1 })!;
      const lam = numberField(input, 'lam', { min: 0, max: 1 })!;
      const r = gae(be, { rewards: tensors[0], values: tensors[1], actionMask, gamma, lam });
      return jsonOutputs(be, { advantages: r.advantages, returns: r.returns });
    },
  },
  bench: { label: 'gae', run: (be, x) => gae(be, { rewards: x.rewards, values: x.values, actionMask: x.mask, gamma: 1, lam: 0.95 }) },
});
