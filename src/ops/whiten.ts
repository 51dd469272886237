// Masked whitening over every action token of the batch. Math: shaders/whiten.wgsl's header;
// float64 reference: src/reference/whiten.ts.
import type { Tensor } from '../backend/tensor.ts';
import { expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { whitenRef } from '../reference/whiten.ts';
import { boolField, bt, jsonOutputs, maskTensor } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';

export interface WhitenArgs {
  x: Tensor; // (B, A) f32 (any shape, as actionMask)
  actionMask: Tensor; // x's shape, f32
  shiftMean: boolean; // false: the mean is added back (verl shift_mean = False)
}

// One workgroup with a tree reduction, so its size must be a power of two ≤ 256.
const WG_WHITEN = 256;
const WHITEN_UNIFORM = uniformLayout('Params', { n: 'u32', shift_mean: 'u32' });
const WHITEN = kernel({ shader: 'whiten', entry: 'whiten', uniform: WHITEN_UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG: WG_WHITEN } });

/**
 * Mean and Bessel-corrected variance over mask = 1; out = (x − mean)·rsqrt(var + 1e-8)
 * (+ mean when shiftMean is false), at every position.
 */
export const whiten: Op<WhitenArgs, Tensor> = defineOp({
  name: 'whiten',
  kernels: [WHITEN],
  check: ({ x, actionMask }) => expectShape('action_mask', actionMask, x.shape),
  cpu: ({ x, actionMask, shiftMean }) => new CpuTensor(whitenRef(cpu(x).data, cpu(actionMask).data, shiftMean), x.shape, 'f32'),
  webgpu({ x, actionMask, shiftMean }, be) {
    const out = be.empty(x.shape);
    const u = { n: x.size, shift_mean: shiftMean ? 1 : 0 };
    be.rt.dispatch(WHITEN, [gpu(x), gpu(actionMask), gpu(out)], u, [x.size > 0 ? 1 : 0]);
    return out;
  },
  json: {
    name: 'whiten',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['values']);
      const actionMask = maskTensor(be, input, shape, 'values');
      return jsonOutputs(be, { whitened: whiten(be, { x: tensors[0], actionMask, shiftMean: boolField(input, 'shift_mean') }) });
    },
  },
  bench: { label: 'whiten', run: (be, x) => whiten(be, { x: x.adv, actionMask: x.mask, shiftMean: true }) },
});
