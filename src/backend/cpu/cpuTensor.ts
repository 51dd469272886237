import { f16Values } from '../f16.ts';
import { sizeOf, type DType, type Tensor } from '../tensor.ts';

/** Reference-backend tensor: float64 values (integers and float16 values stored exactly). */
export class CpuTensor implements Tensor {
  readonly size: number;
  constructor(
    readonly data: Float64Array,
    readonly shape: readonly number[],
    readonly dtype: DType,
  ) {
    this.size = sizeOf(shape);
    if (data.length !== this.size) throw new Error(`data length ${data.length} does not match shape [${shape.join(', ')}]`);
  }
}

export function cpu(t: Tensor): CpuTensor {
  if (!(t instanceof CpuTensor)) throw new Error('expected a tensor of the CPU reference backend');
  return t;
}

export function cpuTensor(data: ArrayLike<number>, shape: readonly number[], dtype: DType = 'f32'): CpuTensor {
  const arr = dtype === 'f16' ? f16Values(data) : Float64Array.from(data);
  if (dtype === 'i32') for (let i = 0; i < arr.length; i++) arr[i] = Math.trunc(arr[i]);
  return new CpuTensor(arr, [...shape], dtype);
}

/** dst += src, element-wise: how the CPU bodies accumulate parameter gradients. */
export function addInto(dst: Tensor, src: ArrayLike<number>): void {
  const d = cpu(dst).data;
  for (let i = 0; i < src.length; i++) d[i] += src[i];
}
