// The optimiser over one model's flat buffers: the global gradient norm and AdamW.
// Math: shaders/optim.wgsl's header; float64 reference: src/reference/nn/optim.ts.
import type { Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid, groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { adamwRef, gradNormRef, type AdamWParams } from '../reference/nn/optim.ts';
import { defineOp, type Op } from './op.ts';
import { expectSize } from './shapes.ts';

export interface AdamwArgs {
  params: Tensor; // (n) f32, updated in place
  grads: Tensor; // (n) f32
  m: Tensor; // (n) f32, first moments, in place
  v: Tensor; // (n) f32, second moments, in place
  decayMask: Tensor; // (n) f32, 1 where weight decay applies
  /** (1) f32, the global gradient norm (gradNorm's output) for clipping; none = no clipping. */
  gradNorm?: Tensor | null;
  hp: AdamWParams;
}

const NORM_WG = 256;
const ADAMW_WG = 256;
const NORM_MAX_GROUPS = 256;
const NORM_UNIFORM = uniformLayout('NormParams', { n: 'u32', groups: 'u32' });
const ADAMW_UNIFORM = uniformLayout('AdamParams', {
  n: 'u32',
  lr: 'f32',
  beta1: 'f32',
  beta2: 'f32',
  eps: 'f32',
  wd: 'f32',
  bc1: 'f32',
  bc2: 'f32',
  max_norm: 'f32',
  use_norm: 'u32',
});
const NORM_PARTIAL = kernel({ shader: 'optim', entry: 'norm_partial', uniform: NORM_UNIFORM, storage: ['read', 'rw'], constants: { WG: NORM_WG } }, 'gpu');
const NORM_FINAL = kernel({ ...NORM_PARTIAL, entry: 'norm_final' }, 'gpu');
// CPU adapters: no barriers (NORM_SERIAL_THREADS partial sums, then one thread adds them).
const NORM_PARTIAL_SERIAL = kernel({ ...NORM_PARTIAL, entry: 'norm_partial_serial', constants: { WG: 64 } }, 'cpu');
const NORM_FINAL_SERIAL = kernel({ shader: 'optim', entry: 'norm_final_serial', uniform: NORM_UNIFORM, storage: ['read', 'rw'] }, 'cpu');
const NORM_SERIAL_THREADS = 256;
const ADAMW = kernel({ shader: 'optim', entry: 'adamw', uniform: ADAMW_UNIFORM, storage: ['rw', 'read', 'rw', 'rw', 'read', 'read'], constants: { WG: ADAMW_WG } });
// Squares summed per norm_partial thread: few workgroups, because each costs ~1 ms of barriers on
// SwiftShader (256 groups: 170 ms for 0.1 M parameters; 13 groups: ~15 ms); real GPUs still get
// up to NORM_MAX_GROUPS groups for large models.
const NORM_PER_THREAD = 32;

/** Global L2 norm of a (flat) gradient tensor → (1) f32, by a parallel reduction. */
export const gradNorm: Op<{ grads: Tensor }, Tensor> = defineOp({
  name: 'gradNorm',
  kernels: [NORM_PARTIAL, NORM_FINAL, NORM_PARTIAL_SERIAL, NORM_FINAL_SERIAL],
  check: null,
  cpu: ({ grads }) => new CpuTensor(Float64Array.of(gradNormRef(cpu(grads).data)), [1], 'f32'),
  webgpu({ grads }, be) {
    const n = grads.size;
    if (be.rt.cpuAdapter) {
      const t = Math.max(1, Math.min(NORM_SERIAL_THREADS, n));
      const partial = be.empty([t]);
      const norm = be.empty([1]);
      be.rt.dispatch(NORM_PARTIAL_SERIAL, [gpu(grads), gpu(partial)], { n, groups: t }, [groups(t, 64)]);
      be.rt.dispatch(NORM_FINAL_SERIAL, [gpu(partial), gpu(norm)], { n: t, groups: 1 }, [1]);
      be.dispose(partial);
      return norm;
    }
    const g = Math.max(1, Math.min(NORM_MAX_GROUPS, groups(n, NORM_WG * NORM_PER_THREAD)));
    const partial = be.empty([g]);
    const norm = be.empty([1]);
    be.rt.dispatch(NORM_PARTIAL, [gpu(grads), gpu(partial)], { n, groups: g }, [g]);
    be.rt.dispatch(NORM_FINAL, [gpu(partial), gpu(norm)], { n: g, groups: 1 }, [1]);
    // Safe to recycle now: any later user of this buffer is recorded after the final pass.
    be.dispose(partial);
    return norm;
  },
});

/**
 * AdamW in place over flat buffers of one model (one dispatch): g ← grads·clipScale where
 * clipScale = min(1, maxGradNorm/(‖g‖ + 1e-6)) read from `gradNorm` on the device (none = 1);
 * m ← β1m + (1−β1)g; v ← β2v + (1−β2)g²; p ← p − lr·(m̂/(√v̂ + eps) + wd·decayMask·p).
 */
export const adamw: Op<AdamwArgs, void> = defineOp({
  name: 'adamw',
  kernels: [ADAMW],
  check({ params, grads, m, v, decayMask, gradNorm, hp }) {
    for (const [name, t] of [
      ['grads', grads],
      ['m', m],
      ['v', v],
      ['decayMask', decayMask],
    ] as const)
      expectSize(`adamw ${name}`, t, params.size);
    if (gradNorm) expectSize('adamw gradNorm', gradNorm, 1);
    if (!(hp.step >= 1)) throw new Error(`adamw: step must be ≥ 1 (1-based), got ${hp.step}`);
  },
  cpu({ params, grads, m, v, decayMask, gradNorm, hp }) {
    adamwRef(cpu(params).data, cpu(grads).data, cpu(m).data, cpu(v).data, cpu(decayMask).data, gradNorm ? cpu(gradNorm).data[0] : null, hp);
  },
  webgpu({ params, grads, m, v, decayMask, gradNorm, hp }, be) {
    const useNorm = !!gradNorm && hp.maxGradNorm > 0;
    const u = {
      n: params.size,
      lr: hp.lr,
      beta1: hp.beta1,
      beta2: hp.beta2,
      eps: hp.eps,
      wd: hp.weightDecay,
      bc1: 1 - hp.beta1 ** hp.step,
      bc2: 1 - hp.beta2 ** hp.step,
      max_norm: hp.maxGradNorm,
      use_norm: useNorm ? 1 : 0,
    };
    be.rt.dispatch(ADAMW, [gpu(params), gpu(grads), gpu(m), gpu(v), gpu(decayMask), gpu(gradNorm ?? grads) /* unread when use_norm = 0 */], u, elementGrid(params.size, ADAMW_WG));
  },
});
