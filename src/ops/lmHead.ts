// The LM head over a large vocabulary (49 152 – 151 936 tokens) without the (N, V) logits: the
// temperature log-probability of each row's token and the entropy, from the final hidden states
// and the head weight, block by block (rows × vocabulary columns) with an online softmax; the
// backward recomputes each block. The head W (V, D) — the tied embedding or lm_head — comes as
// row parts (V_p, D) in vocabulary order, each within one storage binding (Qwen3-0.6B's
// 151 936 × 1 024 f32 table is 622 MB, past a 128 MiB–2 GiB binding). lmHeadLogits gives the
// (B, V) logits of a few rows for sampling.
// Math: shaders/lm_head.wgsl; float64 reference: src/reference/nn/chunkedLogprobs.ts, over parts
// src/reference/nn/headParts.ts.
//
// Each block's logits x = h·W_cᵀ come from the matmul op, so a head in another
// weight dtype needs only that dtype's matmul: the statistics and gradient kernels read f32 logits.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import type { Backend } from '../backend/backend.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { type HeadPartData, headPartsBackwardRef, headPartsLogprobsRef } from '../reference/nn/headParts.ts';
import { matmulRef } from '../reference/nn/matmul.ts';
import { benchInputs, randomTensor } from './benchInputs.ts';
import { axpy, fill } from './elementwise.ts';
import { workgroupGrid } from './gqaAttention.ts';
import { matmul, matmulBackward } from './matmul.ts';
import { defineOp, type Op } from './op.ts';

export interface LmHeadArgs {
  hidden: Tensor; // (N, D) f32, final (normed) hidden states of the scored rows
  head: readonly Tensor[]; // row parts (V_p, D) f32 of the head W (V, D), in vocabulary order
  tokens: Tensor; // (N) i32, each row's token in [0, V) (clamped into it)
  temperature: number; // z = h·Wᵀ / T
  /** Rows and vocabulary columns of one logits block (default: every row, ≤ 8 Mi logits a block). */
  chunks?: { tokenChunk?: number; vocabChunk?: number };
}

export interface LmHeadResult {
  logprobs: Tensor; // (N) f32, z_tok − logsumexp z
  entropy: Tensor; // (N) f32, logsumexp z − Σ softmax(z)·z
  /**
   * (N, 4) f32 [m, logS, meanD, 1 − p_tok] for the backward, with lse = m/T + logS and
   * Σ p·z = m/T + meanD: m is the row's max logit on WebGPU (f32 precision at large logits), 0 on
   * the float64 backend.
   */
  saved: Tensor;
}

export interface LmHeadBackwardArgs extends LmHeadArgs {
  saved: Tensor; // (N, 4) f32, lmHeadLogprobs's
  gradLogprobs: Tensor; // (N) f32
  gradEntropy?: Tensor | null; // (N) f32; none = 0
  /** Accumulated (+=) gradients of the head parts (same shapes) for a trainable head; null or absent when frozen. */
  gradHead?: readonly Tensor[] | null;
}

export interface LmHeadLogitsArgs {
  hidden: Tensor; // (B, D) f32
  head: readonly Tensor[]; // row parts (V_p, D) f32, as above
}

/** Logits a block may hold by default: 8 Mi floats (32 MiB), whatever the vocabulary. */
export const HEAD_BLOCK_LOGITS = 8 << 20;

// ---- arguments and the block plan ----

interface HeadShape {
  N: number;
  D: number;
  V: number;
  rows: number[]; // rows of each part
}

function headShape(hidden: Tensor, head: readonly Tensor[]): HeadShape {
  const rows = head.map((p) => p.shape[0]);
  return { N: hidden.shape[0], D: hidden.shape[1], V: rows.reduce((a, b) => a + b, 0), rows };
}

function checkHead(hidden: Tensor, head: readonly Tensor[], rowsName = 'N'): HeadShape {
  if (hidden.shape.length !== 2 || hidden.shape[1] < 1) throw new Error(`hidden: expected (${rowsName}, D), got [${hidden.shape.join(', ')}]`);
  expectDType('hidden', hidden, 'f32');
  const D = hidden.shape[1];
  if (!Array.isArray(head) || head.length === 0) throw new Error('head: expected a list of one or more row parts (V_p, D)');
  head.forEach((p, i) => {
    if (p.shape.length !== 2 || p.shape[0] < 1 || p.shape[1] !== D) throw new Error(`head[${i}]: expected (V_p, ${D}) with V_p ≥ 1, got [${p.shape.join(', ')}]`);
    expectDType(`head[${i}]`, p, 'f32');
  });
  return headShape(hidden, head);
}

/** Rows a block boundary must be a multiple of, so that views of h and W start 64 floats apart (256-byte binding offsets). */
const rowAlign = (D: number) => 64 / gcd(D, 64);
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

function checkArgs(a: LmHeadArgs): HeadShape {
  const s = checkHead(a.hidden, a.head);
  expectShape('tokens', a.tokens, [s.N]);
  expectDType('tokens', a.tokens, 'i32');
  if (!(Number.isFinite(a.temperature) && a.temperature > 0)) throw new Error(`temperature must be a finite number > 0, got ${a.temperature}`);
  const align = rowAlign(s.D);
  for (const key of ['tokenChunk', 'vocabChunk'] as const) {
    const c = a.chunks?.[key];
    if (c !== undefined && !(Number.isInteger(c) && c >= 1 && c % align === 0)) {
      throw new Error(`chunks.${key} must be a positive multiple of ${align} (rows whose D = ${s.D} floats keep views 256-byte aligned), got ${c}`);
    }
  }
  return s;
}

interface Block {
  part: number;
  lo: number; // first row of the part
  width: number; // rows of the part (vocabulary columns of the block)
  v0: number; // first vocabulary id
}

/** Rows per token chunk and the vocabulary blocks (within parts, in vocabulary order) of a call. */
function blockPlan(s: HeadShape, chunks: LmHeadArgs['chunks']): { tokenChunk: number; blocks: Block[] } {
  const align = rowAlign(s.D);
  const floorTo = (x: number) => Math.max(align, Math.floor(x / align) * align);
  // Every row in one chunk unless that leaves blocks narrower than 1 024 vocabulary columns.
  const tokenChunk = chunks?.tokenChunk ?? (s.N * 1024 <= HEAD_BLOCK_LOGITS ? Math.max(s.N, 1) : floorTo(HEAD_BLOCK_LOGITS / 1024));
  const vocabChunk = chunks?.vocabChunk ?? floorTo(HEAD_BLOCK_LOGITS / Math.min(tokenChunk, Math.max(s.N, 1)));
  const blocks: Block[] = [];
  let v0 = 0;
  s.rows.forEach((rows, part) => {
    for (let lo = 0; lo < rows; lo += vocabChunk) blocks.push({ part, lo, width: Math.min(vocabChunk, rows - lo), v0: v0 + lo });
    v0 += rows;
  });
  return { tokenChunk, blocks };
}

/** The float64 reference's chunk sizes for a call (its chunking only changes rounding). */
function refChunks(s: HeadShape, chunks: LmHeadArgs['chunks']) {
  const plan = blockPlan(s, chunks);
  return { tokenChunk: plan.tokenChunk, vocabChunk: Math.max(...plan.blocks.map((b) => b.width)) };
}

const parts = (head: readonly Tensor[]): HeadPartData[] => head.map((p) => ({ data: cpu(p).data, rows: p.shape[0] }));

/** Views of rows [lo, lo + n) of a (rows, D) tensor (the tensor itself when that is all of it). */
function rowsView(be: Backend, t: Tensor, lo: number, n: number): Tensor {
  const [rows, D] = t.shape;
  return lo === 0 && n === rows ? t : be.view(t, lo * D, [n, D]);
}

// ---- kernels ----

const WG = 64;
const HEAD_UNIFORM = uniformLayout('Params', {
  Vc: 'u32',
  v0: 'u32',
  n0: 'u32',
  V: 'u32',
  temperature: 'f32',
  first: 'u32',
  last: 'u32',
  has_grad_entropy: 'u32',
  total: 'u32',
});
const HEAD_STATS = kernel({ shader: 'lm_head', entry: 'head_stats', uniform: HEAD_UNIFORM, storage: ['read', 'read', 'rw', 'rw', 'rw', 'rw'], constants: { WG } });
const HEAD_GRAD = kernel({ shader: 'lm_head', entry: 'head_grad', uniform: HEAD_UNIFORM, storage: ['rw', 'read', 'read', 'read', 'read'], constants: { WG } });
const HEAD_PLACE = kernel({ shader: 'lm_head', entry: 'head_place', uniform: HEAD_UNIFORM, storage: ['read', 'rw'], constants: { WG } });

const uniform = (u: Partial<Record<'Vc' | 'v0' | 'n0' | 'V' | 'temperature' | 'first' | 'last' | 'has_grad_entropy' | 'total', number>>) => ({
  Vc: 0,
  v0: 0,
  n0: 0,
  V: 0,
  temperature: 1,
  first: 0,
  last: 0,
  has_grad_entropy: 0,
  total: 0,
  ...u,
});

// ---- the ops ----

/** logprobs, entropy and the saved statistics of z = h·Wᵀ/T, block by block. */
export const lmHeadLogprobs: Op<LmHeadArgs, LmHeadResult> = defineOp({
  name: 'lmHeadLogprobs',
  kernels: [HEAD_STATS],
  check: (a) => void checkArgs(a),
  cpu(a) {
    const s = headShape(a.hidden, a.head);
    const r = headPartsLogprobsRef(cpu(a.hidden).data, parts(a.head), cpu(a.tokens).data, s.N, s.D, a.temperature, refChunks(s, a.chunks));
    const saved = new Float64Array(4 * s.N);
    for (let n = 0; n < s.N; n++) saved.set([0, r.lse[n], r.meanZ[n], -Math.expm1(r.logprobs[n])], 4 * n);
    return { logprobs: new CpuTensor(r.logprobs, [s.N], 'f32'), entropy: new CpuTensor(r.entropy, [s.N], 'f32'), saved: new CpuTensor(saved, [s.N, 4], 'f32') };
  },
  webgpu(a, be) {
    const s = headShape(a.hidden, a.head);
    const logprobs = be.empty([s.N]);
    const entropy = be.empty([s.N]);
    const saved = be.empty([s.N, 4]);
    if (s.N === 0) return { logprobs, entropy, saved };
    const state = be.empty([s.N, 5]); // running [M, s, s1, o, x_tok] per row
    const { tokenChunk, blocks } = blockPlan(s, a.chunks);
    for (let n0 = 0; n0 < s.N; n0 += tokenChunk) {
      const nc = Math.min(tokenChunk, s.N - n0);
      const h = rowsView(be, a.hidden, n0, nc);
      blocks.forEach((blk, i) => {
        const x = matmul(be, { a: h, b: rowsView(be, a.head[blk.part], blk.lo, blk.width), transB: true }); // (nc, width)
        const u = uniform({ Vc: blk.width, v0: blk.v0, n0, V: s.V, temperature: a.temperature, first: i === 0 ? 1 : 0, last: i === blocks.length - 1 ? 1 : 0, total: nc });
        be.rt.dispatch(HEAD_STATS, [gpu(x), gpu(a.tokens), gpu(state), gpu(logprobs), gpu(entropy), gpu(saved)], u, workgroupGrid(nc));
        be.dispose(x);
      });
    }
    be.dispose(state);
    return { logprobs, entropy, saved };
  },
  bench: { label: 'lmHeadLogprobs (fwd)', run: (be, x) => lmHeadLogprobs(be, headBenchInputs(be, x.mask.shape[0])) },
});

/** gradHidden (N, D) of Σ gradLogprobs·logprobs + Σ gradEntropy·entropy; adds the head's gradient into gradHead when given. */
export const lmHeadLogprobsBackward: Op<LmHeadBackwardArgs, Tensor> = defineOp({
  name: 'lmHeadLogprobsBackward',
  kernels: [HEAD_GRAD],
  check(a) {
    const s = checkArgs(a);
    expectShape('saved', a.saved, [s.N, 4]);
    expectShape('gradLogprobs', a.gradLogprobs, [s.N]);
    if (a.gradEntropy) expectShape('gradEntropy', a.gradEntropy, [s.N]);
    if (a.gradHead) {
      if (a.gradHead.length !== a.head.length) throw new Error(`gradHead: ${a.gradHead.length} parts for a head of ${a.head.length}`);
      for (const [i, g] of a.gradHead.entries()) expectShape(`gradHead[${i}]`, g, a.head[i].shape);
    }
  },
  cpu(a) {
    const s = headShape(a.hidden, a.head);
    const sv = cpu(a.saved).data;
    const lse = Float64Array.from({ length: s.N }, (_, n) => sv[4 * n] / a.temperature + sv[4 * n + 1]);
    const meanZ = Float64Array.from({ length: s.N }, (_, n) => sv[4 * n] / a.temperature + sv[4 * n + 2]);
    const g = headPartsBackwardRef(
      cpu(a.hidden).data,
      parts(a.head),
      cpu(a.tokens).data,
      { lse, meanZ },
      cpu(a.gradLogprobs).data,
      a.gradEntropy ? cpu(a.gradEntropy).data : null,
      s.N,
      s.D,
      a.temperature,
      refChunks(s, a.chunks),
    );
    a.gradHead?.forEach((t, i) => {
      const into = cpu(t).data;
      g.gradParts[i].forEach((x, j) => {
        into[j] += x;
      });
    });
    return new CpuTensor(g.gradHidden, [s.N, s.D], 'f32');
  },
  webgpu(a, be) {
    const s = headShape(a.hidden, a.head);
    const gradHidden = be.empty([s.N, s.D]);
    if (s.N === 0) return gradHidden;
    fill(be, { x: gradHidden, value: 0 });
    const { tokenChunk, blocks } = blockPlan(s, a.chunks);
    // Without an entropy gradient its binding gets gradLogprobs (read-only aliasing is allowed; not read).
    const ge = gpu(a.gradEntropy ?? a.gradLogprobs);
    for (let n0 = 0; n0 < s.N; n0 += tokenChunk) {
      const nc = Math.min(tokenChunk, s.N - n0);
      const h = rowsView(be, a.hidden, n0, nc);
      const gh = rowsView(be, gradHidden, n0, nc);
      for (const blk of blocks) {
        const w = rowsView(be, a.head[blk.part], blk.lo, blk.width);
        const x = matmul(be, { a: h, b: w, transB: true }); // (nc, width) logits, then their gradient in place
        const u = uniform({ Vc: blk.width, v0: blk.v0, n0, V: s.V, temperature: a.temperature, has_grad_entropy: a.gradEntropy ? 1 : 0, total: nc * blk.width });
        be.rt.dispatch(HEAD_GRAD, [gpu(x), gpu(a.tokens), gpu(a.saved), gpu(a.gradLogprobs), ge], u, elementGrid(nc * blk.width, WG));
        const gw = a.gradHead ? rowsView(be, a.gradHead[blk.part], blk.lo, blk.width) : null;
        const dh = matmulBackward(be, { gradOut: x, a: h, b: w, transB: true, gradB: gw, needGradA: true })!; // dz·W_c; gradW_c += dzᵀ·h
        axpy(be, { alpha: 1, x: dh, y: gh });
        be.dispose(x, dh);
      }
    }
    return gradHidden;
  },
  bench: {
    label: 'lmHeadLogprobs (bwd)',
    run(be, x) {
      const a = headBenchInputs(be, x.mask.shape[0]);
      const f = benchInputs(be, `head-fwd-${x.mask.shape[0]}`, () => lmHeadLogprobs(be, a));
      return lmHeadLogprobsBackward(be, { ...a, saved: f.saved, gradLogprobs: a.gradLogprobs, gradEntropy: a.gradEntropy });
    },
  },
});

/** logits (B, V) = hidden·Wᵀ over the head's parts (the rows a sampling step draws from). */
export const lmHeadLogits: Op<LmHeadLogitsArgs, Tensor> = defineOp({
  name: 'lmHeadLogits',
  kernels: [HEAD_PLACE],
  check: (a) => void checkHead(a.hidden, a.head, 'B'),
  cpu(a) {
    const s = headShape(a.hidden, a.head);
    const out = new Float64Array(s.N * s.V);
    let v0 = 0;
    a.head.forEach((p, i) => {
      const x = matmulRef(cpu(a.hidden).data, cpu(p).data, null, s.N, s.D, s.rows[i], true);
      for (let n = 0; n < s.N; n++) out.set(x.subarray(n * s.rows[i], (n + 1) * s.rows[i]), n * s.V + v0);
      v0 += s.rows[i];
    });
    return new CpuTensor(out, [s.N, s.V], 'f32');
  },
  webgpu(a, be) {
    const s = headShape(a.hidden, a.head);
    if (a.head.length === 1) return matmul(be, { a: a.hidden, b: a.head[0], transB: true });
    const out = be.empty([s.N, s.V]);
    let v0 = 0;
    a.head.forEach((p, i) => {
      const x = matmul(be, { a: a.hidden, b: p, transB: true }); // (B, V_p)
      const total = s.N * s.rows[i];
      if (total > 0) be.rt.dispatch(HEAD_PLACE, [gpu(x), gpu(out)], uniform({ Vc: s.rows[i], v0, V: s.V, total }), elementGrid(total, WG));
      be.dispose(x);
      v0 += s.rows[i];
    });
    return out;
  },
});

/** The bench shape: 2·B scored rows of width 64 over a 4 096-token head in two parts. */
function headBenchInputs(be: Backend, B: number) {
  return benchInputs(be, `head-${B}`, (be, r) => {
    const N = 2 * B,
      D = 64,
      V = 4096;
    return {
      hidden: randomTensor(be, r, [N, D]),
      head: [randomTensor(be, r, [V / 2, D], 0.3), randomTensor(be, r, [V / 2, D], 0.3)],
      tokens: randomTensor(be, r, [N], V, 'i32'),
      temperature: 0.9,
      gradLogprobs: randomTensor(be, r, [N]),
      gradEntropy: randomTensor(be, r, [N]),
    };
  });
}
