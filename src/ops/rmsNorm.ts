// RMSNorm (Llama, Qwen2, Qwen3) and its backward. Math: shaders/rmsnorm.wgsl's header; float64
// reference: src/reference/nn/rmsnorm.ts. Qwen3's per-head q_norm/k_norm run on q (R, H·Dh) with a
// weight of Dh: each head of each row is one normalised row (M = R·H).
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { addInto, cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid, groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { rmsNormBackwardRef, rmsNormRef } from '../reference/nn/rmsnorm.ts';
import { hfBenchInputs } from './hfBench.ts';
import { defineOp, type Op } from './op.ts';
import { lastDim } from './shapes.ts';

export interface RmsNormArgs {
  /** (…, k·D) f32: rows of D values, or k heads of D per row (q_norm: (R, H·Dh) with D = Dh). */
  x: Tensor;
  weight: Tensor; // (D) f32
  eps: number; // rms_norm_eps
}

export interface RmsNormResult {
  y: Tensor; // x's shape, f32
  rstd: Tensor; // (M) f32, M = x.size / D: 1/√(mean(x²) + eps) per normalised row
}

export interface RmsNormBackwardArgs {
  gradY: Tensor; // x's shape, f32
  x: Tensor; // x's shape, f32: the forward's input
  weight: Tensor; // (D) f32
  rstd: Tensor; // (M) f32, from the forward
  /** (D) f32: += ∂/∂weight; null for a frozen weight (nothing is computed for it). */
  gradWeight: Tensor | null;
  /** x's shape, f32: gradX is added into it in place and returned (the residual stream's gradient). */
  into?: Tensor | null;
}

const WG = 64;
const COLS = 16;
const BLOCK_ROWS = 256;
const UNIFORM = uniformLayout('Params', { M: 'u32', D: 'u32', eps: 'f32', accumulate: 'u32', blocks: 'u32' });
const FORWARD = kernel({ shader: 'rmsnorm', entry: 'rmsnorm_forward', uniform: UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG } }, 'gpu');
const BACKWARD = kernel({ shader: 'rmsnorm', entry: 'rmsnorm_backward', uniform: UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG } }, 'gpu');
/** CPU adapters: a thread per row, no barriers. */
const ROWS_FORWARD = kernel({ ...FORWARD, entry: 'rmsnorm_rows_forward' }, 'cpu');
const ROWS_BACKWARD = kernel({ ...BACKWARD, entry: 'rmsnorm_rows_backward' }, 'cpu');
const WGRAD_PARTIAL = kernel(
  { shader: 'rmsnorm', entry: 'wgrad_partial', uniform: UNIFORM, storage: ['read', 'read', 'read', 'rw'], constants: { COLS, LANES: 16, BLOCK_ROWS } },
  'gpu',
);
const WGRAD_FINAL = kernel({ shader: 'rmsnorm', entry: 'wgrad_final', uniform: UNIFORM, storage: ['read', 'rw'], constants: { WG } }, 'gpu');
const WGRAD_SERIAL = kernel({ shader: 'rmsnorm', entry: 'wgrad_serial', uniform: UNIFORM, storage: ['read', 'read', 'read', 'rw'], constants: { WG } }, 'cpu');

/** Workgroup grid of one workgroup per row, folded into 2-D past 65535. */
function rowGrid(M: number): [number, number] {
  return M <= 65535 ? [Math.max(M, 1), 1] : [65535, Math.ceil(M / 65535)];
}

/** D (the weight's length) and M (normalised rows) of checked arguments. */
function dims(x: Tensor, weight: Tensor): { M: number; D: number } {
  const D = weight.size;
  return { M: D === 0 ? 0 : x.size / D, D };
}

function checkXWeight(op: string, x: Tensor, weight: Tensor): void {
  expectDType(`${op} x`, x, 'f32');
  expectDType(`${op} weight`, weight, 'f32');
  if (weight.shape.length !== 1 || weight.size < 1) throw new Error(`${op} weight: expected shape (D) with D ≥ 1, got [${weight.shape.join(', ')}]`);
  const last = lastDim(`${op} x`, x);
  if (last % weight.size !== 0) throw new Error(`${op} x: its last dimension ${last} is not a multiple of the weight's ${weight.size}`);
}

/** y = weight·(x·rstd), rstd = 1/√(mean(x²) + eps) over each row of D (each head of D). */
export const rmsNorm: Op<RmsNormArgs, RmsNormResult> = defineOp({
  name: 'rmsNorm',
  kernels: [FORWARD, ROWS_FORWARD],
  check({ x, weight, eps }) {
    checkXWeight('rmsNorm', x, weight);
    if (!(eps >= 0) || !Number.isFinite(eps)) throw new Error(`rmsNorm eps: expected a finite number ≥ 0, got ${eps}`);
  },
  cpu({ x, weight, eps }) {
    const { M, D } = dims(x, weight);
    const r = rmsNormRef(cpu(x).data, cpu(weight).data, M, D, eps);
    return { y: new CpuTensor(r.y, [...x.shape], 'f32'), rstd: new CpuTensor(r.rstd, [M], 'f32') };
  },
  webgpu({ x, weight, eps }, be) {
    const { M, D } = dims(x, weight);
    const y = be.empty(x.shape);
    const rstd = be.empty([M]);
    if (M === 0) return { y, rstd };
    const u = { M, D, eps, accumulate: 0, blocks: 0 };
    const buffers = [gpu(x), gpu(weight), gpu(y), gpu(rstd)];
    if (be.rt.cpuAdapter) be.rt.dispatch(ROWS_FORWARD, buffers, u, elementGrid(M, WG));
    else be.rt.dispatch(FORWARD, buffers, u, rowGrid(M));
    return { y, rstd };
  },
  bench: {
    label: 'rmsNorm (D 144)',
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return rmsNorm(be, { x: h.x, weight: h.normWeight, eps: 1e-6 });
    },
  },
});

/** Returns gradX (x's shape; `into` when given, with gradX added); accumulates gradWeight when given. */
export const rmsNormBackward: Op<RmsNormBackwardArgs, Tensor> = defineOp({
  name: 'rmsNormBackward',
  kernels: [BACKWARD, ROWS_BACKWARD, WGRAD_PARTIAL, WGRAD_FINAL, WGRAD_SERIAL],
  check({ gradY, x, weight, rstd, gradWeight, into }) {
    checkXWeight('rmsNormBackward', x, weight);
    const { M, D } = dims(x, weight);
    expectShape('rmsNormBackward gradY', gradY, x.shape);
    expectDType('rmsNormBackward gradY', gradY, 'f32');
    expectShape('rmsNormBackward rstd', rstd, [M]);
    expectDType('rmsNormBackward rstd', rstd, 'f32');
    if (gradWeight) {
      expectShape('rmsNormBackward gradWeight', gradWeight, [D]);
      expectDType('rmsNormBackward gradWeight', gradWeight, 'f32');
    }
    if (into) {
      expectShape('rmsNormBackward into', into, x.shape);
      expectDType('rmsNormBackward into', into, 'f32');
    }
  },
  cpu({ gradY, x, weight, rstd, gradWeight, into }) {
    const { M, D } = dims(x, weight);
    const g = rmsNormBackwardRef(cpu(gradY).data, cpu(x).data, cpu(weight).data, cpu(rstd).data, M, D);
    if (gradWeight) addInto(gradWeight, g.gradW);
    if (into) {
      addInto(into, g.gradX);
      return into;
    }
    return new CpuTensor(g.gradX, [...x.shape], 'f32');
  },
  webgpu({ gradY, x, weight, rstd, gradWeight, into }, be) {
    const { M, D } = dims(x, weight);
    const gradX = into ?? be.empty(x.shape);
    if (M === 0) return gradX;
    const blocks = Math.ceil(M / BLOCK_ROWS);
    const u = { M, D, eps: 0, accumulate: into ? 1 : 0, blocks };
    const buffers = [gpu(x), gpu(weight), gpu(gradY), gpu(rstd), gpu(gradX)];
    if (be.rt.cpuAdapter) be.rt.dispatch(ROWS_BACKWARD, buffers, u, elementGrid(M, WG));
    else be.rt.dispatch(BACKWARD, buffers, u, rowGrid(M));
    if (gradWeight) {
      if (be.rt.cpuAdapter) {
        be.rt.dispatch(WGRAD_SERIAL, [gpu(x), gpu(gradY), gpu(rstd), gpu(gradWeight)], u, [groups(D, WG)]);
      } else {
        // Row blocks summed in parallel, then the blocks in order: deterministic, and a GPU's
        // worth of workgroups even for Qwen3's q_norm (D = 128, M = tokens·heads).
        const partial = be.empty([blocks, D]);
        be.rt.dispatch(WGRAD_PARTIAL, [gpu(x), gpu(gradY), gpu(rstd), gpu(partial)], u, [groups(D, COLS), blocks]);
        be.rt.dispatch(WGRAD_FINAL, [gpu(partial), gpu(gradWeight)], u, [groups(D, WG)]);
        be.dispose(partial); // a later user of the buffer is recorded after these passes
      }
    }
    return gradX;
  },
  bench: {
    label: 'rmsNormBackward (D 144, +gradWeight)',
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      const gw = be.zeros([h.normWeight.size]);
      return [gw, rmsNormBackward(be, { gradY: h.gradX, x: h.x, weight: h.normWeight, rstd: h.rstd, gradWeight: gw })];
    },
  },
});
