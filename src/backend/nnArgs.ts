// Shape checks shared by both backends' NnOps, so they reject the same inputs with the same messages.
import { expectDType, expectShape, type Tensor } from './tensor.ts';

/** Rows × last dim of an activation (M,K) — leading dims are flattened into rows. */
export function rowsCols(name: string, t: Tensor): { rows: number; cols: number } {
  if (t.shape.length < 1) throw new Error(`${name}: expected at least 1 dimension`);
  const cols = t.shape[t.shape.length - 1];
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

export interface MatmulDims {
  M: number;
  K: number;
  N: number;
  outShape: number[];
}

/** a (…,K), b (K,N) or (N,K) when transB, bias (N) → output (…,N). */
export function matmulDims(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): MatmulDims {
  const { rows: M, cols: K } = rowsCols('matmul a', a);
  if (b.shape.length !== 2) throw new Error(`matmul b: expected 2 dimensions, got [${b.shape.join(', ')}]`);
  const N = transB ? b.shape[0] : b.shape[1];
  expectShape('matmul b', b, transB ? [N, K] : [K, N]);
  if (bias) expectShape('matmul bias', bias, [N]);
  return { M, K, N, outShape: [...a.shape.slice(0, -1), N] };
}

/** x (B,S,D) or (B,S) → B, S, D (D = 1 for 2-D). */
export function seqDims(name: string, x: Tensor): { B: number; S: number; D: number } {
  if (x.shape.length !== 2 && x.shape.length !== 3) throw new Error(`${name}: expected (B,S) or (B,S,D), got [${x.shape.join(', ')}]`);
  return { B: x.shape[0], S: x.shape[1], D: x.shape.length === 3 ? x.shape[2] : 1 };
}

export function checkSlice(name: string, S: number, start: number, len: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(len) || start < 0 || len < 0 || start + len > S) {
    throw new Error(`${name}: slice [${start}, ${start + len}) outside a sequence of ${S}`);
  }
}

/**
 * embeddingWindow: tokens and positions (B,S) i32, the window [start, start + len) of each row,
 * wte (V,D), wpe (P,D) → the dims both backends need.
 */
export function embeddingWindowDims(tokens: Tensor, positions: Tensor, start: number, len: number, wte: Tensor, wpe: Tensor): { B: number; S: number; V: number; D: number; P: number } {
  expectDType('embeddingWindow tokens', tokens, 'i32');
  expectDType('embeddingWindow positions', positions, 'i32');
  expectShape('embeddingWindow positions', positions, tokens.shape);
  const { B, S } = seqDims('embeddingWindow tokens', tokens);
  checkSlice('embeddingWindow', S, start, len);
  const [V, D] = wte.shape;
  const P = wpe.shape[0];
  expectShape('embeddingWindow wpe', wpe, [P, D]);
  return { B, S, V, D, P };
}
