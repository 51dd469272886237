// float64 reference of one KV-cached decode position through a whole lm model (oracle for
// shaders/decode_step.wgsl), composed from the per-op references: embedding → per block
// [ln_1 → c_attn → cached attention (writes k, v of `pos`) → x + c_proj → ln_2 → c_fc → gelu →
// + mlp.c_proj] → ln_f → tied head (h·wteᵀ). It is generate.ts's decode loop body, op for op.
import { embeddingRef } from '../nn/embedding.ts';
import { geluRef } from '../nn/gelu.ts';
import { layerNormRef } from '../nn/layernorm.ts';
import { matmulRef } from '../nn/matmul.ts';
import { attentionCachedRef } from './attention.ts';
import { kvStride, type BlockOffsets, type DecodeModel } from '../../backend/seqOps.ts';
import { expectDType, expectShape, type Tensor } from '../../backend/tensor.ts';
import { ATTN_MAX_S } from './shapes.ts';

/**
 * Logits (B, V) for column `pos` of sequences/positions (B, Smax) i32 under attnMask (B, Smax).
 * kv (2·nLayer·stride): layer l's k cache (B, Smax, D) at 2l·stride, v cache at (2l+1)·stride;
 * position `pos` of every layer is written in place (the caches hold positions < pos already).
 */
export function decodeStepRef(
  params: ArrayLike<number>,
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
  const at = (off: number, n: number) => Array.prototype.slice.call(params, off, off + n) as number[];
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

/** Shapes of decodeStep's arguments, checked (shared by both backends). */
export function decodeStepDims(params: Tensor, m: DecodeModel, kv: Tensor, sequences: Tensor, positions: Tensor, attnMask: Tensor, pos: number) {
  if (sequences.shape.length !== 2) throw new Error(`decodeStep sequences: expected (B, Smax), got [${sequences.shape.join(', ')}]`);
  const [B, Smax] = sequences.shape;
  expectDType('decodeStep sequences', sequences, 'i32');
  expectDType('decodeStep positions', positions, 'i32');
  expectShape('decodeStep positions', positions, [B, Smax]);
  expectShape('decodeStep attnMask', attnMask, [B, Smax]);
  const D = m.dModel;
  const H = m.nHead;
  if (!(D >= 1 && D <= 256) || D % H !== 0 || D / H > 64) throw new Error(`decodeStep: dModel ${D} with ${H} heads: need dModel ≤ 256 divisible by nHead, head width ≤ 64`);
  if (Smax > ATTN_MAX_S || H * Smax > 1024) throw new Error(`decodeStep: ${H} heads × cache length ${Smax} exceeds the kernel's 1024 scores (Smax ≤ ${ATTN_MAX_S})`);
  if (!Number.isInteger(pos) || pos < 0 || pos >= Smax) throw new Error(`decodeStep: pos ${pos} outside [0, ${Smax})`);
  if (m.blocks.length !== m.nLayer) throw new Error(`decodeStep: ${m.blocks.length} block offsets for ${m.nLayer} layers`);
  const stride = kvStride(B, Smax, D);
  expectShape('decodeStep kv', kv, [2 * m.nLayer * stride]);
  const V = m.vocabSize;
  const spans: [string, number, number][] = [['wte', m.wte, V * D], ['wpe', m.wpe, m.maxPos * D], ['ln_f.weight', m.lnfG, D], ['ln_f.bias', m.lnfB, D]];
  m.blocks.forEach((o, l) => {
    const sizes: Record<keyof BlockOffsets, number> = { ln1G: D, ln1B: D, attnW: 3 * D * D, attnB: 3 * D, projW: D * D, projB: D, ln2G: D, ln2B: D, fcW: 4 * D * D, fcB: 4 * D, mlpW: 4 * D * D, mlpB: D };
    for (const k of Object.keys(sizes) as (keyof BlockOffsets)[]) spans.push([`block ${l} ${k}`, o[k], sizes[k]]);
  });
  for (const [name, off, n] of spans) {
    if (!Number.isInteger(off) || off < 0 || off + n > params.size) throw new Error(`decodeStep: ${name} [${off}, ${off + n}) outside the ${params.size} parameters`);
  }
  return { B, Smax, D, H, V, stride };
}
