// KV-cached attention for L new positions of each sequence (prefill: L = the prompt, decode: L = 1).
// Math: shaders/attention_cached.wgsl's header; float64 reference: attentionCachedRef in
// src/reference/seq/attention.ts. Matches `attention` on the same inputs (tested).
import { expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { attentionCachedRef } from '../reference/seq/attention.ts';
import { ATTN_MAX_S, checkHeadWidth } from './attention.ts';
import { defineOp, type Op } from './op.ts';

export interface AttentionCachedArgs {
  qkv: Tensor; // (B·L, 3D) f32, the new positions' q | k | v
  kCache: Tensor; // (B, Smax, D) f32, written at the new positions
  vCache: Tensor; // (B, Smax, D) f32, written at the new positions
  attnMask: Tensor; // (B, Smax) f32
  start: number; // the first new position; they are [start, start + L)
  nHead: number;
}

const WG = 64;
const ATTN_CACHED_UNIFORM = uniformLayout('Params', { L: 'u32', Smax: 'u32', H: 'u32', D: 'u32', start: 'u32', scale: 'f32', rows: 'u32', total: 'u32' });
const KV_CACHE_WRITE = kernel({ shader: 'attention_cached', entry: 'kv_cache_write', uniform: ATTN_CACHED_UNIFORM, storage: ['read', 'rw', 'rw'], constants: { WG } });
const ATTN_CACHED = kernel({
  shader: 'attention_cached',
  entry: 'attention_cached',
  uniform: ATTN_CACHED_UNIFORM,
  storage: ['read', 'rw', 'rw', 'read', 'rw', 'rw'],
  constants: { WG },
});
/** kv_cache_write + attention_cached for one new position (L = 1) in one dispatch. */
const ATTN_DECODE = kernel({ ...ATTN_CACHED, entry: 'attention_decode' });

/** qkv (B·L, 3D), caches (B, Smax, D) → B, L, Smax, H, D, Dh. */
function cachedDims(qkv: Tensor, kCache: Tensor, nHead: number) {
  const [B, Smax, D] = kCache.shape;
  const L = B > 0 ? qkv.shape[0] / B : 0;
  return { B, L, Smax, H: nHead, D, Dh: D / nHead };
}

/**
 * Writes the new positions' k, v into kCache / vCache and attends from their q to the cached keys
 * j ≤ position under attnMask → out (B·L, D) f32.
 */
export const attentionCached: Op<AttentionCachedArgs, Tensor> = defineOp({
  name: 'attentionCached',
  kernels: [KV_CACHE_WRITE, ATTN_CACHED, ATTN_DECODE],
  check({ qkv, kCache, vCache, attnMask, start, nHead }) {
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
    checkHeadWidth(D, nHead);
  },
  cpu({ qkv, kCache, vCache, attnMask, start, nHead }) {
    const dims = { ...cachedDims(qkv, kCache, nHead), start };
    const out = attentionCachedRef(cpu(qkv).data, cpu(kCache).data, cpu(vCache).data, cpu(attnMask).data, dims);
    return new CpuTensor(out, [dims.B * dims.L, dims.D], 'f32');
  },
  webgpu({ qkv, kCache, vCache, attnMask, start, nHead }, be) {
    const { B, L, Smax, H, D, Dh } = cachedDims(qkv, kCache, nHead);
    const out = be.empty([B * L, D]);
    const scratch = be.empty([B, H, L, Smax]); // (B,H,L,Smax) f32 softmax rows
    const rows = B * H * L;
    const total = B * L * D;
    const u = { L, Smax, H, D, start, scale: 1 / Math.sqrt(Dh), rows, total };
    const bufs = [gpu(qkv), gpu(kCache), gpu(vCache), gpu(attnMask), gpu(out), gpu(scratch)];
    if (L === 1) {
      // Decode: cache write and attention in one dispatch (see attention_decode's header).
      be.rt.dispatch(ATTN_DECODE, bufs, u, [groups(rows, WG)]);
    } else {
      be.rt.dispatch(KV_CACHE_WRITE, bufs.slice(0, 3), u, [groups(total, WG)]);
      be.rt.dispatch(ATTN_CACHED, bufs, u, [groups(rows, WG)]);
    }
    be.dispose(scratch);
    return out;
  },
});
