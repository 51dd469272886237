// Tensor handles shared by both backends. Values are float32 on the GPU and float64 in the
// reference backend; `i32` tensors hold token ids, group ids and other integers; `f16` tensors
// hold frozen weights as float16, two to a 32-bit word on the GPU (src/backend/f16.ts).

export type DType = 'f32' | 'i32' | 'f16';

export interface Tensor {
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** Number of elements (product of shape). */
  readonly size: number;
}

export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new Error(`invalid dimension ${d} in shape [${shape.join(', ')}]`);
    n *= d;
  }
  return n;
}

/** Bytes a tensor of `size` elements occupies on the GPU: 4 a value, f16 2 (rounded up to a word). */
export function storageBytes(size: number, dtype: DType): number {
  return dtype === 'f16' ? Math.ceil(size / 2) * 4 : size * 4;
}

export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Throws a message naming the argument when `t` does not have the expected shape. */
export function expectShape(name: string, t: Tensor, shape: readonly number[]): void {
  if (!sameShape(t.shape, shape)) {
    throw new Error(`${name}: expected shape [${shape.join(', ')}], got [${t.shape.join(', ')}]`);
  }
}

export function expectDType(name: string, t: Tensor, dtype: DType): void {
  if (t.dtype !== dtype) throw new Error(`${name}: expected dtype ${dtype}, got ${t.dtype}`);
}

/** Backend.reshape keeps the element count. */
export function checkReshape(t: Tensor, shape: readonly number[]): void {
  const n = shape.reduce((a, b) => a * b, 1);
  if (n !== t.size) throw new Error(`reshape: [${t.shape.join(', ')}] → [${shape.join(', ')}] changes the size`);
}
