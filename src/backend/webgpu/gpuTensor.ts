import type { BufferRange } from '../../gpu/recorder.ts';
import { sizeOf, type DType, type Tensor } from '../tensor.ts';

/** Views must start on 256-byte boundaries (minStorageBufferOffsetAlignment): 64 elements. */
export const VIEW_ALIGN_ELEMENTS = 64;

/**
 * WebGPU tensor: a pooled storage buffer (or a view into one, `offset` in bytes) holding float32
 * or int32 values. A view shares storage with its base and is never released by itself.
 */
export class GpuTensor implements Tensor {
  readonly size: number;
  disposed = false;
  constructor(
    readonly buffer: GPUBuffer,
    readonly shape: readonly number[],
    readonly dtype: DType,
    readonly offset = 0,
    readonly isView = false,
  ) {
    this.size = sizeOf(shape);
  }
  get bytes(): number {
    return this.size * 4;
  }
}

function asGpu(t: Tensor): GpuTensor {
  if (!(t instanceof GpuTensor)) throw new Error('expected a tensor of the WebGPU backend');
  if (t.disposed) throw new Error('use of a disposed tensor');
  return t;
}

/** The binding range of a tensor (a zero-size tensor binds 4 bytes; kernels never read it). */
export function gpu(t: Tensor): BufferRange {
  const g = asGpu(t);
  return { buffer: g.buffer, offset: g.offset, size: Math.max(4, g.bytes) };
}

export function gpuTensor(t: Tensor): GpuTensor {
  return asGpu(t);
}

export function toTyped(data: ArrayLike<number>, dtype: DType): Float32Array | Int32Array {
  return dtype === 'i32' ? Int32Array.from(data, (v) => Math.trunc(v)) : Float32Array.from(data);
}
