// Loss aggregation of per-token values under the action mask (token-mean, seq-mean-token-mean,
// seq-mean-token-sum(-norm)), and the finalize pass the loss kernels share: their row kernels write
// (B, 5) partials that agg_finalize reduces. Math: shaders/aggregate.wgsl's header; float64
// reference: src/reference/aggregate.ts.
import type { GpuOpsHost } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { aggregateRef, LOSS_AGGS, NORM_SCALES, type LossAgg, type NormScale } from '../reference/aggregate.ts';
import { aggCode } from '../reference/kernelCodes.ts';
import { bt, choiceField, maskTensor, nest } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

export interface AggregateArgs {
  x: Tensor; // (B, A) f32 per-token values
  actionMask: Tensor; // (B, A) f32
  agg: LossAgg;
  normScale?: NormScale; // default 'per_seq'
}

export interface AggregateResult {
  value: Tensor; // (1) f32
  weights: Tensor; // (B, A) f32, ∂value/∂x
}

const WG = 64;
const WG_FINAL = 256;
/** Floats per row of the partials a row kernel writes for agg_finalize. */
export const ROW_STRIDE = 5;
const AGG_ROWS_UNIFORM = uniformLayout('RowParams', { B: 'u32', A: 'u32' });
const AGG_FINAL_UNIFORM = uniformLayout('FinalParams', { B: 'u32', A: 'u32', K: 'u32', agg: 'u32', scale_in_place: 'u32' });
const AGG_ROWS = kernel({ shader: 'aggregate', entry: 'agg_rows', uniform: AGG_ROWS_UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });
export const AGG_FINALIZE = kernel({ shader: 'aggregate', entry: 'agg_finalize', uniform: AGG_FINAL_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG_FINAL } });

/**
 * agg_finalize over row partials (B, ROW_STRIDE): stats (K) and `weighted` (B,A) = the
 * aggregation weights, or grad·weights in place when scaleInPlace. Disposes `rows`.
 */
export function finalizeRows(be: GpuOpsHost, rows: Tensor, mask: Tensor, B: number, A: number, K: number, agg: number, weighted: Tensor, scaleInPlace: boolean): Tensor {
  const stats = be.empty([K]);
  const u = { B, A, K, agg, scale_in_place: scaleInPlace ? 1 : 0 };
  be.rt.dispatch(AGG_FINALIZE, [gpu(rows), gpu(mask), gpu(stats), gpu(weighted)], u, [1]);
  // Safe to recycle at once: later users of the buffer are recorded (and so run) after this read.
  be.dispose(rows);
  return stats;
}

/** The scalar agg(x) under the mask and the weights ∂value/∂x (to back-propagate KL-loss and entropy terms). */
export const aggregate: Op<AggregateArgs, AggregateResult> = defineOp({
  name: 'aggregate',
  kernels: [AGG_ROWS, AGG_FINALIZE],
  check: ({ x, actionMask }) => void expectBA(['x', x], ['action_mask', actionMask]),
  cpu({ x, actionMask, agg, normScale = 'per_seq' }) {
    const [B, A] = x.shape;
    const r = aggregateRef(cpu(x).data, cpu(actionMask).data, B, A, agg, normScale);
    return { value: new CpuTensor(Float64Array.of(r.value), [1], 'f32'), weights: new CpuTensor(r.weights, [B, A], 'f32') };
  },
  webgpu({ x, actionMask, agg, normScale = 'per_seq' }, be) {
    const [B, A] = x.shape;
    const rows = be.empty([B, ROW_STRIDE]);
    be.rt.dispatch(AGG_ROWS, [gpu(x), gpu(actionMask), gpu(rows)], { B, A }, [B]);
    const weights = be.empty([B, A]);
    const value = finalizeRows(be, rows, actionMask, B, A, 1, aggCode(agg, normScale), weights, false);
    return { value, weights };
  },
  json: {
    name: 'aggregate',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['values']);
      const actionMask = maskTensor(be, input, shape, 'values');
      const r = aggregate(be, { x: tensors[0], actionMask, agg: choiceField(input, 'agg', LOSS_AGGS), normScale: choiceField(input, 'norm_scale', NORM_SCALES, 'per_seq') });
      const [value, weights] = await be.readMany([r.value, r.weights]);
      return { value: value[0], weights: nest(weights, shape) };
    },
  },
});
