// Copies along the sequence and batch: a window of each sequence and its adjoint, and row gathers
// (minibatches). Math: shaders/slice.wgsl's header; float64 reference: src/reference/nn/slice.ts.
import type { GpuOpsHost } from '../backend/backend.ts';
import { expectDType, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { gatherRowsRef, sliceSeqBackwardRef, sliceSeqRef } from '../reference/nn/slice.ts';
import { defineOp, type Op } from './op.ts';
import { checkSeq, checkSlice, seqDims } from './shapes.ts';

export interface SliceSeqArgs {
  x: Tensor; // (B, S, D) or (B, S), f32 or i32
  start: number;
  len: number; // rows [start, start + len) of each sequence
}

export interface SliceSeqBackwardArgs {
  grad: Tensor; // (B, len, D) or (B, len)
  seqLen: number; // S of the forward's input
  start: number;
}

export interface GatherRowsArgs {
  x: Tensor; // (N, R…) f32 or i32
  index: Tensor; // (M) i32; an index outside [0, N) gives a zero row
}

export interface GatherRowsManyArgs {
  xs: readonly Tensor[]; // each (N, R_k…) f32 or i32, all with N rows
  index: Tensor; // (M) i32
}

const SLICE_WG = 256;
const SLICE_UNIFORM = uniformLayout('Params', { B: 'u32', S: 'u32', D: 'u32', start: 'u32', len: 'u32' });
const GATHER_UNIFORM = uniformLayout('GatherParams', { n_rows: 'u32', row: 'u32', m: 'u32' });
const GATHER_MANY_UNIFORM = uniformLayout('GatherManyParams', { n_rows: 'u32', m: 'u32', w0: 'u32', w1: 'u32', w2: 'u32' });
const SLICE_FORWARD = kernel({ shader: 'slice', entry: 'slice_forward', uniform: SLICE_UNIFORM, storage: ['read', 'rw'], constants: { WG: SLICE_WG } });
const SLICE_BACKWARD = kernel({ ...SLICE_FORWARD, entry: 'slice_backward' });
const GATHER_ROWS = kernel({ shader: 'slice', entry: 'gather_rows', uniform: GATHER_UNIFORM, storage: ['read', 'rw', 'read'], constants: { WG: SLICE_WG } });
// Two and three tensors by the same rows; bindings 1–3 as gather_rows, then a (src, dst) pair per further tensor.
const GATHER_ROWS_2 = kernel({ shader: 'slice', entry: 'gather_rows_2', uniform: GATHER_MANY_UNIFORM, storage: ['read', 'rw', 'read', 'read', 'rw'], constants: { WG: SLICE_WG } });
const GATHER_ROWS_3 = kernel({ ...GATHER_ROWS_2, entry: 'gather_rows_3', storage: [...GATHER_ROWS_2.storage, 'read', 'rw'] });
/** Tensors one gather dispatch takes: 3 inputs + 3 outputs + the index = 7 of the 8 storage buffers a stage may bind. */
const GATHER_PER_DISPATCH = 3;

/** A row gather of x by index: the kernels move 32-bit words, so f32 and i32 work (a dtype of another width would not). */
function checkGather(name: string, x: Tensor, index: Tensor): void {
  expectDType(`${name.split(' ')[0]} index`, index, 'i32');
  if (x.dtype !== 'f32' && x.dtype !== 'i32') throw new Error(`${name}: expected dtype f32 or i32, got ${String(x.dtype)}`);
  if (x.shape.length < 1) throw new Error(`${name}: expected at least 1 dimension`);
}

function gatherCpu(x: Tensor, index: Tensor): Tensor {
  const N = x.shape[0];
  const rowSize = N === 0 ? 0 : x.size / N;
  return new CpuTensor(gatherRowsRef(cpu(x).data, N, rowSize, cpu(index).data), [index.size, ...x.shape.slice(1)], x.dtype);
}

function gatherGpu(be: GpuOpsHost, x: Tensor, index: Tensor): Tensor {
  const N = x.shape[0];
  const row = N === 0 ? 0 : x.size / N;
  const out = be.empty([index.size, ...x.shape.slice(1)], x.dtype);
  be.rt.dispatch(GATHER_ROWS, [gpu(x), gpu(out), gpu(index)], { n_rows: N, row, m: index.size }, elementGrid(out.size, SLICE_WG));
  return out;
}

/** Rows [start, start + len) of each sequence: x (B,S,D) → (B,len,D) of x's dtype; D may be absent ((B,S)). */
export const sliceSeq: Op<SliceSeqArgs, Tensor> = defineOp({
  name: 'sliceSeq',
  kernels: [SLICE_FORWARD],
  check({ x, start, len }) {
    const { S } = checkSeq('sliceSeq x', x);
    checkSlice('sliceSeq', S, start, len);
  },
  cpu({ x, start, len }) {
    const { B, S, D } = seqDims(x);
    const shape = x.shape.length === 3 ? [B, len, D] : [B, len];
    return new CpuTensor(sliceSeqRef(cpu(x).data, B, S, D, start, len), shape, x.dtype);
  },
  webgpu({ x, start, len }, be) {
    const { B, S, D } = seqDims(x);
    const out = be.empty(x.shape.length === 3 ? [B, len, D] : [B, len], x.dtype);
    be.rt.dispatch(SLICE_FORWARD, [gpu(x), gpu(out)], { B, S, D, start, len }, elementGrid(out.size, SLICE_WG));
    return out;
  },
});

/** Adjoint of sliceSeq: grad (B,len,D) → (B,seqLen,D), zeros outside the slice. */
export const sliceSeqBackward: Op<SliceSeqBackwardArgs, Tensor> = defineOp({
  name: 'sliceSeqBackward',
  kernels: [SLICE_BACKWARD],
  check({ grad, seqLen, start }) {
    const { S: len } = checkSeq('sliceSeqBackward grad', grad);
    checkSlice('sliceSeqBackward', seqLen, start, len);
  },
  cpu({ grad, seqLen, start }) {
    const { B, S: len, D } = seqDims(grad);
    const shape = grad.shape.length === 3 ? [B, seqLen, D] : [B, seqLen];
    return new CpuTensor(sliceSeqBackwardRef(cpu(grad).data, B, seqLen, D, start, len), shape, grad.dtype);
  },
  webgpu({ grad, seqLen, start }, be) {
    const { B, S: len, D } = seqDims(grad);
    const out = be.empty(grad.shape.length === 3 ? [B, seqLen, D] : [B, seqLen], grad.dtype);
    be.rt.dispatch(SLICE_BACKWARD, [gpu(grad), gpu(out)], { B, S: seqLen, D, start, len }, elementGrid(out.size, SLICE_WG));
    return out;
  },
});

/** out[i,:] = x[index[i],:] → (M, R…) of x's dtype. Copies bits, so ids and floats come back exact. */
export const gatherRows: Op<GatherRowsArgs, Tensor> = defineOp({
  name: 'gatherRows',
  kernels: [GATHER_ROWS],
  check: ({ x, index }) => checkGather('gatherRows', x, index),
  cpu: ({ x, index }) => gatherCpu(x, index),
  webgpu: ({ x, index }, be) => gatherGpu(be, x, index),
});

/**
 * gatherRows of each x by the same rows → [(M, R_k…) of xs[k]'s dtype]. On WebGPU up to three
 * tensors share a dispatch (a minibatch's k tensors take ⌈k/3⌉), within the storage-buffer limit
 * of a shader stage.
 */
export const gatherRowsMany: Op<GatherRowsManyArgs, Tensor[]> = defineOp({
  name: 'gatherRowsMany',
  kernels: [GATHER_ROWS, GATHER_ROWS_2, GATHER_ROWS_3],
  check({ xs, index }) {
    if (xs.length === 0) throw new Error('gatherRowsMany xs: expected at least one tensor');
    xs.forEach((x, k) => {
      checkGather(`gatherRowsMany xs[${k}]`, x, index);
      if (x.shape[0] !== xs[0].shape[0]) throw new Error(`gatherRowsMany xs[${k}]: expected ${xs[0].shape[0]} rows like xs[0], got ${x.shape[0]}`);
    });
  },
  cpu: ({ xs, index }) => xs.map((x) => gatherCpu(x, index)),
  webgpu({ xs, index }, be) {
    const outs: Tensor[] = [];
    for (let k = 0; k < xs.length; k += GATHER_PER_DISPATCH) {
      const chunk = xs.slice(k, k + GATHER_PER_DISPATCH);
      if (chunk.length === 1) {
        outs.push(gatherGpu(be, chunk[0], index));
        continue;
      }
      const N = chunk[0].shape[0];
      const width = chunk.map((x) => (N === 0 ? 0 : x.size / N)); // words per row
      const out = chunk.map((x) => be.empty([index.size, ...x.shape.slice(1)], x.dtype));
      const u = { n_rows: N, m: index.size, w0: width[0], w1: width[1], w2: width[2] ?? 0 };
      const buffers = [gpu(chunk[0]), gpu(out[0]), gpu(index), ...chunk.slice(1).flatMap((x, j) => [gpu(x), gpu(out[j + 1])])];
      const words = out.reduce((a, t) => a + t.size, 0);
      be.rt.dispatch(chunk.length === 2 ? GATHER_ROWS_2 : GATHER_ROWS_3, buffers, u, elementGrid(words, SLICE_WG));
      outs.push(...out);
    }
    return outs;
  },
});
