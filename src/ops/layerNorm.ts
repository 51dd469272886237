// LayerNorm over the last dimension and its backward. Math: shaders/layernorm.wgsl's header (and
// shaders/layernorm_rows.wgsl, the thread-per-row variant for small rows); float64 reference:
// src/reference/nn/layernorm.ts.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { addInto, cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { layerNormBackwardRef, layerNormRef } from '../reference/nn/layernorm.ts';
import { defineOp, type Op } from './op.ts';
import { expectRank1Plus, rowsCols } from './shapes.ts';

export interface LayerNormArgs {
  x: Tensor; // (M, D) f32 (leading dims are rows)
  gamma: Tensor; // (D) f32
  beta: Tensor; // (D) f32
  eps: number;
}

export interface LayerNormResult {
  y: Tensor; // x's shape, f32
  mean: Tensor; // (M) f32
  rstd: Tensor; // (M) f32, 1/sqrt(var + eps)
}

export interface LayerNormBackwardArgs {
  gradY: Tensor; // x's shape, f32
  x: Tensor; // (M, D) f32, the forward's input
  gamma: Tensor; // (D) f32
  mean: Tensor; // (M) f32, from the forward
  rstd: Tensor; // (M) f32, from the forward
  gradGamma: Tensor; // (D) f32: += ∂/∂gamma
  gradBeta: Tensor; // (D) f32: += ∂/∂beta
  /** x's shape, f32: gradX is added into it in place and returned (the residual stream's gradient, fused). */
  into?: Tensor | null;
}

const LN_WG = 64;
const COLSUM = { COLS: 16, LANES: 16 } as const;
const LN_UNIFORM = uniformLayout('Params', { M: 'u32', D: 'u32', eps: 'f32', accumulate: 'u32' }); // layernorm and layernorm_rows
const LN_FORWARD = kernel({ shader: 'layernorm', entry: 'layernorm_forward', uniform: LN_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw', 'rw'], constants: { WG: LN_WG } });
const LN_BACKWARD = kernel({
  shader: 'layernorm',
  entry: 'layernorm_backward',
  uniform: LN_UNIFORM,
  storage: ['read', 'read', 'read', 'read', 'read', 'rw'],
  constants: { WG: LN_WG },
});
const LN_PARAMS = kernel(
  { shader: 'layernorm', entry: 'layernorm_params', uniform: LN_UNIFORM, storage: ['read', 'rw', 'read', 'read', 'read', 'rw'], constants: { ...COLSUM } },
  'gpu',
);
/** LayerNorm parameter gradients by one thread per column (CPU adapters: no barriers). */
const LN_PARAMS_SERIAL = kernel({ ...LN_PARAMS, entry: 'params_serial', constants: { WG: LN_WG } }, 'cpu');
// LayerNorm rows of small D take shaders/layernorm_rows.wgsl (one thread per row, no barriers):
// on software Vulkan the per-row workgroup's tree-reduction barriers dominate at these sizes.
const LN_ROWS_WG = 64;
const LN_ROWS_MAX_D = 256; // rows of at most this many columns …
const LN_ROWS_MAX_SIZE = 1 << 18; // … in tensors of at most this many elements take layernorm_rows
const lnRows = (M: number, D: number) => D <= LN_ROWS_MAX_D && M * D <= LN_ROWS_MAX_SIZE;
const LN_ROWS_FORWARD = kernel({
  shader: 'layernorm_rows',
  entry: 'rows_forward',
  uniform: LN_UNIFORM,
  storage: ['read', 'read', 'read', 'rw', 'rw', 'rw'],
  constants: { WG: LN_ROWS_WG },
});
const LN_ROWS_BACKWARD = kernel({ ...LN_ROWS_FORWARD, entry: 'rows_backward', storage: ['read', 'read', 'read', 'read', 'read', 'rw'] });

/** y = (x − mean)·rstd·gamma + beta per row, rstd = 1/sqrt(var + eps) (biased var). */
export const layerNorm: Op<LayerNormArgs, LayerNormResult> = defineOp({
  name: 'layerNorm',
  kernels: [LN_FORWARD, LN_ROWS_FORWARD],
  check({ x, gamma, beta }) {
    expectRank1Plus('layerNorm x', x);
    const D = x.shape[x.shape.length - 1];
    expectShape('layerNorm gamma', gamma, [D]);
    expectShape('layerNorm beta', beta, [D]);
  },
  cpu({ x, gamma, beta, eps }) {
    const { rows: M, cols: D } = rowsCols(x);
    const r = layerNormRef(cpu(x).data, cpu(gamma).data, cpu(beta).data, M, D, eps);
    return { y: new CpuTensor(r.y, [...x.shape], 'f32'), mean: new CpuTensor(r.mean, [M], 'f32'), rstd: new CpuTensor(r.rstd, [M], 'f32') };
  },
  webgpu({ x, gamma, beta, eps }, be) {
    const { rows: M, cols: D } = rowsCols(x);
    const y = be.empty(x.shape);
    const mean = be.empty([M]);
    const rstd = be.empty([M]);
    const u = { M, D, eps, accumulate: 0 };
    const rows = lnRows(M, D);
    be.rt.dispatch(rows ? LN_ROWS_FORWARD : LN_FORWARD, [gpu(x), gpu(gamma), gpu(beta), gpu(mean), gpu(rstd), gpu(y)], u, [rows ? groups(M, LN_ROWS_WG) : M]);
    return { y, mean, rstd };
  },
});

/** Returns gradX (x's shape; `into` when given, with gradX added); accumulates gradGamma and gradBeta. */
export const layerNormBackward: Op<LayerNormBackwardArgs, Tensor> = defineOp({
  name: 'layerNormBackward',
  kernels: [LN_BACKWARD, LN_ROWS_BACKWARD, LN_PARAMS, LN_PARAMS_SERIAL],
  check({ gradY, x, gamma, mean, rstd, gradGamma, gradBeta, into }) {
    expectRank1Plus('layerNormBackward x', x);
    const D = x.shape[x.shape.length - 1];
    const M = D === 0 ? 0 : x.size / D;
    expectShape('layerNormBackward gradY', gradY, x.shape);
    expectShape('layerNormBackward gamma', gamma, [D]);
    expectShape('layerNormBackward mean', mean, [M]);
    expectShape('layerNormBackward rstd', rstd, [M]);
    expectShape('layerNormBackward gradGamma', gradGamma, [D]);
    expectShape('layerNormBackward gradBeta', gradBeta, [D]);
    if (into) {
      expectShape('layerNormBackward into', into, x.shape);
      expectDType('layerNormBackward into', into, 'f32');
    }
  },
  cpu({ gradY, x, gamma, mean, rstd, gradGamma, gradBeta, into }) {
    const { rows: M, cols: D } = rowsCols(x);
    const g = layerNormBackwardRef(cpu(gradY).data, cpu(x).data, cpu(gamma).data, cpu(mean).data, cpu(rstd).data, M, D);
    addInto(gradGamma, g.gradGamma);
    addInto(gradBeta, g.gradBeta);
    if (into) {
      addInto(into, g.gradX);
      return into;
    }
    return new CpuTensor(g.gradX, [...x.shape], 'f32');
  },
  webgpu({ gradY, x, gamma, mean, rstd, gradGamma, gradBeta, into }, be) {
    const { rows: M, cols: D } = rowsCols(x);
    const gradX = into ?? be.empty(x.shape);
    const u = { M, D, eps: 0, accumulate: into ? 1 : 0 };
    const rows = lnRows(M, D);
    be.rt.dispatch(rows ? LN_ROWS_BACKWARD : LN_BACKWARD, [gpu(x), gpu(gamma), gpu(gradY), gpu(mean), gpu(rstd), gpu(gradX)], u, [rows ? groups(M, LN_ROWS_WG) : M]);
    const params = [gpu(x), gpu(gradGamma), gpu(gradY), gpu(mean), gpu(rstd), gpu(gradBeta)];
    if (be.rt.cpuAdapter) be.rt.dispatch(LN_PARAMS_SERIAL, params, u, [groups(D, LN_WG)]);
    else be.rt.dispatch(LN_PARAMS, params, u, [groups(D, COLSUM.COLS)]);
    return gradX;
  },
});
