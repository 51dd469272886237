// float64 reference of one KV-cached decode position through a whole lm model (oracle for
// shaders/decode_step.wgsl), composed from the per-op references: embedding → per block
// [ln_1 → c_attn → cached attention (writes k, v of `pos`) → x + c_proj → ln_2 → c_fc → gelu →
// + mlp.c_proj] → ln_f → tied head (h·wteᵀ). It is generate.ts's decode loop body, op for op.
import { embeddingRef } from '../nn/embedding.ts';
import { geluRef } from '../nn/gelu.ts';
import { layerNormRef } from '../nn/layernorm.ts';
import { matmulRef } from '../nn/matmul.ts';
import { attentionCachedRef } from './attention.ts';

/** Element offsets of one transformer block's parameters in the model's flat parameter tensor. */
export interface BlockOffsets {
  ln1G: number;
  ln1B: number;
  attnW: number; // (D, 3D)
  attnB: number; // (3D)
  projW: number; // (D, D)
  projB: number; // (D)
  ln2G: number;
  ln2B: number;
  fcW: number; // (D, 4D)
  fcB: number; // (4D)
  mlpW: number; // (4D, D)
  mlpB: number; // (D)
}

/** An lm model as decodeStep sees it: sizes and element offsets into the flat parameters. */
export interface DecodeModel {
  nLayer: number;
  nHead: number;
  dModel: number;
  vocabSize: number;
  /** Rows of wpe (the position table). */
  maxPos: number;
  eps: number;
  wte: number; // (V, D), also the tied head
  wpe: number; // (maxPos, D)
  lnfG: number;
  lnfB: number;
  /** One entry per block; the WebGPU kernel needs them evenly spaced (block l = block 0 + l·stride). */
  blocks: BlockOffsets[];
}

/** Elements from one cache to the next in decodeStep's kv buffer: B·Smax·D rounded up to 64 (the view alignment). */
export function kvStride(B: number, Smax: number, D: number): number {
  return Math.ceil((B * Smax * D) / 64) * 64;
}

/**
 * Logits (B, V) for column `pos` of sequences/positions (B, Smax) i32 under attnMask (B, Smax).
 * kv (2·nLayer·stride): layer l's k cache (B, Smax, D) at 2l·stride, v cache at (2l+1)·stride;
 * position `pos` of every layer is written in place (the caches hold positions < pos already).
 */
export function decodeStepRef(
  params: Float64Array | Float32Array,
  m: DecodeModel,
  kv: Float64Array,
  sequences: ArrayLike<number>,
  positions: ArrayLike<number>,
  attnMask: ArrayLike<number>,
  B: number,
  Smax: number,
  pos: number,
): Float64Array {
  const D = m.dModel;
  const V = m.vocabSize;
  const P = m.maxPos;
  const at = (off: number, n: number) => params.subarray(off, off + n); // views: copying wte every step cost more than the matmuls
  const col = (src: ArrayLike<number>) => Array.from({ length: B }, (_, b) => src[b * Smax + pos]);
  let x = embeddingRef(col(sequences), col(positions), at(m.wte, V * D), at(m.wpe, P * D), V, P, D); // (B, D)
  const stride = kvStride(B, Smax, D);
  for (let l = 0; l < m.nLayer; l++) {
    const o = m.blocks[l];
    const ln1 = layerNormRef(x, at(o.ln1G, D), at(o.ln1B, D), B, D, m.eps).y;
    const qkv = matmulRef(ln1, at(o.attnW, D * 3 * D), at(o.attnB, 3 * D), B, D, 3 * D, false); // (B, 3D)
    const kC = kv.subarray(2 * l * stride, 2 * l * stride + B * Smax * D);
    const vC = kv.subarray((2 * l + 1) * stride, (2 * l + 1) * stride + B * Smax * D);
    const att = attentionCachedRef(qkv, kC, vC, attnMask, { B, L: 1, Smax, H: m.nHead, D, start: pos }); // (B, D)
    const proj = matmulRef(att, at(o.projW, D * D), at(o.projB, D), B, D, D, false);
    const mid = x.map((v, i) => v + proj[i]);
    const ln2 = layerNormRef(mid, at(o.ln2G, D), at(o.ln2B, D), B, D, m.eps).y;
    const fc = geluRef(matmulRef(ln2, at(o.fcW, D * 4 * D), at(o.fcB, 4 * D), B, D, 4 * D, false)); // (B, 4D)
    const mlp = matmulRef(fc, at(o.mlpW, 4 * D * D), at(o.mlpB, D), B, 4 * D, D, false);
    x = mid.map((v, i) => v + mlp[i]);
  }
  const h = layerNormRef(x, at(m.lnfG, D), at(m.lnfB, D), B, D, m.eps).y;
  return matmulRef(h, at(m.wte, V * D), null, B, D, V, true); // (B, V)
}
