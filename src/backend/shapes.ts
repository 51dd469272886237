// Dimensions the backends read off their (already checked, see checks.ts) arguments. Pure shape
// arithmetic, shared so that both backends name the same quantities the same way; nothing here
// throws.
import type { Tensor } from './tensor.ts';
import { kvStride, type DecodeModel } from './seqOps.ts';

/** The largest sequence length and head width the attention kernels take. */
export const ATTN_MAX_S = 128;
export const ATTN_MAX_DH = 64;
/** The largest vocabulary the sampling kernel takes. */
export const SAMPLE_MAX_V = 1024;

/** Rows × last dim of an activation (M,K): leading dims are flattened into rows. */
export function rowsCols(t: Tensor): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1];
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

/** a (…,K), b (K,N) or (N,K) when transB → M, K, N and the output shape (…,N). */
export function matmulDims(a: Tensor, b: Tensor, transB: boolean): { M: number; K: number; N: number; outShape: number[] } {
  const { rows: M, cols: K } = rowsCols(a);
  const N = transB ? b.shape[0] : b.shape[1];
  return { M, K, N, outShape: [...a.shape.slice(0, -1), N] };
}

/** x (B,S,D) or (B,S) → B, S, D (D = 1 for 2-D). */
export function seqDims(x: Tensor): { B: number; S: number; D: number } {
  return { B: x.shape[0], S: x.shape[1], D: x.shape.length === 3 ? x.shape[2] : 1 };
}

/** attention: qkv (B·S, 3D), attnMask (B,S). */
export function attentionDims(qkv: Tensor, attnMask: Tensor, nHead: number) {
  const [B, S] = attnMask.shape;
  const D = qkv.shape[1] / 3;
  return { B, S, H: nHead, D, Dh: D / nHead };
}

/** attentionCached: qkv (B·L, 3D), caches (B, Smax, D). */
export function cachedDims(qkv: Tensor, kCache: Tensor, start: number, nHead: number) {
  const [B, Smax, D] = kCache.shape;
  const L = B > 0 ? qkv.shape[0] / B : 0;
  return { B, L, Smax, H: nHead, D, Dh: D / nHead, start };
}

/** sampleStep: logits (B,V), sequences (B,S). */
export function sampleDims(logits: Tensor, sequences: Tensor) {
  const [B, V] = logits.shape;
  return { B, V, S: sequences.shape[1] };
}

/** decodeStep's sizes: B rows of Smax positions, model width D over H heads, vocabulary V, kv stride. */
export function decodeStepDims(m: DecodeModel, sequences: Tensor): { B: number; Smax: number; D: number; H: number; V: number; stride: number } {
  const [B, Smax] = sequences.shape;
  return { B, Smax, D: m.dModel, H: m.nHead, V: m.vocabSize, stride: kvStride(B, Smax, m.dModel) };
}
