// Argument checks and sizes shared by the Hugging Face model ops (rmsNorm, rope, swiglu,
// embeddingRows, linear); each check throws a message naming the op and the argument.
import { cpu } from '../backend/cpu/cpuTensor.ts';
import type { DType, Tensor } from '../backend/tensor.ts';

export function expectDTypes(name: string, t: Tensor, dtypes: readonly DType[]): void {
  if (!dtypes.includes(t.dtype)) throw new Error(`${name}: expected dtype ${dtypes.join(' or ')}, got ${t.dtype}`);
}

export function expectF32(name: string, t: Tensor): void {
  expectDTypes(name, t, ['f32']);
}

export function shapeText(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/** The last dimension of t (at least one dimension is required). */
export function lastDim(name: string, t: Tensor): number {
  if (t.shape.length < 1) throw new Error(`${name}: expected at least 1 dimension`);
  return t.shape[t.shape.length - 1];
}

/** Rows × last dim of an activation: leading dims are flattened into rows. */
export function rowsCols(t: Tensor): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1];
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

/** A whole number in [min, max], or a message naming it. */
export function expectInt(name: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name}: expected an integer in [${min}, ${max}], got ${v}`);
}

/** dst += src element-wise (the CPU bodies' accumulation into gradient buffers). */
export function addIntoCpu(dst: Tensor, src: ArrayLike<number>): void {
  const d = cpu(dst).data;
  for (let i = 0; i < src.length; i++) d[i] += src[i];
}
