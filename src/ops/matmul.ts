// Dense layers: y = a·b (+ bias), with the GELU or the residual add fused, and the backward
// products. Gradients wrt parameters are ACCUMULATED (+=) into caller-provided tensors (views of a
// model's flat gradient buffer), so tied weights and micro-batches add up; gradients wrt
// activations are returned as new tensors. Row-major: "(M,K)" is M rows of K contiguous floats.
// Math: shaders/matmul.wgsl's header; float64 reference: src/reference/nn/matmul.ts.
import type { GpuOpsHost } from '../backend/backend.ts';
import { expectShape, type Tensor } from '../backend/tensor.ts';
import { addInto, cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid, groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { geluRef } from '../reference/nn/gelu.ts';
import { matmulBackwardRef, matmulRef } from '../reference/nn/matmul.ts';
import { defineOp, type Op } from './op.ts';
import { expectRank1Plus, rowsCols } from './shapes.ts';

export interface MatmulArgs {
  a: Tensor; // (…, K) f32: leading dims are rows
  b: Tensor; // (K, N) f32, or (N, K) when transB
  bias?: Tensor | null; // (N) f32
  transB?: boolean; // default false
}

export interface MatmulResidualArgs extends MatmulArgs {
  residual: Tensor; // (…, N) f32, the output's shape
}

export interface MatmulGeluResult {
  pre: Tensor; // (…, N) f32, a·b + bias (the backward needs it)
  act: Tensor; // (…, N) f32, gelu(pre)
}

export interface MatmulBackwardArgs {
  gradOut: Tensor; // (…, N) f32
  a: Tensor; // (…, K) f32, the forward's input
  b: Tensor; // (K, N) f32, or (N, K) when transB
  transB?: boolean;
  gradB?: Tensor | null; // b's shape, f32: += ∂/∂b
  gradBias?: Tensor | null; // (N) f32: += ∂/∂bias
  needGradA: boolean; // false: gradA is not computed (null)
}

const MM_WG = 64;
const BIAS_GRAD_WG = 64;
const MATMUL_UNIFORM = uniformLayout('Params', {
  M: 'u32',
  K: 'u32',
  N: 'u32',
  a_rs: 'u32',
  a_ks: 'u32',
  b_ks: 'u32',
  b_ns: 'u32',
  has_bias: 'u32',
  accumulate: 'u32',
  has_residual: 'u32',
  has_gelu: 'u32',
});
const MATMUL_8X8 = kernel({ shader: 'matmul', entry: 'matmul_8x8', uniform: MATMUL_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'read', 'rw'], constants: { WG: MM_WG } });
const MATMUL_4X4 = kernel({ ...MATMUL_8X8, entry: 'matmul_4x4' }, 'gpu'); // a CPU adapter always takes 8×8 (gemm)
/**
 * The 8×8 block needs half the loads per product of the 4×4 one (what a CPU implementation of
 * WebGPU such as SwiftShader pays for), but a product with fewer than this many 8×8 blocks would
 * leave most of a GPU idle, so it takes 4×4 blocks (4× the threads) unless the adapter is a CPU.
 * Both give the same bits.
 */
const MM_MIN_BLOCKS_8X8 = 4096;
const BIAS_GRAD = kernel({ shader: 'matmul', entry: 'bias_grad', uniform: MATMUL_UNIFORM, storage: ['read', 'rw'], constants: { WG: BIAS_GRAD_WG } });
const GEMM_KERNELS = [MATMUL_8X8, MATMUL_4X4];

/** a (…,K), b (K,N) or (N,K) when transB → M, K, N and the output shape (…,N). */
function matmulDims(a: Tensor, b: Tensor, transB: boolean): { M: number; K: number; N: number; outShape: number[] } {
  const { rows: M, cols: K } = rowsCols(a);
  const N = transB ? b.shape[0] : b.shape[1];
  return { M, K, N, outShape: [...a.shape.slice(0, -1), N] };
}

/** a (…,K), b (K,N) or (N,K) when transB, bias (N) → the output shape (…,N). */
function checkMatmul({ a, b, bias, transB = false }: MatmulArgs): number[] {
  expectRank1Plus('matmul a', a);
  const K = a.shape[a.shape.length - 1];
  if (b.shape.length !== 2) throw new Error(`matmul b: expected 2 dimensions, got [${b.shape.join(', ')}]`);
  const N = transB ? b.shape[0] : b.shape[1];
  expectShape('matmul b', b, transB ? [N, K] : [K, N]);
  if (bias) expectShape('matmul bias', bias, [N]);
  return [...a.shape.slice(0, -1), N];
}

/** Bound to matmul's `act` when no GELU output is wanted (a writable binding must not alias c): one per backend. */
const spares = new WeakMap<GpuOpsHost, Tensor>();

/** c (M,N) [+]= opA(a)·opB(b) (+ bias) (+ residual (M,N), never c itself); act = gelu(c) when given. */
function gemm(
  be: GpuOpsHost,
  a: Tensor,
  b: Tensor,
  bias: Tensor | null,
  c: Tensor,
  M: number,
  K: number,
  N: number,
  transA: boolean,
  transB: boolean,
  accumulate: boolean,
  residual: Tensor | null = null,
  act: Tensor | null = null,
): void {
  // opA(m,k) = a[m·a_rs + k·a_ks], opB(k,n) = b[k·b_ks + n·b_ns] (see the shader's header).
  const [aRs, aKs] = transA ? [1, M] : [K, 1];
  const [bKs, bNs] = transB ? [1, K] : [N, 1];
  const u = {
    M,
    K,
    N,
    a_rs: aRs,
    a_ks: aKs,
    b_ks: bKs,
    b_ns: bNs,
    has_bias: bias ? 1 : 0,
    accumulate: accumulate ? 1 : 0,
    has_residual: residual ? 1 : 0,
    has_gelu: act ? 1 : 0,
  };
  let spare = spares.get(be);
  if (!spare) {
    spare = be.empty([1]);
    spares.set(be, spare);
  }
  const blocks8 = groups(M, 8) * groups(N, 8);
  const big = be.rt.cpuAdapter || blocks8 >= MM_MIN_BLOCKS_8X8;
  const blocks = big ? blocks8 : groups(M, 4) * groups(N, 4);
  be.rt.dispatch(
    big ? MATMUL_8X8 : MATMUL_4X4,
    [gpu(a), gpu(b), gpu(bias ?? a) /* unread when has_bias = 0 */, gpu(c), gpu(residual ?? a) /* unread when has_residual = 0 */, gpu(act ?? spare)],
    u,
    elementGrid(blocks, MM_WG),
  );
}

/** The float64 values of an optional tensor. */
const dataOf = (t: Tensor | null | undefined) => (t ? cpu(t).data : null);

/** y = a·b (+ bias) → (…, N) f32. */
export const matmul: Op<MatmulArgs, Tensor> = defineOp({
  name: 'matmul',
  kernels: GEMM_KERNELS,
  check: (args) => void checkMatmul(args),
  cpu({ a, b, bias, transB = false }) {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    return new CpuTensor(matmulRef(cpu(a).data, cpu(b).data, dataOf(bias), M, K, N, transB), outShape, 'f32');
  },
  webgpu({ a, b, bias = null, transB = false }, be) {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const y = be.empty(outShape);
    gemm(be, a, b, bias, y, M, K, N, false, transB, false);
    return y;
  },
});

/** pre = a·b (+ bias) and act = gelu(pre) in one dispatch (the MLP's c_fc and its GELU). */
export const matmulGelu: Op<MatmulArgs, MatmulGeluResult> = defineOp({
  name: 'matmulGelu',
  kernels: GEMM_KERNELS,
  check: (args) => void checkMatmul(args),
  cpu({ a, b, bias, transB = false }) {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const pre = matmulRef(cpu(a).data, cpu(b).data, dataOf(bias), M, K, N, transB);
    return { pre: new CpuTensor(pre, outShape, 'f32'), act: new CpuTensor(geluRef(pre), outShape, 'f32') };
  },
  webgpu({ a, b, bias = null, transB = false }, be) {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const pre = be.empty(outShape);
    const act = be.empty(outShape);
    gemm(be, a, b, bias, pre, M, K, N, false, transB, false, null, act);
    return { pre, act };
  },
});

/**
 * residual + (a·b + bias) → (…, N) f32: a dense layer with the transformer's residual add fused
 * (one dispatch instead of matmul + add, the same f32 sums in the same order).
 */
export const matmulResidual: Op<MatmulResidualArgs, Tensor> = defineOp({
  name: 'matmulResidual',
  kernels: GEMM_KERNELS,
  check: (args) => expectShape('matmulResidual residual', args.residual, checkMatmul(args)),
  cpu({ a, b, bias, transB = false, residual }) {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const r = cpu(residual).data;
    const y = matmulRef(cpu(a).data, cpu(b).data, dataOf(bias), M, K, N, transB);
    for (let i = 0; i < y.length; i++) y[i] += r[i];
    return new CpuTensor(y, outShape, 'f32');
  },
  webgpu({ a, b, bias = null, transB = false, residual }, be) {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const y = be.empty(outShape);
    gemm(be, a, b, bias, y, M, K, N, false, transB, false, residual);
    return y;
  },
});

/** Backward of matmul: returns gradA (…, K) f32 (null unless needGradA); accumulates gradB and gradBias when given. */
export const matmulBackward: Op<MatmulBackwardArgs, Tensor | null> = defineOp({
  name: 'matmulBackward',
  kernels: [...GEMM_KERNELS, BIAS_GRAD],
  check({ gradOut, a, b, transB, gradB, gradBias }) {
    const outShape = checkMatmul({ a, b, transB });
    expectShape('matmulBackward gradOut', gradOut, outShape);
    if (gradB) expectShape('matmulBackward gradB', gradB, b.shape);
    if (gradBias) expectShape('matmulBackward gradBias', gradBias, [outShape[outShape.length - 1]]);
  },
  cpu({ gradOut, a, b, transB = false, gradB, gradBias, needGradA }) {
    const { M, K, N } = matmulDims(a, b, transB);
    const g = matmulBackwardRef(cpu(gradOut).data, cpu(a).data, cpu(b).data, M, K, N, transB);
    if (gradB) addInto(gradB, g.gradB);
    if (gradBias) addInto(gradBias, g.gradBias);
    return needGradA ? new CpuTensor(g.gradA, [...a.shape], 'f32') : null;
  },
  webgpu({ gradOut, a, b, transB = false, gradB, gradBias, needGradA }, be) {
    const { M, K, N } = matmulDims(a, b, transB);
    let gradA: Tensor | null = null;
    if (needGradA) {
      gradA = be.empty(a.shape);
      // gradA (M,K) = gradOut (M,N) · op(b)ᵀ: b's storage read the other way round.
      gemm(be, gradOut, b, null, gradA, M, N, K, false, !transB, false);
    }
    if (gradB) {
      // (K,N) += aᵀ·gradOut, or (N,K) += gradOutᵀ·a: the first operand is stored (inner, rows).
      if (transB) gemm(be, gradOut, a, null, gradB, N, M, K, true, false, true);
      else gemm(be, a, gradOut, null, gradB, K, M, N, true, false, true);
    }
    if (gradBias) {
      const u = { M, K: 0, N, a_rs: 0, a_ks: 0, b_ks: 0, b_ns: 0, has_bias: 0, accumulate: 0, has_residual: 0, has_gelu: 0 };
      be.rt.dispatch(BIAS_GRAD, [gpu(gradOut), gpu(gradBias)], u, [groups(N, BIAS_GRAD_WG)]);
    }
    return gradA;
  },
});
