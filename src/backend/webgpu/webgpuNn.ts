// Dense-layer ops and the optimiser on WebGPU: each op records its kernel(s) into the shared
// encoder (no submit, no readback). Math and bindings are in the headers of shaders/matmul.wgsl,
// layernorm.wgsl, elementwise.wgsl, embedding.wgsl, slice.wgsl and optim.wgsl.
import { elementGrid, groups } from '../../gpu/runtime.ts';
import { kernel, type KernelSpec } from '../../gpu/pipelines.ts';
import type { BufferRange } from '../../gpu/recorder.ts';
import { uniformLayout } from '../../gpu/uniforms.ts';
import type { AdamWParams, NnOps } from '../nnOps.ts';
import type { Tensor } from '../tensor.ts';
import { matmulDims, rowsCols, seqDims } from '../shapes.ts';
import { gpu } from './gpuTensor.ts';
import type { GpuOpsHost } from '../backend.ts';

const MM_WG = 64;
const BIAS_GRAD_WG = 64;
const COLSUM = { COLS: 16, LANES: 16 } as const;
const LN_WG = 64;
const EW_WG = 256;
const EMB_WG = 64;
const SLICE_WG = 256;
const NORM_WG = 256;
const ADAMW_WG = 256;
const NORM_MAX_GROUPS = 256;

// Uniform structs, in each shader's field order (tests/unit/wgsl_params.test.ts checks them by name).
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
const LN_UNIFORM = uniformLayout('Params', { M: 'u32', D: 'u32', eps: 'f32', accumulate: 'u32' }); // layernorm and layernorm_rows
const EW_UNIFORM = uniformLayout('Params', { n: 'u32', alpha: 'f32', bits: 'u32' });
const EMB_UNIFORM = uniformLayout('Params', { R: 'u32', D: 'u32', V: 'u32', P: 'u32', S: 'u32', start: 'u32', L: 'u32' });
const SLICE_UNIFORM = uniformLayout('Params', { B: 'u32', S: 'u32', D: 'u32', start: 'u32', len: 'u32' });
const GATHER_UNIFORM = uniformLayout('GatherParams', { n_rows: 'u32', row: 'u32', m: 'u32' });
const GATHER_MANY_UNIFORM = uniformLayout('GatherManyParams', { n_rows: 'u32', m: 'u32', w0: 'u32', w1: 'u32', w2: 'u32' });
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
const ew = (entry: string, storage: KernelSpec['storage']) => kernel({ shader: 'elementwise', entry, uniform: EW_UNIFORM, storage, constants: { WG: EW_WG } });
const GELU = ew('gelu_forward', ['rw', 'read']);
const GELU_BACKWARD = ew('gelu_backward', ['rw', 'read', 'read']);
const ADD = ew('add', ['rw', 'read', 'read']);
const MUL = ew('mul', ['rw', 'read', 'read']);
const AXPY = ew('axpy', ['rw', 'read']);
const SCALE = ew('scale', ['rw']);
const FILL = ew('fill', ['rw']);
const EMB_FORWARD = kernel({ shader: 'embedding', entry: 'embedding_forward', uniform: EMB_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG: EMB_WG } });
const EMB_BACKWARD = kernel({ shader: 'embedding', entry: 'embedding_backward', uniform: EMB_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG: EMB_WG } });
const SLICE_FORWARD = kernel({ shader: 'slice', entry: 'slice_forward', uniform: SLICE_UNIFORM, storage: ['read', 'rw'], constants: { WG: SLICE_WG } });
const SLICE_BACKWARD = kernel({ ...SLICE_FORWARD, entry: 'slice_backward' });
const GATHER_ROWS = kernel({ shader: 'slice', entry: 'gather_rows', uniform: GATHER_UNIFORM, storage: ['read', 'rw', 'read'], constants: { WG: SLICE_WG } });
// Two and three tensors by the same rows; bindings 1–3 as gather_rows, then a (src, dst) pair per further tensor.
const GATHER_ROWS_2 = kernel({ shader: 'slice', entry: 'gather_rows_2', uniform: GATHER_MANY_UNIFORM, storage: ['read', 'rw', 'read', 'read', 'rw'], constants: { WG: SLICE_WG } });
const GATHER_ROWS_3 = kernel({ ...GATHER_ROWS_2, entry: 'gather_rows_3', storage: [...GATHER_ROWS_2.storage, 'read', 'rw'] });
/** Tensors one gather dispatch takes: 3 inputs + 3 outputs + the index = 7 of the 8 storage buffers a stage may bind. */
const GATHER_PER_DISPATCH = 3;
const NORM_PARTIAL = kernel({ shader: 'optim', entry: 'norm_partial', uniform: NORM_UNIFORM, storage: ['read', 'rw'], constants: { WG: NORM_WG } }, 'gpu');
const NORM_FINAL = kernel({ ...NORM_PARTIAL, entry: 'norm_final' }, 'gpu');
// CPU adapters: no barriers (NORM_SERIAL_THREADS partial sums, then one thread adds them).
const NORM_PARTIAL_SERIAL = kernel({ ...NORM_PARTIAL, entry: 'norm_partial_serial', constants: { WG: 64 } }, 'cpu');
const NORM_FINAL_SERIAL = kernel({ shader: 'optim', entry: 'norm_final_serial', uniform: NORM_UNIFORM, storage: ['read', 'rw'] }, 'cpu');
const NORM_SERIAL_THREADS = 256;
const ADAMW = kernel({ shader: 'optim', entry: 'adamw', uniform: ADAMW_UNIFORM, storage: ['rw', 'read', 'rw', 'rw', 'read', 'read'], constants: { WG: ADAMW_WG } });
// LayerNorm rows of small D take shaders/layernorm_rows.wgsl (one thread per row, no barriers):
// on software Vulkan the per-row workgroup's tree-reduction barriers dominate at these sizes.
const LN_ROWS_WG = 64;
const LN_ROWS_MAX_D = 256; // rows of at most this many columns …
const LN_ROWS_MAX_SIZE = 1 << 18; // … in tensors of at most this many elements take layernorm_rows
// Squares summed per norm_partial thread: few workgroups, because each costs ~1 ms of barriers on
// SwiftShader (256 groups: 170 ms for 0.1 M parameters; 13 groups: ~15 ms); real GPUs still get
// up to NORM_MAX_GROUPS groups for large models.
const NORM_PER_THREAD = 32;
const lnRows = (M: number, D: number) => D <= LN_ROWS_MAX_D && M * D <= LN_ROWS_MAX_SIZE;
const LN_ROWS_FORWARD = kernel({
  shader: 'layernorm_rows',
  entry: 'rows_forward',
  uniform: LN_UNIFORM,
  storage: ['read', 'read', 'read', 'rw', 'rw', 'rw'],
  constants: { WG: LN_ROWS_WG },
});
const LN_ROWS_BACKWARD = kernel({ ...LN_ROWS_FORWARD, entry: 'rows_backward', storage: ['read', 'read', 'read', 'read', 'read', 'rw'] });

/** The f32 or i32 bit pattern of a fill value. */
function fillBits(value: number, dtype: Tensor['dtype']): number {
  const view = new DataView(new ArrayBuffer(4));
  if (dtype === 'i32') view.setInt32(0, Math.trunc(value), true);
  else view.setFloat32(0, value, true);
  return view.getUint32(0, true);
}

export class WebGpuNnOps implements NnOps {
  constructor(private readonly be: GpuOpsHost) {}

  /** Bound to matmul's `act` when no GELU output is wanted (a writable binding must not alias c). */
  private spare: Tensor | null = null;

  /** c (M,N) [+]= opA(a)·opB(b) (+ bias) (+ residual (M,N), never c itself); act = gelu(c) when given. */
  private gemm(
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
    this.spare ??= this.be.empty([1]);
    const blocks8 = groups(M, 8) * groups(N, 8);
    const big = this.be.rt.cpuAdapter || blocks8 >= MM_MIN_BLOCKS_8X8;
    const blocks = big ? blocks8 : groups(M, 4) * groups(N, 4);
    this.be.rt.dispatch(
      big ? MATMUL_8X8 : MATMUL_4X4,
      [gpu(a), gpu(b), gpu(bias ?? a) /* unread when has_bias = 0 */, gpu(c), gpu(residual ?? a) /* unread when has_residual = 0 */, gpu(act ?? this.spare)],
      u,
      elementGrid(blocks, MM_WG),
    );
  }

  matmul(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): Tensor {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const y = this.be.empty(outShape);
    this.gemm(a, b, bias, y, M, K, N, false, transB, false);
    return y;
  }

  matmulGelu(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): { pre: Tensor; act: Tensor } {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const pre = this.be.empty(outShape);
    const act = this.be.empty(outShape);
    this.gemm(a, b, bias, pre, M, K, N, false, transB, false, null, act);
    return { pre, act };
  }

  matmulResidual(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean, residual: Tensor): Tensor {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const y = this.be.empty(outShape);
    this.gemm(a, b, bias, y, M, K, N, false, transB, false, residual);
    return y;
  }

  matmulBackward(gradOut: Tensor, a: Tensor, b: Tensor, transB: boolean, gradB: Tensor | null, gradBias: Tensor | null, needGradA: boolean): Tensor | null {
    const { M, K, N } = matmulDims(a, b, transB);
    let gradA: Tensor | null = null;
    if (needGradA) {
      gradA = this.be.empty(a.shape);
      // gradA (M,K) = gradOut (M,N) · op(b)ᵀ: b's storage read the other way round.
      this.gemm(gradOut, b, null, gradA, M, N, K, false, !transB, false);
    }
    if (gradB) {
      // (K,N) += aᵀ·gradOut, or (N,K) += gradOutᵀ·a: the first operand is stored (inner, rows).
      if (transB) this.gemm(gradOut, a, null, gradB, N, M, K, true, false, true);
      else this.gemm(a, gradOut, null, gradB, K, M, N, true, false, true);
    }
    if (gradBias) {
      const u = { M, K: 0, N, a_rs: 0, a_ks: 0, b_ks: 0, b_ns: 0, has_bias: 0, accumulate: 0, has_residual: 0, has_gelu: 0 };
      this.be.rt.dispatch(BIAS_GRAD, [gpu(gradOut), gpu(gradBias)], u, [groups(N, BIAS_GRAD_WG)]);
    }
    return gradA;
  }

  layerNorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: number): { y: Tensor; mean: Tensor; rstd: Tensor } {
    const { rows: M, cols: D } = rowsCols(x);
    const y = this.be.empty(x.shape);
    const mean = this.be.empty([M]);
    const rstd = this.be.empty([M]);
    const u = { M, D, eps, accumulate: 0 };
    const rows = lnRows(M, D);
    this.be.rt.dispatch(rows ? LN_ROWS_FORWARD : LN_FORWARD, [gpu(x), gpu(gamma), gpu(beta), gpu(mean), gpu(rstd), gpu(y)], u, [rows ? groups(M, LN_ROWS_WG) : M]);
    return { y, mean, rstd };
  }

  layerNormBackward(gradY: Tensor, x: Tensor, gamma: Tensor, mean: Tensor, rstd: Tensor, gradGamma: Tensor, gradBeta: Tensor, into: Tensor | null = null): Tensor {
    const { rows: M, cols: D } = rowsCols(x);
    const gradX = into ?? this.be.empty(x.shape);
    const u = { M, D, eps: 0, accumulate: into ? 1 : 0 };
    const rows = lnRows(M, D);
    this.be.rt.dispatch(rows ? LN_ROWS_BACKWARD : LN_BACKWARD, [gpu(x), gpu(gamma), gpu(gradY), gpu(mean), gpu(rstd), gpu(gradX)], u, [rows ? groups(M, LN_ROWS_WG) : M]);
    const params = [gpu(x), gpu(gradGamma), gpu(gradY), gpu(mean), gpu(rstd), gpu(gradBeta)];
    if (this.be.rt.cpuAdapter) this.be.rt.dispatch(LN_PARAMS_SERIAL, params, u, [groups(D, LN_WG)]);
    else this.be.rt.dispatch(LN_PARAMS, params, u, [groups(D, COLSUM.COLS)]);
    return gradX;
  }

  private elementwise(spec: typeof GELU, n: number, buffers: BufferRange[], alpha = 0, bits = 0): void {
    this.be.rt.dispatch(spec, buffers, { n, alpha, bits }, elementGrid(n, EW_WG));
  }

  gelu(x: Tensor): Tensor {
    const y = this.be.empty(x.shape);
    this.elementwise(GELU, x.size, [gpu(y), gpu(x)]);
    return y;
  }
  geluBackward(gradY: Tensor, x: Tensor): Tensor {
    const gradX = this.be.empty(x.shape);
    this.elementwise(GELU_BACKWARD, x.size, [gpu(gradX), gpu(x), gpu(gradY)]);
    return gradX;
  }
  add(a: Tensor, b: Tensor): Tensor {
    const y = this.be.empty(a.shape);
    this.elementwise(ADD, a.size, [gpu(y), gpu(a), gpu(b)]);
    return y;
  }
  mul(a: Tensor, b: Tensor): Tensor {
    const y = this.be.empty(a.shape);
    this.elementwise(MUL, a.size, [gpu(y), gpu(a), gpu(b)]);
    return y;
  }
  axpy(alpha: number, x: Tensor, y: Tensor): void {
    this.elementwise(AXPY, x.size, [gpu(y), gpu(x)], alpha);
  }
  scale(x: Tensor, alpha: number): void {
    this.elementwise(SCALE, x.size, [gpu(x)], alpha);
  }
  fill(x: Tensor, value: number): void {
    this.elementwise(FILL, x.size, [gpu(x)], 0, fillBits(value, x.dtype));
  }

  embedding(tokens: Tensor, positions: Tensor, wte: Tensor, wpe: Tensor): Tensor {
    const [V, D] = wte.shape;
    const P = wpe.shape[0];
    const R = tokens.size;
    const out = this.be.empty([R, D]);
    const u = { R, D, V, P, S: R, start: 0, L: R };
    this.be.rt.dispatch(EMB_FORWARD, [gpu(tokens), gpu(positions), gpu(wte), gpu(wpe), gpu(out)], u, elementGrid(R * D, EMB_WG));
    return out;
  }

  embeddingWindow(tokens: Tensor, positions: Tensor, start: number, len: number, wte: Tensor, wpe: Tensor): Tensor {
    const { B, S } = seqDims(tokens);
    const [V, D] = wte.shape;
    const P = wpe.shape[0];
    const R = B * len;
    const out = this.be.empty([R, D]);
    const u = { R, D, V, P, S, start, L: len };
    this.be.rt.dispatch(EMB_FORWARD, [gpu(tokens), gpu(positions), gpu(wte), gpu(wpe), gpu(out)], u, elementGrid(R * D, EMB_WG));
    return out;
  }
  embeddingBackward(gradOut: Tensor, tokens: Tensor, positions: Tensor, gradWte: Tensor, gradWpe: Tensor): void {
    const [V, D] = gradWte.shape;
    const P = gradWpe.shape[0];
    const R = tokens.size;
    const u = { R, D, V, P, S: R, start: 0, L: R };
    // One thread per 8 columns of a table row (shaders/embedding.wgsl).
    this.be.rt.dispatch(EMB_BACKWARD, [gpu(tokens), gpu(positions), gpu(gradOut), gpu(gradWte), gpu(gradWpe)], u, elementGrid((V + P) * Math.ceil(D / 8), EMB_WG));
  }

  sliceSeq(x: Tensor, start: number, len: number): Tensor {
    const { B, S, D } = seqDims(x);
    const out = this.be.empty(x.shape.length === 3 ? [B, len, D] : [B, len], x.dtype);
    const u = { B, S, D, start, len };
    this.be.rt.dispatch(SLICE_FORWARD, [gpu(x), gpu(out)], u, elementGrid(out.size, SLICE_WG));
    return out;
  }
  sliceSeqBackward(grad: Tensor, seqLen: number, start: number): Tensor {
    const { B, S: len, D } = seqDims(grad);
    const out = this.be.empty(grad.shape.length === 3 ? [B, seqLen, D] : [B, seqLen], grad.dtype);
    const u = { B, S: seqLen, D, start, len };
    this.be.rt.dispatch(SLICE_BACKWARD, [gpu(grad), gpu(out)], u, elementGrid(out.size, SLICE_WG));
    return out;
  }
  gatherRows(x: Tensor, index: Tensor): Tensor {
    const N = x.shape[0];
    const row = N === 0 ? 0 : x.size / N;
    const out = this.be.empty([index.size, ...x.shape.slice(1)], x.dtype);
    const u = { n_rows: N, row, m: index.size };
    this.be.rt.dispatch(GATHER_ROWS, [gpu(x), gpu(out), gpu(index)], u, elementGrid(out.size, SLICE_WG));
    return out;
  }
  gatherRowsMany(xs: readonly Tensor[], index: Tensor): Tensor[] {
    const outs: Tensor[] = [];
    for (let k = 0; k < xs.length; k += GATHER_PER_DISPATCH) {
      const chunk = xs.slice(k, k + GATHER_PER_DISPATCH);
      if (chunk.length === 1) {
        outs.push(this.gatherRows(chunk[0], index));
        continue;
      }
      const N = chunk[0].shape[0];
      const width = chunk.map((x) => (N === 0 ? 0 : x.size / N)); // words per row
      const out = chunk.map((x) => this.be.empty([index.size, ...x.shape.slice(1)], x.dtype));
      const u = { n_rows: N, m: index.size, w0: width[0], w1: width[1], w2: width[2] ?? 0 };
      const buffers = [gpu(chunk[0]), gpu(out[0]), gpu(index), ...chunk.slice(1).flatMap((x, j) => [gpu(x), gpu(out[j + 1])])];
      const words = out.reduce((a, t) => a + t.size, 0);
      this.be.rt.dispatch(chunk.length === 2 ? GATHER_ROWS_2 : GATHER_ROWS_3, buffers, u, elementGrid(words, SLICE_WG));
      outs.push(...out);
    }
    return outs;
  }

  gradNorm(grads: Tensor): Tensor {
    const n = grads.size;
    if (this.be.rt.cpuAdapter) {
      const t = Math.max(1, Math.min(NORM_SERIAL_THREADS, n));
      const partial = this.be.empty([t]);
      const norm = this.be.empty([1]);
      this.be.rt.dispatch(NORM_PARTIAL_SERIAL, [gpu(grads), gpu(partial)], { n, groups: t }, [groups(t, 64)]);
      this.be.rt.dispatch(NORM_FINAL_SERIAL, [gpu(partial), gpu(norm)], { n: t, groups: 1 }, [1]);
      this.be.dispose(partial);
      return norm;
    }
    const g = Math.max(1, Math.min(NORM_MAX_GROUPS, groups(n, NORM_WG * NORM_PER_THREAD)));
    const partial = this.be.empty([g]);
    const norm = this.be.empty([1]);
    this.be.rt.dispatch(NORM_PARTIAL, [gpu(grads), gpu(partial)], { n, groups: g }, [g]);
    this.be.rt.dispatch(NORM_FINAL, [gpu(partial), gpu(norm)], { n: g, groups: 1 }, [1]);
    // Safe to recycle now: any later user of this buffer is recorded after the final pass.
    this.be.dispose(partial);
    return norm;
  }

  adamw(params: Tensor, grads: Tensor, m: Tensor, v: Tensor, decayMask: Tensor, gradNorm: Tensor | null, hp: AdamWParams): void {
    const useNorm = gradNorm !== null && hp.maxGradNorm > 0;
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
    this.be.rt.dispatch(
      ADAMW,
      [gpu(params), gpu(grads), gpu(m), gpu(v), gpu(decayMask), gpu(gradNorm ?? grads) /* unread when use_norm = 0 */],
      u,
      elementGrid(params.size, ADAMW_WG),
    );
  }
}
