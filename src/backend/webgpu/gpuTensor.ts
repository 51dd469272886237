import type { BufferRange } from '../../gpu/recorder.ts';
import { packF16 } from '../f16.ts';
import { sizeOf, storageBytes, type DType, type Tensor } from '../tensor.ts';

/** Views must start on 256-byte boundaries (minStorageBufferOffsetAlignment): 64 elements (f16: 128). */
export const VIEW_ALIGN_ELEMENTS = 64;

/** The element alignment of a view of a tensor of `dtype` (256 bytes). */
export function viewAlign(dtype: DType): number {
  return dtype === 'f16' ? 2 * VIEW_ALIGN_ELEMENTS : VIEW_ALIGN_ELEMENTS;
}

/**
 * WebGPU tensor: a pooled storage buffer (or a view into one, `offset` in bytes) holding float32
 * or int32 values, or float16 values two to a word. A view shares storage with its base and is
 * never released by itself.
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
    return storageBytes(this.size, this.dtype);
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

/** The words a tensor of `dtype` holds for `data` (f16: packed, refusing values beyond ±65504). */
export function toTyped(data: ArrayLike<number>, dtype: DType): Float32Array | Int32Array | Uint32Array {
  if (dtype === 'f16') return packF16(data);
  return dtype === 'i32' ? Int32Array.from(data, (v) => Math.trunc(v)) : Float32Array.from(data);
}
