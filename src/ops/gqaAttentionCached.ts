// KV-cached grouped-query attention for rollout: L new positions [start, start + L) per sequence
// (prefill: L = prompt width; decode: L = 1) write their k, v into the caches and attend to every
// cached key up to their position. Math: shaders/gqa_attention_cached.wgsl; float64 reference:
// src/reference/seq/gqa.ts (gqaAttentionCachedRef).
//
// Decode (L = 1) is one dispatch (cache write and attention) of a workgroup per (sequence, query
// head). Prefill (L > 1) is the copy and then gqaAttention's forward kernel run on the caches, so
// prefill outputs equal gqaAttention's bit for bit and decode outputs equal them to f32 rounding.
// Limits: head width ≤ 256 (GQA_MAX_DH); the cache length only by the size of a storage binding.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { gqaAttentionCachedRef } from '../reference/seq/gqa.ts';
import { benchInputs, randomTensor } from './benchInputs.ts';
import { checkGqaRows, gqaForwardKernel, gqaLayout, workgroupGrid } from './gqaAttention.ts';
import { defineOp, type Op } from './op.ts';

export interface GqaAttentionCachedArgs {
  q: Tensor; // (B·L, H·Dh) f32, queries of the new positions
  k: Tensor; // (B·L, Hkv·Dh) f32, their keys (written into kCache)
  v: Tensor; // (B·L, Hkv·Dh) f32, their values (written into vCache)
  kCache: Tensor; // (B, Smax, Hkv·Dh) f32, in place: rows [start, start + L) are overwritten
  vCache: Tensor; // (B, Smax, Hkv·Dh) f32, likewise
  attnMask: Tensor; // (B, Smax) f32, 1 = real token (the new positions' entries already set)
  start: number; // absolute position of the first new row
  nHead: number;
  nKvHead: number;
  scale?: number; // default 1/√Dh
}

const WG = 64;
const CACHED_UNIFORM = uniformLayout('Params', { L: 'u32', Smax: 'u32', start: 'u32', H: 'u32', Hkv: 'u32', Dh: 'u32', scale: 'f32', total: 'u32' });
const KV_WRITE = kernel({ shader: 'gqa_attention_cached', entry: 'kv_write', uniform: CACHED_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG } });
const DECODE_STORAGE = ['read', 'read', 'rw', 'rw', 'read', 'read', 'rw'] as const;
// A workgroup per (sequence, head): 64 threads on a GPU; 4 on a CPU implementation of WebGPU (one
// SIMD group, whose barriers cost no coroutine switch), each accumulating 64 output dims, while
// the cache is short enough (decodeOnFourThreads). Mesa's llvmpipe (lavapipe, wgpu's software
// Vulkan) ends the loops of an invocation after 65 535 iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS,
// shared by every loop of a shader), which then gives wrong outputs: 4 threads run ~(2·Dh + 1)/4
// iterations per cached key (its dot product and its share of the weighted values), past the limit
// at ~1 000 keys of width 128; 64 threads run 16 times fewer.
const DECODE_GPU = kernel({ shader: 'gqa_attention_cached', entry: 'gqa_decode', uniform: CACHED_UNIFORM, storage: DECODE_STORAGE, constants: { WG: 64, DPT: 4 } });
const DECODE_CPU = kernel({ shader: 'gqa_attention_cached', entry: 'gqa_decode', uniform: CACHED_UNIFORM, storage: DECODE_STORAGE, constants: { WG: 4, DPT: 64 } }, 'cpu');
/** Loop iterations one invocation of DECODE_CPU may run: llvmpipe's 65 535, less a margin. */
const DECODE_CPU_MAX_ITERATIONS = 60_000;

/** Whether a CPU adapter's 4-thread decode stays under llvmpipe's loop limit for `keys` cached keys of width Dh. */
export function decodeOnFourThreads(keys: number, Dh: number): boolean {
  const perKey = (2 * Dh + 1) / 4; // the key's dot product, its weight, its share of the output dims
  const perChunk = 64 + 16; // the DPT output loop and the workgroup reductions, per 256 keys
  return keys * perKey + Math.ceil(keys / 256) * perChunk + Dh / 2 <= DECODE_CPU_MAX_ITERATIONS;
}

interface CachedShape {
  B: number;
  L: number;
  Smax: number;
  H: number;
  Hkv: number;
  Dh: number;
  scale: number;
}

function checkCached(a: GqaAttentionCachedArgs): CachedShape {
  if (a.kCache.shape.length !== 3) throw new Error(`kCache: expected (B, Smax, Hkv·Dh), got [${a.kCache.shape.join(', ')}]`);
  const [B, Smax, kvW] = a.kCache.shape;
  expectShape('vCache', a.vCache, [B, Smax, kvW]);
  expectShape('attnMask', a.attnMask, [B, Smax]);
  for (const [name, t] of [
    ['kCache', a.kCache],
    ['vCache', a.vCache],
    ['attnMask', a.attnMask],
  ] as const) {
    expectDType(name, t, 'f32');
  }
  if (B === 0 || a.q.shape.length !== 2 || a.q.shape[0] % B !== 0) throw new Error(`q: expected (B·L, H·Dh) with B = ${B}, got [${a.q.shape.join(', ')}]`);
  const L = a.q.shape[0] / B;
  const s = checkGqaRows(a.q, a.k, a.v, B * L, B * L, a.nHead, a.nKvHead, a.scale);
  if (s.Hkv * s.Dh !== kvW) throw new Error(`kCache: rows of ${kvW} do not hold ${s.Hkv} kv heads of width ${s.Dh}`);
  if (!Number.isInteger(a.start) || a.start < 0 || a.start + L > Smax) throw new Error(`gqaAttentionCached: positions [${a.start}, ${a.start + L}) outside the cache of ${Smax}`);
  return { B, L, Smax, ...s };
}

function cachedShape(a: GqaAttentionCachedArgs): CachedShape {
  const [B, Smax] = a.kCache.shape;
  const Dh = a.q.shape[1] / a.nHead;
  return { B, L: a.q.shape[0] / B, Smax, H: a.nHead, Hkv: a.nKvHead, Dh, scale: a.scale ?? 1 / Math.sqrt(Dh) };
}

/** Writes the new k, v into the caches and returns out (B·L, H·Dh) f32; a query with no visible key gives 0. */
export const gqaAttentionCached: Op<GqaAttentionCachedArgs, Tensor> = defineOp({
  name: 'gqaAttentionCached',
  kernels: [KV_WRITE, DECODE_GPU, DECODE_CPU],
  check: (a) => void checkCached(a),
  cpu(a) {
    const { B, L, Smax, H, Hkv, Dh, scale } = cachedShape(a);
    const out = gqaAttentionCachedRef(cpu(a.q).data, cpu(a.k).data, cpu(a.v).data, cpu(a.kCache).data, cpu(a.vCache).data, cpu(a.attnMask).data, {
      B,
      L,
      Smax,
      nHead: H,
      nKvHead: Hkv,
      headDim: Dh,
      scale,
      start: a.start,
    });
    return new CpuTensor(out, [B * L, H * Dh], 'f32');
  },
  webgpu(a, be) {
    const { B, L, Smax, H, Hkv, Dh, scale } = cachedShape(a);
    const out = be.empty([B * L, H * Dh]);
    if (L === 0) return out;
    const base = { L, Smax, start: a.start, H, Hkv, Dh, scale };
    if (L === 1) {
      const bufs = [gpu(a.k), gpu(a.v), gpu(a.kCache), gpu(a.vCache), gpu(a.q), gpu(a.attnMask), gpu(out)];
      const fourThreads = be.rt.cpuAdapter && decodeOnFourThreads(a.start + 1, Dh);
      be.rt.dispatch(fourThreads ? DECODE_CPU : DECODE_GPU, bufs, { ...base, total: B * H }, workgroupGrid(B * H));
      return out;
    }
    const copies = B * L * Hkv * Dh;
    be.rt.dispatch(KV_WRITE, [gpu(a.k), gpu(a.v), gpu(a.kCache), gpu(a.vCache)], { ...base, total: copies }, elementGrid(copies, WG));
    const lse = be.empty([B, H, L]); // the forward kernel's second output, not needed here
    const tiles = Math.ceil(L / gqaLayout(Dh, be.rt.cpuAdapter).TQ);
    const total = B * H * tiles;
    const u = { L, Skv: Smax, start: a.start, H, Hkv, scale, tiles, total };
    be.rt.dispatch(gqaForwardKernel(Dh, be.rt.cpuAdapter), [gpu(a.q), gpu(a.kCache), gpu(a.vCache), gpu(a.attnMask), gpu(out), gpu(lse)], u, workgroupGrid(total));
    be.dispose(lse);
    return out;
  },
  bench: {
    // One decode step of one layer at SmolLM2's heads (9 over 3, width 64), the batch's B rows, 64 cached positions.
    label: 'gqaAttentionCached (decode)',
    run(be, x) {
      const B = x.mask.shape[0];
      const a = benchInputs(be, `gqa-decode-${B}`, (be, r) => {
        const Smax = 64,
          H = 9,
          Hkv = 3,
          Dh = 64;
        return {
          q: randomTensor(be, r, [B, H * Dh]),
          k: randomTensor(be, r, [B, Hkv * Dh]),
          v: randomTensor(be, r, [B, Hkv * Dh]),
          kCache: randomTensor(be, r, [B, Smax, Hkv * Dh]),
          vCache: randomTensor(be, r, [B, Smax, Hkv * Dh]),
          attnMask: be.tensor(new Float64Array(B * Smax).fill(1), [B, Smax]),
          start: Smax - 1,
          nHead: H,
          nKvHead: Hkv,
        };
      });
      return gqaAttentionCached(be, a);
    },
  },
});
