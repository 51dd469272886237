// Causal grouped-query attention over full sequences and its backward, flash-style: the forward
// saves a logsumexp per query row, not the (B, H, S, S) probabilities, and the backward recomputes
// them. Math: shaders/gqa_attention.wgsl and gqa_attention_backward.wgsl; float64 reference:
// src/reference/seq/gqa.ts (gqaAttentionRef, gqaAttentionBackwardRef) and gqaLse.ts.
//
// Limits: head width Dh ≤ 256 (registers and workgroup tiles); no limit on S from the kernels
// (nothing S × S is stored; workgroup memory holds tiles of ≤ 16 keys); the tensors themselves must
// each fit one storage binding (q: B·S·H·Dh·4 bytes).
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import type { KernelSpec } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { type FieldsOf, uniformLayout } from '../gpu/uniforms.ts';
import { gqaAttentionBackwardRef, gqaAttentionRef, type GqaDims } from '../reference/seq/gqa.ts';
import { gqaLogsumexpRef } from '../reference/seq/gqaLse.ts';
import { benchInputs, randomTensor } from './benchInputs.ts';
import { defineOp, type Op } from './op.ts';

export interface GqaAttentionArgs {
  q: Tensor; // (B·S, H·Dh) f32, query rows (RoPE and q-norm already applied)
  k: Tensor; // (B·S, Hkv·Dh) f32
  v: Tensor; // (B·S, Hkv·Dh) f32
  attnMask: Tensor; // (B, S) f32, 1 = real token
  nHead: number; // H query heads
  nKvHead: number; // Hkv key/value heads; query head h reads kv head ⌊h / (H/Hkv)⌋
  scale?: number; // scores are (q·k)·scale; default 1/√Dh
}

export interface GqaAttentionResult {
  out: Tensor; // (B·S, H·Dh) f32; 0 for a query that sees no key
  lse: Tensor; // (B, H, S) f32, logsumexp of each query's visible scores (0 where none), for the backward
}

export interface GqaAttentionBackwardArgs extends GqaAttentionArgs {
  gradOut: Tensor; // (B·S, H·Dh) f32
  out: Tensor; // (B·S, H·Dh) f32, the forward's output on the same inputs
  lse: Tensor; // (B, H, S) f32, the forward's lse
}

export interface GqaAttentionGrads {
  gradQ: Tensor; // (B·S, H·Dh) f32
  gradK: Tensor; // (B·S, Hkv·Dh) f32, summed over the query heads sharing each kv head
  gradV: Tensor; // (B·S, Hkv·Dh) f32, likewise
}

/** The largest head width the kernels take. */
export const GQA_MAX_DH = 256;

export interface GqaShape {
  B: number;
  S: number;
  H: number;
  Hkv: number;
  Dh: number;
  scale: number;
}

/** Checks q, k, v against each other and the heads; returns the sizes. Throws naming the argument. */
export function checkGqaRows(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  rows: number,
  kvRows: number,
  nHead: number,
  nKvHead: number,
  scale: number | undefined,
): { H: number; Hkv: number; Dh: number; scale: number } {
  for (const [name, n] of [
    ['nHead', nHead],
    ['nKvHead', nKvHead],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${n}`);
  }
  if (nHead % nKvHead !== 0) throw new Error(`nHead ${nHead} is not a multiple of nKvHead ${nKvHead}`);
  if (q.shape.length !== 2 || q.shape[1] % nHead !== 0 || q.shape[1] === 0) throw new Error(`q: expected (${rows}, H·Dh) with H = ${nHead}, got [${q.shape.join(', ')}]`);
  const Dh = q.shape[1] / nHead;
  if (Dh > GQA_MAX_DH) throw new Error(`q: head width ${Dh} exceeds the attention kernels' limit of ${GQA_MAX_DH}`);
  expectShape('q', q, [rows, nHead * Dh]);
  expectShape('k', k, [kvRows, nKvHead * Dh]);
  expectShape('v', v, [kvRows, nKvHead * Dh]);
  for (const [name, t] of [
    ['q', q],
    ['k', k],
    ['v', v],
  ] as const) {
    expectDType(name, t, 'f32');
  }
  const s = scale ?? 1 / Math.sqrt(Dh);
  if (!(Number.isFinite(s) && s > 0)) throw new Error(`scale must be a finite number > 0, got ${scale}`);
  return { H: nHead, Hkv: nKvHead, Dh, scale: s };
}

function checkGqa(a: GqaAttentionArgs): GqaShape {
  if (a.attnMask.shape.length !== 2) throw new Error(`attnMask: expected (B, S), got [${a.attnMask.shape.join(', ')}]`);
  expectDType('attnMask', a.attnMask, 'f32');
  const [B, S] = a.attnMask.shape;
  return { B, S, ...checkGqaRows(a.q, a.k, a.v, B * S, B * S, a.nHead, a.nKvHead, a.scale) };
}

/** The sizes of checked arguments (the bodies run after the check). */
function gqaShape(a: GqaAttentionArgs): GqaShape {
  const [B, S] = a.attnMask.shape;
  const Dh = a.q.shape[1] / a.nHead;
  return { B, S, H: a.nHead, Hkv: a.nKvHead, Dh, scale: a.scale ?? 1 / Math.sqrt(Dh) };
}

/** The float64 reference's dimensions. */
export const refDims = (s: GqaShape): GqaDims => ({ B: s.B, S: s.S, nHead: s.H, nKvHead: s.Hkv, headDim: s.Dh, scale: s.scale });

// ---- kernels: one pipeline per head width (its registers and tiles are sized by it) ----

/**
 * Workgroup sizes by adapter kind: 16 query (or key) rows × 4 lanes = 64 threads; up to 15 KiB of
 * workgroup memory on a GPU (under WebGPU's 16 KiB minimum), 3 KiB on a CPU implementation of
 * WebGPU, because SwiftShader compiles the zero-initialisation of workgroup memory word by word
 * (a 3 840-word forward took ~10 s to build, a 768-word one ~1 s). One row a workgroup (a single
 * SIMD group there) measured no faster on SwiftShader: the tiles' reuse across 16 rows paid more.
 */
const SIZES = { gpu: { TQ: 16, words: 3840 }, cpu: { TQ: 16, words: 768 } } as const;

export interface GqaLayout {
  DH: number; // head width
  NPL: number; // dims per lane, ⌈DH/4⌉
  DHP: number; // padded row width, 4·NPL
  TQ: number; // query (key) rows per workgroup
  WG: number; // threads per workgroup, 4·TQ
  TK: number; // keys per tile of the forward
  TB: number; // rows per tile of the backward
}

/** The kernels' sizes for a head width on an adapter kind: registers per lane, rows per workgroup, tiles. */
export function gqaLayout(Dh: number, cpuAdapter = false): GqaLayout {
  const NPL = Math.ceil(Dh / 4);
  const DHP = 4 * NPL;
  const { TQ, words } = SIZES[cpuAdapter ? 'cpu' : 'gpu'];
  const WG = 4 * TQ;
  const tile = (perKey: number) => Math.max(1, Math.min(16, Math.floor(words / perKey)));
  return { DH: Dh, NPL, DHP, TQ, WG, TK: tile(2 * DHP + WG + 1), TB: tile(2 * DHP + 2 * WG + 2) };
}

export const GQA_FORWARD_UNIFORM = uniformLayout('Params', { L: 'u32', Skv: 'u32', start: 'u32', H: 'u32', Hkv: 'u32', scale: 'f32', tiles: 'u32', total: 'u32' });
const BACKWARD_UNIFORM = uniformLayout('Params', { S: 'u32', H: 'u32', Hkv: 'u32', scale: 'f32', tiles: 'u32', total: 'u32', lo: 'u32', hi: 'u32', first: 'u32' });

/**
 * Query rows (over all heads of a group) one backward thread sums in one pass: the host splits the
 * summed index into passes of this many (lavapipe returned zeros from threads that looped over
 * ~1 660 rows; a GPU's watchdog likewise ends a long dispatch).
 */
export function gqaPassRows(cpuAdapter: boolean): number {
  return cpuAdapter ? 512 : 4096;
}

/** [from, to) ranges of `chunk` covering 0…n−1, in order. */
export function gqaPasses(n: number, chunk: number): [number, number][] {
  const out: [number, number][] = [];
  for (let from = 0; from < n; from += chunk) out.push([from, Math.min(n, from + chunk)]);
  return out;
}

const specs = new Map<string, KernelSpec>();
function memo<F extends string>(key: string, make: () => KernelSpec<F>): KernelSpec<F> {
  if (!specs.has(key)) specs.set(key, make());
  return specs.get(key) as KernelSpec<F>;
}

/** The forward kernel for head width Dh (also the KV-cached prefill's). */
export function gqaForwardKernel(Dh: number, cpuAdapter: boolean): KernelSpec<FieldsOf<typeof GQA_FORWARD_UNIFORM>> {
  const { DH, NPL, DHP, TQ, WG, TK } = gqaLayout(Dh, cpuAdapter);
  return memo(`fwd${Dh}-${WG}-${TK}`, () => ({
    shader: 'gqa_attention',
    entry: 'gqa_attention_forward',
    uniform: GQA_FORWARD_UNIFORM,
    storage: ['read', 'read', 'read', 'read', 'rw', 'rw'],
    constants: { DH, NPL, DHP, TQ, WG, TK },
  }));
}

function backwardKernel(entry: 'gqa_delta' | 'gqa_dq' | 'gqa_dkv', Dh: number, cpuAdapter: boolean): KernelSpec<FieldsOf<typeof BACKWARD_UNIFORM>> {
  const { DH, NPL, DHP, TQ, WG, TB } = gqaLayout(Dh, cpuAdapter);
  const storage: ('read' | 'rw')[] =
    entry === 'gqa_delta' ? ['read', 'read', 'read', 'rw'] : entry === 'gqa_dq' ? [...Array(6).fill('read'), 'rw'] : [...Array(6).fill('read'), 'rw', 'rw'];
  return memo(`${entry}${Dh}-${WG}-${TB}`, () => ({ shader: 'gqa_attention_backward', entry, uniform: BACKWARD_UNIFORM, storage, constants: { DH, NPL, DHP, TQ, WG, TB } }));
}

/** A grid of n workgroups, folded into 2-D past 65535 (the kernels read wid.x + wid.y·nwg.x). */
export function workgroupGrid(n: number): [number, number] {
  return n <= 65535 ? [n, 1] : [65535, Math.ceil(n / 65535)];
}

/**
 * out = softmax over visible keys of (q·k)·scale, times v, per query head (GQA: heads share kv
 * heads in groups); lse saved for gqaAttentionBackward.
 */
export const gqaAttention: Op<GqaAttentionArgs, GqaAttentionResult> = defineOp({
  name: 'gqaAttention',
  kernels: [],
  check: (a) => void checkGqa(a),
  cpu(a) {
    const s = gqaShape(a);
    const dims = refDims(s);
    const q = cpu(a.q).data;
    const k = cpu(a.k).data;
    const mask = cpu(a.attnMask).data;
    const { out } = gqaAttentionRef(q, k, cpu(a.v).data, mask, dims);
    const lse = gqaLogsumexpRef(q, k, mask, dims);
    return { out: new CpuTensor(out, [s.B * s.S, s.H * s.Dh], 'f32'), lse: new CpuTensor(lse, [s.B, s.H, s.S], 'f32') };
  },
  webgpu(a, be) {
    const { B, S, H, Hkv, Dh, scale } = gqaShape(a);
    const out = be.empty([B * S, H * Dh]);
    const lse = be.empty([B, H, S]);
    const tiles = Math.ceil(S / gqaLayout(Dh, be.rt.cpuAdapter).TQ);
    const total = B * H * tiles;
    if (total > 0) {
      const u = { L: S, Skv: S, start: 0, H, Hkv, scale, tiles, total };
      be.rt.dispatch(gqaForwardKernel(Dh, be.rt.cpuAdapter), [gpu(a.q), gpu(a.k), gpu(a.v), gpu(a.attnMask), gpu(out), gpu(lse)], u, workgroupGrid(total));
    }
    return { out, lse };
  },
  bench: { label: 'gqaAttention (fwd)', run: (be, x) => gqaAttention(be, gqaBenchInputs(be, x.mask.shape[0])) },
});

/** gradQ, gradK, gradV of Σ gradOut·out, recomputing the probabilities from q, k and the saved lse. */
export const gqaAttentionBackward: Op<GqaAttentionBackwardArgs, GqaAttentionGrads> = defineOp({
  name: 'gqaAttentionBackward',
  kernels: [],
  check(a) {
    const { B, S, H, Dh } = checkGqa(a);
    expectShape('gradOut', a.gradOut, [B * S, H * Dh]);
    expectShape('out', a.out, [B * S, H * Dh]);
    expectShape('lse', a.lse, [B, H, S]);
  },
  cpu(a) {
    // The float64 body recomputes the probabilities exactly; out and lse are the GPU's shortcut.
    const s = gqaShape(a);
    const dims = refDims(s);
    const q = cpu(a.q).data;
    const k = cpu(a.k).data;
    const v = cpu(a.v).data;
    const { probs } = gqaAttentionRef(q, k, v, cpu(a.attnMask).data, dims);
    const g = gqaAttentionBackwardRef(cpu(a.gradOut).data, q, k, v, probs, dims);
    const kvShape = [s.B * s.S, s.Hkv * s.Dh];
    return { gradQ: new CpuTensor(g.gradQ, [s.B * s.S, s.H * s.Dh], 'f32'), gradK: new CpuTensor(g.gradK, kvShape, 'f32'), gradV: new CpuTensor(g.gradV, kvShape, 'f32') };
  },
  webgpu(a, be) {
    const { B, S, H, Hkv, Dh, scale } = gqaShape(a);
    const gradQ = be.empty([B * S, H * Dh]);
    const gradK = be.empty([B * S, Hkv * Dh]);
    const gradV = be.empty([B * S, Hkv * Dh]);
    if (B * S === 0) return { gradQ, gradK, gradV };
    const stats = be.empty([B, H, S, 2]); // [lse, δ] per query row
    const onCpu = be.rt.cpuAdapter;
    const { TQ, WG } = gqaLayout(Dh, onCpu);
    const tiles = Math.ceil(S / TQ);
    const rows = B * H * S;
    be.rt.dispatch(
      backwardKernel('gqa_delta', Dh, onCpu),
      [gpu(a.gradOut), gpu(a.out), gpu(a.lse), gpu(stats)],
      { S, H, Hkv, scale, tiles, total: rows, lo: 0, hi: S, first: 1 },
      elementGrid(rows, WG),
    );
    const common = [gpu(a.gradOut), gpu(a.q), gpu(a.k), gpu(a.v), gpu(a.attnMask), gpu(stats)];
    const passRows = gqaPassRows(onCpu);
    const nq = B * H * tiles;
    gqaPasses(S, passRows).forEach(([lo, hi], p) => {
      be.rt.dispatch(backwardKernel('gqa_dq', Dh, onCpu), [...common, gpu(gradQ)], { S, H, Hkv, scale, tiles, total: nq, lo, hi, first: p === 0 ? 1 : 0 }, workgroupGrid(nq));
    });
    // dK and dV sum over the queries of every head in the group: passes of passRows / g queries.
    const nk = B * Hkv * tiles;
    gqaPasses(S, Math.max(1, Math.floor(passRows / (H / Hkv)))).forEach(([lo, hi], p) => {
      be.rt.dispatch(
        backwardKernel('gqa_dkv', Dh, onCpu),
        [...common, gpu(gradK), gpu(gradV)],
        { S, H, Hkv, scale, tiles, total: nk, lo, hi, first: p === 0 ? 1 : 0 },
        workgroupGrid(nk),
      );
    });
    // Later users of the pooled buffer are recorded after these dispatches, so they run after them.
    be.dispose(stats);
    return { gradQ, gradK, gradV };
  },
  bench: {
    label: 'gqaAttention (bwd)',
    run(be, x) {
      const a = gqaBenchInputs(be, x.mask.shape[0]);
      const f = benchInputs(be, `gqa-fwd-${x.mask.shape[0]}`, () => gqaAttention(be, a));
      return gqaAttentionBackward(be, { ...a, out: f.out, lse: f.lse });
    },
  },
});

/** The bench shape: B sequences (the batch's) of 64 positions, 4 query heads over 2 kv heads of width 64, left-padded. */
function gqaBenchInputs(be: Parameters<typeof benchInputs>[0], B: number) {
  return benchInputs(be, `gqa-${B}`, (be, r) => {
    const S = 64,
      H = 4,
      Hkv = 2,
      Dh = 64;
    const mask = new Float64Array(B * S);
    for (let b = 0; b < B; b++) for (let i = r.int(0, 16); i < S; i++) mask[b * S + i] = 1;
    return {
      q: randomTensor(be, r, [B * S, H * Dh]),
      k: randomTensor(be, r, [B * S, Hkv * Dh]),
      v: randomTensor(be, r, [B * S, Hkv * Dh]),
      gradOut: randomTensor(be, r, [B * S, H * Dh]),
      attnMask: be.tensor(mask, [B, S]),
      nHead: H,
      nKvHead: Hkv,
    };
  });
}
