// WGSL's `struct Params` and `@binding`s are kept in step with the TypeScript dispatchers: WebGPU
// checks binding *types* at pipeline creation, but never what a uniform block means, so a field
// added, dropped or reordered on one side would silently shift every value after it. Here every
// op runs on a WebGPU backend whose runtime only records (no GPU): each dispatch's KernelSpec, its
// uniform layout (field names, order and types) and the values it passed by name are compared with
// the shader's uniform struct and bindings. The dispatches cover every kernel the ops declare
// (src/ops/registry.ts), so each declared layout is checked.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { specKey, type KernelSpec } from '../../src/gpu/pipelines.ts';
import { declaredKernels } from '../../src/ops/registry.ts';
import { kvStride, type DecodeModel } from '../../src/reference/seq/decode.ts';
import type { GpuRuntime } from '../../src/gpu/runtime.ts';
import { type UniformLayout, uniformLayout, type UniformValues } from '../../src/gpu/uniforms.ts';
import type { DType, Tensor } from '../../src/backend/tensor.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { gae } from '../../src/ops/gae.ts';
import { actorLoss } from '../../src/ops/actorLoss.ts';
import { aggregate } from '../../src/ops/aggregate.ts';
import { groupAdvantages } from '../../src/ops/groupAdvantages.ts';
import { kl, klGrad } from '../../src/ops/kl.ts';
import { logprobs, logprobsBackward } from '../../src/ops/logprobs.ts';
import { policyLoss } from '../../src/ops/policyLoss.ts';
import { rolloutCorrection } from '../../src/ops/rolloutCorrection.ts';
import { shapeRewards } from '../../src/ops/shapeRewards.ts';
import { tisWeights } from '../../src/ops/tisWeights.ts';
import { valueLoss } from '../../src/ops/valueLoss.ts';
import { whiten } from '../../src/ops/whiten.ts';
import { add, axpy, fill, gelu, geluBackward, mul, scale } from '../../src/ops/elementwise.ts';
import { embedding, embeddingBackward, embeddingWindow } from '../../src/ops/embedding.ts';
import { layerNorm, layerNormBackward } from '../../src/ops/layerNorm.ts';
import { matmul, matmulBackward, matmulGelu, matmulResidual } from '../../src/ops/matmul.ts';
import { adamw, gradNorm } from '../../src/ops/optim.ts';
import { gatherRows, gatherRowsMany, sliceSeq, sliceSeqBackward } from '../../src/ops/slice.ts';
import { attention, attentionBackward } from '../../src/ops/attention.ts';
import { attentionCached } from '../../src/ops/attentionCached.ts';
import { decodeStep } from '../../src/ops/decodeStep.ts';
import { sampleStep } from '../../src/ops/sampleStep.ts';
import { gqaAttention, gqaAttentionBackward } from '../../src/ops/gqaAttention.ts';
import { gqaAttentionCached } from '../../src/ops/gqaAttentionCached.ts';
import { lmHeadLogits, lmHeadLogprobs, lmHeadLogprobsBackward } from '../../src/ops/lmHead.ts';
import { sampleVocab } from '../../src/ops/sampleVocab.ts';
import { runHfOps } from '../helpers/hfOpsCalls.ts';

const SHADERS = resolve(import.meta.dirname, '../../shaders');
const source = (name: string): string => readFileSync(join(SHADERS, `${name}.wgsl`), 'utf8').replace(/\/\/.*$/gm, '');

interface Dispatch {
  spec: KernelSpec;
  uniform: UniformValues | null;
  buffers: number;
}

/** A WebGPU backend on a runtime that only records dispatches (no GPU): ops run through it as on a device. */
function recordingHost(log: Dispatch[]): WebGpuBackend {
  const rt = {
    adapterName: 'recording',
    cpuAdapter: false,
    pool: { acquire: () => ({}) as GPUBuffer, release() {} },
    recorder: { write() {}, copy() {}, encoderOutsidePass: () => ({ clearBuffer() {} }) },
    dispatch(spec: KernelSpec, buffers: readonly unknown[], uniform: UniformValues | null) {
      log.push({ spec, uniform, buffers: buffers.length });
    },
  };
  return new WebGpuBackend(rt as unknown as GpuRuntime);
}

/** Every op with valid arguments, covering each kernel variant (rows/tiled layer norm, prefill/decode, …). */
function runAllOps(host: WebGpuBackend): void {
  const t = (shape: number[], dtype: DType = 'f32'): Tensor => host.empty(shape, dtype);
  const [B, A, V] = [4, 3, 5];
  const ba = () => t([B, A]);
  logprobs(host, { logits: t([B, A, V]), tokens: t([B, A], 'i32'), temperature: 1 });
  logprobsBackward(host, { logits: t([B, A, V]), tokens: t([B, A], 'i32'), temperature: 1, gradLogprobs: ba(), gradEntropy: ba() });
  logprobs(host, { logits: t([B, A, 300]), tokens: t([B, A], 'i32'), temperature: 1 }); // V > 256: a workgroup per row (small V: a thread)
  logprobsBackward(host, { logits: t([B, A, 300]), tokens: t([B, A], 'i32'), temperature: 1, gradLogprobs: ba() });
  kl(host, { logprobs: ba(), refLogprobs: ba(), estimator: 'k3' });
  klGrad(host, { logprobs: ba(), refLogprobs: ba(), estimator: 'k3' });
  shapeRewards(host, { scores: t([B]), logprobs: ba(), refLogprobs: ba(), actionMask: ba(), beta: 0.1, estimator: 'k1' });
  gae(host, { rewards: ba(), values: ba(), actionMask: ba(), gamma: 1, lam: 0.95 });
  whiten(host, { x: ba(), actionMask: ba(), shiftMean: true });
  for (const estimator of ['reinforce', 'rloo'] as const) {
    groupAdvantages(host, { estimator, scores: t([B]), group: [0, 0, 1, 1], logprobs: ba(), refLogprobs: ba(), actionMask: ba(), beta: 0.1, klEstimator: 'k1', gamma: 1 });
  }
  policyLoss(host, {
    oldLogprobs: ba(),
    logprobs: ba(),
    advantages: ba(),
    actionMask: ba(),
    params: { clipLow: 0.2, clipHigh: 0.2, clipC: 3, agg: 'token-mean' },
    isWeights: ba(),
  });
  policyLoss(host, {
    oldLogprobs: ba(),
    logprobs: ba(),
    advantages: ba(),
    actionMask: ba(),
    params: { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'kl_cov' },
  }); // + cov_select
  tisWeights(host, { oldLogprobs: ba(), rolloutLogprobs: ba(), actionMask: ba(), cap: 2 });
  rolloutCorrection(host, {
    oldLogprobs: ba(),
    rolloutLogprobs: ba(),
    actionMask: ba(),
    params: { isLevel: 'sequence', isUpper: 2, isLower: 0.5, tisLower: null, rs: [{ option: 'token_k1', lower: 0.5, upper: 2 }] },
  });
  valueLoss(host, { values: ba(), oldValues: ba(), returns: ba(), actionMask: ba(), params: { clip: 0.2, agg: 'token-mean' } });
  aggregate(host, { x: ba(), actionMask: ba(), agg: 'seq-mean-token-mean' });
  const actorParams = { clipLow: 0.2, clipHigh: 0.2, clipC: 3, agg: 'token-mean' as const, entropyCoef: 0.01, kl: { coef: 0.1, estimator: 'k3' as const } };
  actorLoss(host, {
    logits: t([B, A + 2, V]),
    start: 1,
    tokens: t([B, A], 'i32'),
    temperature: 1,
    oldLogprobs: ba(),
    advantages: ba(),
    actionMask: ba(),
    params: actorParams,
    isWeights: ba(),
    refLogprobs: ba(),
  }); // fused
  actorLoss(host, {
    logits: t([B, A + 2, 300]),
    start: 1,
    tokens: t([B, A], 'i32'),
    temperature: 1,
    oldLogprobs: ba(),
    advantages: ba(),
    actionMask: ba(),
    params: { ...actorParams, kl: null },
  }); // V > 256: per-op kernels
  runHfOps(host); // the Hugging Face model ops, each kernel variant

  const [M, K, N] = [6, 8, 4];
  matmul(host, { a: t([M, K]), b: t([K, N]), bias: t([N]) });
  matmulGelu(host, { a: t([M, K]), b: t([N, K]), transB: true });
  matmulResidual(host, { a: t([M, K]), b: t([K, N]), bias: t([N]), residual: t([M, N]) });
  matmulBackward(host, { gradOut: t([M, N]), a: t([M, K]), b: t([K, N]), gradB: t([K, N]), gradBias: t([N]), needGradA: true });
  matmulBackward(host, { gradOut: t([M, N]), a: t([M, K]), b: t([N, K]), transB: true, gradB: t([N, K]), needGradA: false });
  matmul(host, { a: t([512, K]), b: t([K, 512]) }); // ≥ 4096 8×8 blocks: matmul_8x8 (small ones take 4×4)
  for (const D of [8, 300]) {
    // D = 300 takes the one-workgroup-per-row kernels, D = 8 the thread-per-row ones.
    const r = layerNorm(host, { x: t([M, D]), gamma: t([D]), beta: t([D]), eps: 1e-5 });
    layerNormBackward(host, { gradY: t([M, D]), x: t([M, D]), gamma: t([D]), mean: r.mean, rstd: r.rstd, gradGamma: t([D]), gradBeta: t([D]) });
    layerNormBackward(host, { gradY: t([M, D]), x: t([M, D]), gamma: t([D]), mean: r.mean, rstd: r.rstd, gradGamma: t([D]), gradBeta: t([D]), into: t([M, D]) }); // accumulating
  }
  // CPU adapters take the barrier-free variants where there is one.
  const rt = host.rt as unknown as { cpuAdapter: boolean };
  rt.cpuAdapter = true;
  layerNormBackward(host, { gradY: t([M, 8]), x: t([M, 8]), gamma: t([8]), mean: t([M]), rstd: t([M]), gradGamma: t([8]), gradBeta: t([8]) });
  gradNorm(host, { grads: t([100]) });
  rt.cpuAdapter = false;
  gelu(host, { x: t([M, K]) });
  geluBackward(host, { gradY: t([M, K]), x: t([M, K]) });
  add(host, { a: t([M, K]), b: t([M, K]) });
  mul(host, { a: t([M, K]), b: t([M, K]) });
  axpy(host, { alpha: 0.5, x: t([M, K]), y: t([M, K]) });
  scale(host, { x: t([M, K]), alpha: 2 });
  fill(host, { x: t([M, K], 'i32'), value: 1 });
  const [S, D, P] = [5, 8, 16];
  embedding(host, { tokens: t([2, S], 'i32'), positions: t([2, S], 'i32'), wte: t([V, D]), wpe: t([P, D]) });
  embeddingWindow(host, { tokens: t([2, S], 'i32'), positions: t([2, S], 'i32'), start: 1, len: 2, wte: t([V, D]), wpe: t([P, D]) });
  embeddingBackward(host, { gradOut: t([2 * S, D]), tokens: t([2, S], 'i32'), positions: t([2, S], 'i32'), gradWte: t([V, D]), gradWpe: t([P, D]) });
  sliceSeq(host, { x: t([2, S, D]), start: 1, len: 2 });
  sliceSeqBackward(host, { grad: t([2, 2, D]), seqLen: S, start: 1 });
  gatherRows(host, { x: t([4, D]), index: t([2], 'i32') });
  gatherRowsMany(host, { xs: [t([4, D]), t([4, 3], 'i32'), t([4, 2, D]), t([4, 1]), t([4, 5], 'i32')], index: t([2], 'i32') }); // a chunk of 3, then of 2
  const norm = gradNorm(host, { grads: t([100]) });
  adamw(host, {
    params: t([100]),
    grads: t([100]),
    m: t([100]),
    v: t([100]),
    decayMask: t([100]),
    gradNorm: norm,
    hp: { lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, step: 1, maxGradNorm: 1 },
  });

  const [H, Smax] = [2, 8];
  const { probs } = attention(host, { qkv: t([2 * S, 3 * D]), attnMask: t([2, S]), nHead: H });
  attentionBackward(host, { gradOut: t([2 * S, D]), qkv: t([2 * S, 3 * D]), probs, out: t([2 * S, D]), nHead: H });
  attentionCached(host, { qkv: t([2 * 3, 3 * D]), kCache: t([2, Smax, D]), vCache: t([2, Smax, D]), attnMask: t([2, Smax]), start: 0, nHead: H }); // prefill
  attentionCached(host, { qkv: t([2, 3 * D]), kCache: t([2, Smax, D]), vCache: t([2, Smax, D]), attnMask: t([2, Smax]), start: 3, nHead: H }); // decode
  sampleStep(host, {
    logits: t([2, V]),
    sequences: t([2, Smax], 'i32'),
    attnMask: t([2, Smax]),
    positions: t([2, Smax], 'i32'),
    finished: t([2], 'i32'),
    pos: 3,
    params: { temperature: 1, topK: 0, topP: 1, seed: 1, eosId: 1, padId: 0 },
    logprobs: t([2, Smax]),
  });
  // The fused decode step over a one-block model laid out back to back in one flat parameter tensor.
  let at = 0;
  const take = (n: number) => {
    at += n;
    return at - n;
  };
  const dm: DecodeModel = {
    nLayer: 1,
    nHead: H,
    dModel: D,
    vocabSize: V,
    maxPos: P,
    eps: 1e-5,
    wte: take(V * D),
    wpe: take(P * D),
    lnfG: take(D),
    lnfB: take(D),
    blocks: [
      {
        ln1G: take(D),
        ln1B: take(D),
        attnW: take(3 * D * D),
        attnB: take(3 * D),
        projW: take(D * D),
        projB: take(D),
        ln2G: take(D),
        ln2B: take(D),
        fcW: take(4 * D * D),
        fcB: take(4 * D),
        mlpW: take(4 * D * D),
        mlpB: take(D),
      },
    ],
  };
  const decodeArgs = {
    params: t([at]),
    model: dm,
    kv: t([2 * kvStride(2, Smax, D)]),
    sequences: t([2, Smax], 'i32'),
    positions: t([2, Smax], 'i32'),
    attnMask: t([2, Smax]),
    pos: 3,
  };
  decodeStep(host, decodeArgs);
  rt.cpuAdapter = true; // the decode step's scratch-buffer variant
  decodeStep(host, decodeArgs);
  rt.cpuAdapter = false;

  // Hugging Face ops: GQA attention (4 query heads over 2 kv heads of width 8), cached prefill and decode.
  const gqa = { q: t([2 * S, 32]), k: t([2 * S, 16]), v: t([2 * S, 16]), attnMask: t([2, S]), nHead: 4, nKvHead: 2 };
  const fwd = gqaAttention(host, gqa);
  gqaAttentionBackward(host, { ...gqa, gradOut: t([2 * S, 32]), out: fwd.out, lse: fwd.lse });
  const caches = { kCache: t([2, Smax, 16]), vCache: t([2, Smax, 16]), attnMask: t([2, Smax]), nHead: 4, nKvHead: 2 };
  gqaAttentionCached(host, { ...caches, q: t([2 * 3, 32]), k: t([2 * 3, 16]), v: t([2 * 3, 16]), start: 0 }); // prefill
  gqaAttentionCached(host, { ...caches, q: t([2, 32]), k: t([2, 16]), v: t([2, 16]), start: 3 }); // decode
  // The LM head over two row parts (hidden width 64), and its logits for sampling.
  const head = { hidden: t([3, 64]), head: [t([10, 64]), t([6, 64])], tokens: t([3], 'i32'), temperature: 1 };
  const h = lmHeadLogprobs(host, head);
  lmHeadLogprobsBackward(host, { ...head, saved: h.saved, gradLogprobs: t([3]), gradEntropy: t([3]), gradHead: [t([10, 64]), t([6, 64])] });
  lmHeadLogits(host, { hidden: t([2, 64]), head: head.head });
  const sampleState = { sequences: t([2, Smax], 'i32'), attnMask: t([2, Smax]), positions: t([2, Smax], 'i32'), finished: t([2], 'i32'), pos: 3 };
  const sampleParams = { temperature: 1, topK: 20, topP: 0.9, seed: 1, eosIds: [1, 2], padId: 0 };
  sampleVocab(host, { ...sampleState, logits: t([2, 300]), params: sampleParams, logprobs: t([2, Smax]) });
  // CPU adapters take the 4-thread decode and sampling workgroups.
  rt.cpuAdapter = true;
  gqaAttentionCached(host, { ...caches, q: t([2, 32]), k: t([2, 16]), v: t([2, 16]), start: 3 });
  sampleVocab(host, { ...sampleState, logits: t([2, 300]), params: sampleParams, logprobs: t([2, Smax]) });
  rt.cpuAdapter = false;
}

// ---- the WGSL side ----
interface Binding {
  binding: number;
  name: string;
  kind: 'uniform' | 'read' | 'rw';
  type: string;
}

function bindings(code: string): Binding[] {
  const out: Binding[] = [];
  for (const m of code.matchAll(/@group\(0\)\s*@binding\((\d+)\)\s*var<(uniform|storage,\s*read|storage,\s*read_write)>\s*(\w+)\s*:\s*([^;]+);/g)) {
    const kind = m[2] === 'uniform' ? 'uniform' : /read_write/.test(m[2]) ? 'rw' : 'read';
    out.push({ binding: Number(m[1]), kind, name: m[3], type: m[4].trim() });
  }
  return out;
}

type Field = { name: string; type: string };

function structFields(code: string, name: string): Field[] {
  const m = code.match(new RegExp(`struct\\s+${name}\\s*\\{([^}]*)\\}`));
  if (!m) throw new Error(`struct ${name} not found`);
  return m[1]
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
    .map((f) => {
      const [n, ty] = f.split(':').map((s) => s.trim());
      return { name: n, type: ty };
    });
}

/**
 * How a TypeScript layout differs from the WGSL struct it writes: fields missing or extra by name,
 * the same names in another order, or a type that differs. Empty when they agree.
 */
function layoutProblems(layout: UniformLayout, struct: string, fields: Field[]): string[] {
  const problems: string[] = [];
  if (layout.struct !== struct) problems.push(`layout names struct ${layout.struct}, the entry point binds ${struct}`);
  const want = fields.map((f) => f.name);
  const got = [...layout.names];
  for (const n of want) if (!got.includes(n)) problems.push(`missing field ${n}`);
  for (const n of got) if (!want.includes(n)) problems.push(`extra field ${n}`);
  const common = got.filter((n) => want.includes(n));
  if (common.join() !== want.filter((n) => got.includes(n)).join()) problems.push(`order [${got.join(', ')}], struct [${want.join(', ')}]`);
  layout.names.forEach((n, i) => {
    const f = fields.find((x) => x.name === n);
    if (f && f.type !== layout.types[i]) problems.push(`${n}: layout ${layout.types[i]}, struct ${f.type}`);
  });
  return problems;
}

/** Body of `fn entry(…) { … }` and, one level deep, of the functions it calls. */
function entryText(code: string, entry: string): string {
  const body = (fn: string): string => {
    const start = code.search(new RegExp(`\\bfn\\s+${fn}\\s*\\(`));
    if (start < 0) return '';
    let i = code.indexOf('{', start);
    let depth = 0;
    const from = i;
    for (; i < code.length; i++) {
      if (code[i] === '{') depth++;
      else if (code[i] === '}' && --depth === 0) break;
    }
    return code.slice(from, i + 1);
  };
  const own = body(entry);
  const called = [...own.matchAll(/\b(\w+)\s*\(/g)].map((m) => m[1]).filter((n) => n !== entry);
  return own + [...new Set(called)].map(body).join('\n');
}

/** The shader with the lib_ files it `// @include`s (comments stripped). */
function withIncludes(name: string): string {
  const raw = readFileSync(join(SHADERS, `${name}.wgsl`), 'utf8');
  const libs = [...raw.matchAll(/^[ \t]*\/\/ @include ([\w-]+)/gm)].map((m) => source(m[1]));
  return [source(name), ...libs].join('\n');
}

describe('WGSL uniform structs and bindings match the TypeScript dispatchers', () => {
  const log: Dispatch[] = [];
  runAllOps(recordingHost(log));
  const seen = new Map<string, Dispatch>();
  for (const d of log) seen.set(`${d.spec.shader}#${d.spec.entry}`, d);

  it('every compute entry point in shaders/ is dispatched by some op', () => {
    const entries: string[] = [];
    for (const f of readdirSync(SHADERS).filter((f) => f.endsWith('.wgsl') && !f.startsWith('lib_'))) {
      const name = f.replace('.wgsl', '');
      for (const m of source(name).matchAll(/@compute[^f]*fn\s+(\w+)/g)) entries.push(`${name}#${m[1]}`);
    }
    expect(entries.filter((e) => !seen.has(e))).toEqual([]);
  });

  it('every kernel the ops declare is dispatched here, and every fixed kernel dispatched is declared (so precompile builds it)', () => {
    const dispatched = new Set(log.map((d) => specKey(d.spec)));
    const declared = declaredKernels().map(specKey);
    expect(declared.filter((k) => !dispatched.has(k))).toEqual([]);
    // Kernels sized per model shape are built on first use (the decode step's by precompileShape), not declared.
    const perShape = ['decode_step#', 'decode_step_scratch#', 'gqa_attention#', 'gqa_attention_backward#'];
    expect([...dispatched].filter((k) => !declared.includes(k) && !perShape.some((p) => k.startsWith(p)))).toEqual([]);
  });

  it.each([...seen.keys()])('%s', (key) => {
    const d = seen.get(key)!;
    const code = withIncludes(d.spec.shader);
    const text = entryText(code, d.spec.entry);
    const decl = bindings(code);
    // Bindings the entry point uses (several entries of one file may alias a binding number).
    const used = decl.filter((b) => new RegExp(`\\b${b.name}\\b`).test(text));
    const uniform = used.filter((b) => b.kind === 'uniform');
    if (d.spec.uniform) {
      expect(
        uniform.map((b) => b.binding),
        'one uniform at binding 0',
      ).toEqual([0]);
      const fields = structFields(code, uniform[0].type);
      for (const f of fields) expect(['u32', 'i32', 'f32'], `${uniform[0].type}.${f.name}`).toContain(f.type);
      const layout = d.spec.uniform;
      const shown = `${key}: layout ${layout.struct} {${layout.names.map((n, i) => `${n}: ${layout.types[i]}`).join(', ')}} vs struct ${uniform[0].type} {${fields.map((f) => `${f.name}: ${f.type}`).join(', ')}}`;
      expect(layoutProblems(layout, uniform[0].type, fields), shown).toEqual([]);
      // The values the dispatcher passed name exactly the layout's fields (no stray or forgotten name).
      expect(Object.keys(d.uniform ?? {}).sort(), `${key}: values passed`).toEqual([...layout.names].sort());
    } else {
      expect(uniform).toEqual([]);
    }
    const storage = used.filter((b) => b.kind !== 'uniform').sort((a, b) => a.binding - b.binding);
    // Every storage binding the kernel uses is in the spec with the same access; the dispatch binds them all.
    for (const b of storage) expect(d.spec.storage[b.binding - 1], `${key} binding ${b.binding} (${b.name})`).toBe(b.kind);
    expect(d.buffers, `${key}: buffers bound`).toBe(d.spec.storage.length);
  });

  it('a layout with two fields swapped, one missing, one extra or a wrong type is caught', () => {
    const mm = log.find((d) => d.spec.shader === 'matmul')!;
    const code = withIncludes('matmul');
    const fields = structFields(code, 'Params');
    const real = mm.spec.uniform!;
    expect(layoutProblems(real, 'Params', fields)).toEqual([]);
    const typed = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, real.types[real.names.indexOf(n)] ?? 'u32'] as const));
    const swapped = [...real.names];
    [swapped[0], swapped[1]] = [swapped[1], swapped[0]]; // M ↔ K: both u32, so a type check alone passes
    expect(layoutProblems(uniformLayout('Params', typed(swapped)), 'Params', fields)).toEqual([`order [${swapped.join(', ')}], struct [${real.names.join(', ')}]`]);
    expect(layoutProblems(uniformLayout('Params', typed(real.names.slice(1))), 'Params', fields)).toEqual([`missing field ${real.names[0]}`]);
    expect(layoutProblems(uniformLayout('Params', typed([...real.names, 'extra'])), 'Params', fields)).toEqual(['extra field extra']);
    const wrongType = { ...typed(real.names), M: 'f32' as const };
    expect(layoutProblems(uniformLayout('Params', wrongType), 'Params', fields)).toEqual(['M: layout f32, struct u32']);
    expect(layoutProblems(uniformLayout('MatmulParams', typed(real.names)), 'Params', fields)).toEqual(['layout names struct MatmulParams, the entry point binds Params']);
  });
});

describe('uniform blocks written by field name', () => {
  it('write the bytes the positional writer wrote: fields in layout order, padding zeroed', () => {
    const layout = uniformLayout('P', { n: 'u32', alpha: 'f32', eos: 'i32', bits: 'u32', scale: 'f32' });
    expect(layout.byteSize).toBe(32);
    const view = new DataView(new ArrayBuffer(64));
    new Uint8Array(view.buffer).fill(0xab); // stale bytes of an earlier block
    layout.write(view, 16, { scale: 0.125, bits: 0xffffffff, eos: -3, alpha: 1.5, n: 7 });
    const at = (i: number) => 16 + 4 * i;
    expect([view.getUint32(at(0), true), view.getFloat32(at(1), true), view.getInt32(at(2), true), view.getUint32(at(3), true), view.getFloat32(at(4), true)]).toEqual([
      7, 1.5, -3, 0xffffffff, 0.125,
    ]);
    expect([view.getUint32(at(5), true), view.getUint32(at(6), true), view.getUint32(at(7), true)]).toEqual([0, 0, 0]);
    expect(view.getUint32(12, true)).toBe(0xabababab); // nothing outside its block
    expect(view.getUint32(48, true)).toBe(0xabababab);
    expect(uniformLayout('Q', { a: 'u32' }).byteSize).toBe(16);
  });
});
