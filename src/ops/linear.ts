// A dense layer against a frozen weight in nn.Linear's (out, in) layout, f16 (half the bytes) or
// f32, with f32 accumulation: y = x·Wᵀ (+ bias) (+ residual), and the input gradient gradX =
// gradY·W (a frozen weight gets no gradient; LoRA's adapters and trained weights take matmul).
// Math and the two kernel layouts: shaders/linear.wgsl's header; float64 reference:
// src/reference/nn/matmul.ts on the weight's values.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { addInto, cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import type { GpuOpsHost } from '../backend/backend.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid, groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { matmulRef } from '../reference/nn/matmul.ts';
import { hfBenchInputs, HF_BENCH } from './hfBench.ts';
import { defineOp, type Op } from './op.ts';
import { expectDTypes, lastDim, rowsCols } from './shapes.ts';

export interface LinearArgs {
  x: Tensor; // (…, K) f32: leading dims are rows
  weight: Tensor; // (N, K) f16 or f32: nn.Linear's weight (out, in)
  bias?: Tensor | null; // (N) f32
  /** (…, N) f32, added after the bias: the residual stream's x + o_proj(…) in the same dispatch. */
  residual?: Tensor | null;
}

export interface LinearBackwardArgs {
  gradY: Tensor; // (…, N) f32: the gradient of linear's output
  weight: Tensor; // (N, K) f16 or f32, as in the forward
  /** (…, K) f32: gradX is added into it in place and returned (several paths into one input). */
  into?: Tensor | null;
}

const WG = 64;
const TILE = 64;
const UNIFORM = uniformLayout('Params', {
  M: 'u32',
  K: 'u32',
  N: 'u32',
  wn: 'u32',
  wk: 'u32',
  has_bias: 'u32',
  accumulate: 'u32',
  has_residual: 'u32',
});
const STORAGE = ['read', 'read', 'read', 'rw', 'read'] as const;
const tiled = (f16: boolean) => kernel({ shader: 'linear', entry: 'linear_tiled', uniform: UNIFORM, storage: STORAGE, constants: { W_F16: f16 ? 1 : 0 } }, 'gpu');
const blocked = (f16: boolean) => kernel({ shader: 'linear', entry: 'linear_blocked', uniform: UNIFORM, storage: STORAGE, constants: { WG, W_F16: f16 ? 1 : 0 } }, 'cpu');
const TILED_F16 = tiled(true);
const TILED_F32 = tiled(false);
const BLOCKED_F16 = blocked(true);
const BLOCKED_F32 = blocked(false);

interface Gemm {
  M: number; // output rows
  K: number; // summed
  N: number; // output columns
  wn: number; // weight elements between output columns
  wk: number; // weight elements between summed terms
}

/** C (M,N) [+]= X·W(n,k) (+ bias) (+ residual), by the kernel the adapter kind takes. */
function dispatch(be: GpuOpsHost, g: Gemm, x: Tensor, weight: Tensor, bias: Tensor | null, y: Tensor, residual: Tensor | null, accumulate: boolean): void {
  if (g.M * g.N === 0) return;
  const f16 = weight.dtype === 'f16';
  const u = { ...g, has_bias: bias ? 1 : 0, accumulate: accumulate ? 1 : 0, has_residual: residual ? 1 : 0 };
  const buffers = [gpu(x), gpu(weight), gpu(bias ?? x) /* unread when has_bias = 0 */, gpu(y), gpu(residual ?? x) /* unread when has_residual = 0 */];
  if (be.rt.cpuAdapter) {
    const blocks = groups(g.M, 8) * groups(g.N, 8);
    be.rt.dispatch(f16 ? BLOCKED_F16 : BLOCKED_F32, buffers, u, elementGrid(blocks, WG));
  } else {
    be.rt.dispatch(f16 ? TILED_F16 : TILED_F32, buffers, u, [groups(g.N, TILE), groups(g.M, TILE)]);
  }
}

function checkWeight(op: string, weight: Tensor): [number, number] {
  expectDTypes(`${op} weight`, weight, ['f16', 'f32']);
  if (weight.shape.length !== 2) throw new Error(`${op} weight: expected (out, in) as nn.Linear stores it, got [${weight.shape.join(', ')}]`);
  return [weight.shape[0], weight.shape[1]];
}

/** y (…, N) = x·Wᵀ (+ bias) (+ residual). */
export const linear: Op<LinearArgs, Tensor> = defineOp({
  name: 'linear',
  kernels: [TILED_F16, TILED_F32, BLOCKED_F16, BLOCKED_F32],
  check({ x, weight, bias, residual }) {
    const [N, K] = checkWeight('linear', weight);
    expectDType('linear x', x, 'f32');
    const k = lastDim('linear x', x);
    if (k !== K) throw new Error(`linear x: its last dimension ${k} is not the weight's in-features ${K} (weight [${weight.shape.join(', ')}])`);
    if (bias) {
      expectShape('linear bias', bias, [N]);
      expectDType('linear bias', bias, 'f32');
    }
    if (residual) {
      expectShape('linear residual', residual, [...x.shape.slice(0, -1), N]);
      expectDType('linear residual', residual, 'f32');
    }
  },
  cpu({ x, weight, bias, residual }) {
    const [N, K] = weight.shape;
    const { rows: M } = rowsCols(x);
    const y = matmulRef(cpu(x).data, cpu(weight).data, bias ? cpu(bias).data : null, M, K, N, true);
    const out = new CpuTensor(y, [...x.shape.slice(0, -1), N], 'f32');
    if (residual) addInto(out, cpu(residual).data);
    return out;
  },
  webgpu({ x, weight, bias, residual }, be) {
    const [N, K] = weight.shape;
    const { rows: M } = rowsCols(x);
    const y = be.empty([...x.shape.slice(0, -1), N]);
    dispatch(be, { M, K, N, wn: K, wk: 1 }, x, weight, bias ?? null, y, residual ?? null, false);
    return y;
  },
  bench: {
    label: `linear f16 (${HF_BENCH.D} → ${HF_BENCH.F})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return linear(be, { x: h.x, weight: h.wUp16 });
    },
  },
});

/** gradX (…, K) = gradY·W (`into` when given, with gradX added). */
export const linearBackward: Op<LinearBackwardArgs, Tensor> = defineOp({
  name: 'linearBackward',
  kernels: [TILED_F16, TILED_F32, BLOCKED_F16, BLOCKED_F32],
  check({ gradY, weight, into }) {
    const [N, K] = checkWeight('linearBackward', weight);
    expectDType('linearBackward gradY', gradY, 'f32');
    const n = lastDim('linearBackward gradY', gradY);
    if (n !== N) throw new Error(`linearBackward gradY: its last dimension ${n} is not the weight's out-features ${N} (weight [${weight.shape.join(', ')}])`);
    if (into) {
      expectShape('linearBackward into', into, [...gradY.shape.slice(0, -1), K]);
      expectDType('linearBackward into', into, 'f32');
    }
  },
  cpu({ gradY, weight, into }) {
    const [N, K] = weight.shape;
    const { rows: M } = rowsCols(gradY);
    // matmulBackwardRef's gradA (gradY·W), without the weight gradient a frozen weight never takes.
    const gradA = matmulRef(cpu(gradY).data, cpu(weight).data, null, M, N, K, false);
    if (into) {
      addInto(into, gradA);
      return into;
    }
    return new CpuTensor(gradA, [...gradY.shape.slice(0, -1), K], 'f32');
  },
  webgpu({ gradY, weight, into }, be) {
    const [N, K] = weight.shape;
    const { rows: M } = rowsCols(gradY);
    const gradX = into ?? be.empty([...gradY.shape.slice(0, -1), K]);
    dispatch(be, { M, K: N, N: K, wn: 1, wk: K }, gradY, weight, null, gradX, null, !!into);
    return gradX;
  },
  bench: {
    label: `linearBackward f16 (gradX, ${HF_BENCH.F} → ${HF_BENCH.D})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return linearBackward(be, { gradY: h.gradF, weight: h.wUp16 });
    },
  },
});
