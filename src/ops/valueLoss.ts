// The clipped value loss and its gradient wrt the values. Math: shaders/value_loss.wgsl's header;
// float64 reference: src/reference/valueLoss.ts.
import type { Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { LOSS_AGGS, NORM_SCALES } from '../reference/aggregate.ts';
import { aggCode } from '../reference/kernelCodes.ts';
import { validateValueLossParams, valueLossRef, type ValueLossParams } from '../reference/valueLoss.ts';
import { AGG_FINALIZE, finalizeRows, ROW_STRIDE } from './aggregate.ts';
import { bt, choiceField, maskTensor, nest, numberField } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

/** Layout of the `stats` tensor returned by valueLoss. */
export const VALUE_STATS = { loss: 0, clipfrac: 1 } as const;

export interface ValueLossArgs {
  values: Tensor; // (B, A) f32, the critic's new values
  oldValues: Tensor; // (B, A) f32, the values at experience time
  returns: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  params: ValueLossParams;
}

export interface ValueLossResult {
  stats: Tensor; // (2) f32 as VALUE_STATS
  gradValues: Tensor; // (B, A) f32
}

const WG = 64;
const VALUE_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', clip: 'f32', has_clip: 'u32' });
const VALUE_ROWS = kernel({ shader: 'value_loss', entry: 'value_rows', uniform: VALUE_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw', 'rw'], constants: { WG } });

/** ½·max((v−R)², (clip(v, v_old ± ε)−R)²), aggregated as params.agg. */
export const valueLoss: Op<ValueLossArgs, ValueLossResult> = defineOp({
  name: 'valueLoss',
  kernels: [VALUE_ROWS, AGG_FINALIZE],
  check({ values, oldValues, returns, actionMask, params }) {
    validateValueLossParams(params);
    expectBA(['values', values], ['old_values', oldValues], ['returns', returns], ['action_mask', actionMask]);
  },
  cpu({ values, oldValues, returns, actionMask, params }) {
    const [B, A] = values.shape;
    const r = valueLossRef(cpu(values).data, cpu(oldValues).data, cpu(returns).data, cpu(actionMask).data, B, A, params);
    return { stats: new CpuTensor(r.stats, [2], 'f32'), gradValues: new CpuTensor(r.gradValues, [B, A], 'f32') };
  },
  webgpu({ values, oldValues, returns, actionMask, params }, be) {
    const [B, A] = values.shape;
    const gradValues = be.empty([B, A]);
    const rows = be.empty([B, ROW_STRIDE]);
    const u = { B, A, clip: params.clip ?? 0, has_clip: params.clip === null ? 0 : 1 };
    be.rt.dispatch(VALUE_ROWS, [gpu(values), gpu(oldValues), gpu(returns), gpu(actionMask), gpu(gradValues), gpu(rows)], u, [B]);
    const stats = finalizeRows(be, rows, actionMask, B, A, 2, aggCode(params.agg, params.normScale), gradValues, true);
    return { stats, gradValues };
  },
  json: {
    name: 'value_loss',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['values', 'old_values', 'returns']);
      const actionMask = maskTensor(be, input, shape, 'values');
      const r = valueLoss(be, {
        values: tensors[0],
        oldValues: tensors[1],
        returns: tensors[2],
        actionMask,
        params: {
          clip: numberField(input, 'clip', { min: 0, exclusiveMin: true, optional: true }),
          agg: choiceField(input, 'agg', LOSS_AGGS, 'token-mean'),
          normScale: choiceField(input, 'norm_scale', NORM_SCALES, 'per_seq'),
        },
      });
      const [stats, grad] = await be.readMany([r.stats, r.gradValues]);
      return { loss: stats[VALUE_STATS.loss], clipfrac: stats[VALUE_STATS.clipfrac], grad_values: nest(grad, shape) };
    },
  },
  bench: {
    label: 'value_loss',
    run: (be, x) => valueLoss(be, { values: x.values, oldValues: x.oldValues, returns: x.rewards, actionMask: x.mask, params: { clip: 0.2, agg: 'token-mean' } }),
  },
});
