// Shape checks and sizes shared by the op modules. The checks throw a message naming the
// argument; the sizes read already-checked arguments and never throw.
import { expectShape, type DType, type Tensor } from '../backend/tensor.ts';

/** Checks that the first tensor is (B, A) and the others share its shape; returns [B, A]. */
export function expectBA(first: [string, Tensor], ...rest: [string, Tensor][]): [number, number] {
  const [name, t] = first;
  if (t.shape.length !== 2) throw new Error(`${name}: expected shape (B, A), got [${t.shape.join(', ')}]`);
  for (const [n, u] of rest) expectShape(n, u, t.shape);
  return [t.shape[0], t.shape[1]];
}

export function expectSize(name: string, t: Tensor, size: number): void {
  if (t.size !== size) throw new Error(`${name}: expected ${size} elements, got ${t.size}`);
}

export function expectRank1Plus(name: string, t: Tensor): void {
  if (t.shape.length < 1) throw new Error(`${name}: expected at least 1 dimension`);
}

/** The last dimension of `t`, which must have at least one. */
export function lastDim(name: string, t: Tensor): number {
  expectRank1Plus(name, t);
  return t.shape[t.shape.length - 1];
}

/** `t` holds one of `dtypes` (a frozen weight: f16 or f32). */
export function expectDTypes(name: string, t: Tensor, dtypes: readonly DType[]): void {
  if (!dtypes.includes(t.dtype)) throw new Error(`${name}: expected dtype ${dtypes.join(' or ')}, got ${t.dtype}`);
}

/** x (B,S,D) or (B,S). */
export function checkSeq(name: string, x: Tensor): { B: number; S: number } {
  if (x.shape.length !== 2 && x.shape.length !== 3) throw new Error(`${name}: expected (B,S) or (B,S,D), got [${x.shape.join(', ')}]`);
  return { B: x.shape[0], S: x.shape[1] };
}

/** [start, start + len) lies inside a sequence of S positions. */
export function checkSlice(name: string, S: number, start: number, len: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(len) || start < 0 || len < 0 || start + len > S) {
    throw new Error(`${name}: slice [${start}, ${start + len}) outside a sequence of ${S}`);
  }
}

/** Rows × last dim of an activation (M,K): leading dims are flattened into rows. */
export function rowsCols(t: Tensor): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1];
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

/** x (B,S,D) or (B,S) → B, S, D (D = 1 for 2-D). */
export function seqDims(x: Tensor): { B: number; S: number; D: number } {
  return { B: x.shape[0], S: x.shape[1], D: x.shape.length === 3 ? x.shape[2] : 1 };
}
