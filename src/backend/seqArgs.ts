// Shape checks shared by both backends' sequence ops, so a mismatch fails the same way on each.
import type { SampleParams } from './seqOps.ts';
import { expectDType, expectShape, type Tensor } from './tensor.ts';

/** The largest sequence length and head width the attention kernels take. */
export const ATTN_MAX_S = 128;
export const ATTN_MAX_DH = 64;
/** The largest vocabulary the sampling kernel takes. */
export const SAMPLE_MAX_V = 1024;

function headWidth(D: number, nHead: number): number {
  if (!Number.isInteger(nHead) || nHead < 1 || D % nHead !== 0) throw new Error(`attention: width ${D} is not divisible by ${nHead} heads`);
  const Dh = D / nHead;
  if (Dh > ATTN_MAX_DH) throw new Error(`attention: head width ${Dh} exceeds ${ATTN_MAX_DH}`);
  return Dh;
}

export function attentionDims(qkv: Tensor, attnMask: Tensor, nHead: number) {
  if (attnMask.shape.length !== 2) throw new Error(`attnMask: expected (B, S), got [${attnMask.shape.join(', ')}]`);
  const [B, S] = attnMask.shape;
  if (S > ATTN_MAX_S) throw new Error(`attention: sequence length ${S} exceeds ${ATTN_MAX_S}`);
  if (qkv.shape.length !== 2 || qkv.shape[1] % 3 !== 0) throw new Error(`qkv: expected (B·S, 3D), got [${qkv.shape.join(', ')}]`);
  const D = qkv.shape[1] / 3;
  expectShape('qkv', qkv, [B * S, 3 * D]);
  const Dh = headWidth(D, nHead);
  return { B, S, H: nHead, D, Dh };
}

export function cachedDims(qkv: Tensor, kCache: Tensor, vCache: Tensor, attnMask: Tensor, start: number, nHead: number) {
  if (kCache.shape.length !== 3) throw new Error(`kCache: expected (B, Smax, D), got [${kCache.shape.join(', ')}]`);
  const [B, Smax, D] = kCache.shape;
  if (Smax > ATTN_MAX_S) throw new Error(`attentionCached: cache length ${Smax} exceeds ${ATTN_MAX_S}`);
  expectShape('vCache', vCache, [B, Smax, D]);
  expectShape('attnMask', attnMask, [B, Smax]);
  if (qkv.shape.length !== 2 || qkv.shape[1] !== 3 * D || qkv.shape[0] % Math.max(B, 1) !== 0) {
    throw new Error(`qkv: expected (B·L, ${3 * D}), got [${qkv.shape.join(', ')}]`);
  }
  const L = B > 0 ? qkv.shape[0] / B : 0;
  if (!Number.isInteger(start) || start < 0 || start + L > Smax) throw new Error(`attentionCached: positions [${start}, ${start + L}) outside the cache of ${Smax}`);
  const Dh = headWidth(D, nHead);
  return { B, L, Smax, H: nHead, D, Dh, start };
}

export function sampleDims(logits: Tensor, sequences: Tensor, attnMask: Tensor, positions: Tensor, finished: Tensor, pos: number, params: SampleParams) {
  if (logits.shape.length !== 2) throw new Error(`logits: expected (B, V), got [${logits.shape.join(', ')}]`);
  const [B, V] = logits.shape;
  if (V > SAMPLE_MAX_V) throw new Error(`sampleStep: vocabulary ${V} exceeds ${SAMPLE_MAX_V}`);
  if (sequences.shape.length !== 2) throw new Error(`sequences: expected (B, S), got [${sequences.shape.join(', ')}]`);
  const S = sequences.shape[1];
  expectShape('sequences', sequences, [B, S]);
  expectShape('attnMask', attnMask, [B, S]);
  expectShape('positions', positions, [B, S]);
  expectShape('finished', finished, [B]);
  expectDType('sequences', sequences, 'i32');
  expectDType('attnMask', attnMask, 'f32');
  expectDType('positions', positions, 'i32');
  expectDType('finished', finished, 'i32');
  if (!Number.isInteger(pos) || pos < 0 || pos >= S) throw new Error(`sampleStep: position ${pos} outside [0, ${S})`);
  if (!(params.temperature > 0)) throw new Error(`sampleStep: temperature must be > 0, got ${params.temperature}`);
  if (!(params.topP > 0)) throw new Error(`sampleStep: topP must be > 0, got ${params.topP}`);
  if (!Number.isInteger(params.topK) || params.topK < 0) throw new Error(`sampleStep: topK must be a non-negative integer, got ${params.topK}`);
  return { B, V, S };
}
