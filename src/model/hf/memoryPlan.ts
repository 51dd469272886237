// The memory plan of a Hugging Face model on one GPU, made before anything is allocated: bytes for
// the frozen weights, the KV cache of a rollout, the activations a training step keeps for backward,
// LoRA adapters with their AdamW state and a value head; checked against what the adapter offers
// (maxBufferSize, maxStorageBufferBindingSize, maxStorageBuffersPerShaderStage, and the total memory
// when it is known), with the tensors that must be split because one binding is too small, and a
// verdict in words: what is needed, what the GPU offers, what to lower.
//
// Every tensor is counted in the buffer the WebGPU pool gives it (the next power of two,
// gpu/bufferPool.ts), one tensor at a time, as the code allocates them: a 3 584 × 576 f32 tensor
// takes 8 MiB, not 7.9. What the GPU holds = weights + adapters/optimiser + for each size, the
// most buffers of it any one phase uses at once (the pool keeps what a phase freed for the next;
// heldAfter). The phases are never alive together:
//   rollout    = the KV cache (per layer a k and a v of batch × (prompt + response) × kvHeads·headDim)
//                + one layer of prefill over batch × prompt rows + the batch's ids and mask + the
//                sampled rows' logits
//   experience = one layer of a forward over every sequence of the batch (old, reference log-probs
//                and the critic's values: no tape) + the scored rows + one block of head logits
//   training   = per layer, what HfModel.layerForward keeps for backward (layerTapeTensors: the
//                layer's input, its norms with their statistics, q/k before and after q/k norm and
//                rope, v, the attention output and its log-sum-exp — attention keeps no B·heads·S²
//                probabilities, its backward recomputes them — the MLP's inputs and activations, and
//                each adapted projection's s·x·Aᵀ) over one minibatch + the final rows + the larger
//                of one layer's backward (layerBackwardTensors) and the head's backward (a block of
//                logits and its gradient)
//   adapters   = per trained role, 5 flat f32 buffers and the NaN guard's 3 copies (loraFlatElements
//                each)
// tests/gpu/hf_load_plan.test.ts checks the plan against what the pool holds over whole iterations.
import { storageBytes } from '../../backend/tensor.ts';
import { parameterCount, type HfArch } from './arch.ts';
import { classBytes, sizeClass } from '../../gpu/bufferPool.ts';
import { HEAD_BLOCK_LOGITS } from '../../ops/lmHead.ts';
import { layoutBuffers, poolBytes, uploadBytes, type WeightDType, weightLayout } from './weightLayout.ts';

/** The projections a LoRA adapter may wrap (GPT-2's c_attn is `qkv`). */
export type LoraTarget = 'q' | 'k' | 'v' | 'o' | 'qkv' | 'gate' | 'up' | 'down';

export interface AdapterOffer {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  maxStorageBuffersPerShaderStage: number;
  /** The adapter has the shader-f16 feature: frozen weights are stored as f16. */
  shaderF16: boolean;
  /**
   * Memory the GPU can give the page, when known. WebGPU does not report it; the page may pass a
   * user's setting or what a failed allocation taught it, the tests a fake adapter's.
   */
  memoryBytes?: number | null;
  /** Bytes one part of the embedding or head table holds at most (default, and at most: one binding). */
  maxTableBytes?: number;
}

export interface RunShape {
  /** Sequences sampled together (rollout batch). */
  batch: number;
  promptTokens: number;
  responseTokens: number;
  /** Sequences per training minibatch (activations kept for backward); 0 = inference only. */
  trainBatch: number;
  /** LoRA on the listed projections; `roles` 2 = actor and critic adapters. null = no training of weights. */
  lora: { rank: number; targets: LoraTarget[]; roles: 1 | 2 } | null;
  /** A value head (critic) on the last hidden state. */
  valueHead: boolean;
  /** The NaN guard's device copies of each role's weights and moments (hfGuard.ts); default true, as the page and the CLI keep them. */
  nanGuard?: boolean;
  /** What dense weights and the embedding are stored in; default f16 when the adapter has shader-f16, else f32. */
  weightDtype?: WeightDType;
  /** Optimizer steps of an iteration (epochs × minibatches; default 1): each step's loss statistics are read back after the update. */
  updateSteps?: number;
  /** The iteration is inspected (hfPpo.ts `inspect`): each step's new log-probs, and values with a critic, are kept until then too. */
  inspect?: boolean;
}

export interface MemoryItem {
  what: 'weights' | 'adapters' | 'kv cache' | 'rollout scratch' | 'experience' | 'activations';
  bytes: number;
  /** How it was counted, in words. */
  detail: string;
}

export interface SplitTensor {
  name: string;
  bytes: number;
  /** Parts of whole rows, each within one binding. */
  parts: number;
  rowsPerPart: number;
}

export interface MemoryPlan {
  weightDtype: 'f16' | 'f32';
  items: MemoryItem[];
  /** What the GPU holds over a whole run (see the header). */
  totalBytes: number;
  /** What the phases need beyond the weights and adapters: what the pool keeps once every phase has run (the pool's bound while training). */
  workingBytes: number;
  /** Frozen weights larger than one binding, split by rows. */
  splits: SplitTensor[];
  /** The largest single buffer the run needs after splitting. */
  largestBuffer: { name: string; bytes: number };
  fits: boolean;
  /** One sentence per problem; empty when it fits. */
  problems: string[];
  /** The verdict: needs, offers, what to lower. */
  message: string;
}

const F32 = 4;

export function formatBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

/** (in, out) of a LoRA target in this architecture. */
export function loraShape(a: HfArch, t: LoraTarget): [number, number] {
  const q = a.nHead * a.headDim;
  const kv = a.nKvHead * a.headDim;
  switch (t) {
    case 'q':
      return [a.dModel, q];
    case 'k':
    case 'v':
      return [a.dModel, kv];
    case 'o':
      return [q, a.dModel];
    case 'qkv':
      return [a.dModel, q + 2 * kv];
    case 'gate':
    case 'up':
      return [a.dModel, a.dFf];
    case 'down':
      return [a.dFf, a.dModel];
  }
}

function checkRun(a: HfArch, run: RunShape): void {
  const ints: [string, number, number][] = [
    ['batch', run.batch, 1],
    ['promptTokens', run.promptTokens, 1],
    ['responseTokens', run.responseTokens, 0],
    ['trainBatch', run.trainBatch, 0],
    ['updateSteps', run.updateSteps ?? 1, 1],
  ];
  for (const [k, v, lo] of ints) if (!Number.isSafeInteger(v) || v < lo) throw new Error(`${k} must be an integer ≥ ${lo}, got ${v}`);
  if (run.lora) {
    if (!Number.isSafeInteger(run.lora.rank) || run.lora.rank < 1) throw new Error(`lora rank must be a positive integer, got ${run.lora.rank}`);
    for (const t of run.lora.targets) {
      if (a.family === 'gpt2' ? !['qkv', 'o', 'up', 'down'].includes(t) : t === 'qkv') {
        throw new Error(
          `LoRA target ${t} does not exist in ${a.architecture}; ${a.family === 'gpt2' ? 'GPT-2 has qkv (c_attn), o, up (c_fc), down (c_proj)' : 'use q, k, v, o, gate, up, down'}`,
        );
      }
    }
  }
}

/** Flat buffers a trained role keeps (loraParams.ts: params, grads, m, v, decayMask), and the NaN guard's copies (params, m, v). */
const ROLE_BUFFERS = 5;
const GUARD_COPIES = 3;

/** The alignment of every block of a role's flat buffer (loraParams.ts). */
const FLAT_ALIGN = 64;
const aligned = (n: number) => Math.ceil(n / FLAT_ALIGN) * FLAT_ALIGN;

/**
 * Elements of one role's flat buffer, laid out as loraParams.ts lays it out: per layer and adapted
 * module, A (r, in) then each projection's B rows (r per row; GPT-2's c_attn feeds q, k and v, one
 * block each), every block 64-aligned; a critic's value head (D weights, then the bias) after them.
 */
export function loraFlatElements(a: HfArch, rank: number, targets: readonly LoraTarget[], valueHead: boolean): number {
  const q = a.nHead * a.headDim;
  const kv = a.nKvHead * a.headDim;
  let perLayer = 0;
  for (const t of targets) {
    const [inF, out] = loraShape(a, t);
    perLayer += aligned(rank * inF) + (t === 'qkv' ? aligned(q * rank) + 2 * aligned(kv * rank) : aligned(out * rank));
  }
  return a.nLayer * perLayer + (valueHead ? aligned(a.dModel) + FLAT_ALIGN : 0);
}

/** Projections a LoRA target adapts in one layer (GPT-2's c_attn is q, k and v). */
const adaptedProjections = (targets: readonly LoraTarget[]) => targets.reduce((n, t) => n + (t === 'qkv' ? 3 : 1), 0);

/**
 * f32 words per token of each tensor HfModel.layerForward keeps for backward (its LayerTape without
 * the output, which is the next layer's input), with `adapted` projections of LoRA rank `rank`.
 */
export function layerTapeTensors(a: HfArch, adapted: number, rank: number): number[] {
  const qW = a.nHead * a.headDim;
  const kvW = a.nKvHead * a.headDim;
  const norm = a.norm.kind === 'layer' ? [a.dModel, 1, 1] : [a.dModel, 1]; // y, rstd (and LayerNorm's mean) per row
  return [
    a.dModel, // the layer's input
    ...norm, // input norm
    qW, // q_proj, k_proj, v_proj
    kvW,
    kvW,
    ...(a.qkNorm ? [qW, a.nHead, kvW, a.nKvHead] : []), // q_norm, k_norm over each head, with rstd per head
    ...(a.positions === 'rope' ? [qW, kvW] : []), // q and k after rope
    qW, // attention output and its log-sum-exp per head
    a.nHead,
    a.dModel, // after attention, with the residual
    ...norm, // post-attention norm
    ...(a.mlp === 'gated' ? [a.dFf, a.dFf, a.dFf] : [a.dFf, a.dFf]), // gate, up and SwiGLU; GPT-2's c_fc and GELU
    ...Array.from({ length: adapted }, () => rank), // s·x·Aᵀ of each adapted projection
  ];
}

/** f32 words per token HfModel.layerForward keeps for backward: the sum of layerTapeTensors. */
export function layerTapeWords(a: HfArch, adapted: number, rank: number): number {
  return layerTapeTensors(a, adapted, rank).reduce((s, w) => s + w, 0);
}

/** A layer's forward inside its scope (prefill, experience): the tape's tensors and the o and down projections' outputs before their residual adds. */
const layerForwardTensors = (a: HfArch, adapted: number, rank: number): number[] => [...layerTapeTensors(a, adapted, rank), a.dModel, a.dModel];

/**
 * f32 words per token of what one layer's backward holds at once (hfBackward.ts layerBackward,
 * freed with its scope): the MLP's gradients, the norm inputs' gradient parts, attention's q, k, v
 * gradients and what rope and q/k norm make of them, and one adapter's temporary.
 */
function layerBackwardTensors(a: HfArch, adapted: number, rank: number): number[] {
  const qW = a.nHead * a.headDim;
  const kvW = a.nKvHead * a.headDim;
  return [
    ...(a.mlp === 'gated' ? [a.dFf, a.dFf, a.dFf, a.dModel, a.dModel] : [a.dFf, a.dFf, a.dModel]), // g·down, the activation's backward, g·gate + g·up
    qW, // g·o
    qW, // dQ, dK, dV
    kvW,
    kvW,
    ...(a.positions === 'rope' ? [qW, kvW] : []),
    ...(a.qkNorm ? [qW, kvW] : []),
    a.dModel, // g·q + g·k + g·v
    a.dModel,
    a.dModel,
    ...(adapted > 0 ? [rank] : []),
  ];
}

/** The pool's buffers a phase holds at its peak: how many of each power-of-two size (gpu/bufferPool.ts). */
class PoolBuffers {
  readonly counts = new Map<number, number>();
  /** Tensors of `rows` rows and these f32 widths, `times` over. */
  tensors(rows: number, widths: readonly number[], times = 1): this {
    for (const w of widths) this.bytes(rows * w * F32, times);
    return this;
  }
  bytes(n: number, times = 1): this {
    const c = sizeClass(Math.max(4, n));
    this.counts.set(c, (this.counts.get(c) ?? 0) + times);
    return this;
  }
  with(other: PoolBuffers): PoolBuffers {
    const out = new PoolBuffers();
    for (const m of [this, other]) for (const [c, n] of m.counts) out.counts.set(c, (out.counts.get(c) ?? 0) + n);
    return out;
  }
  get total(): number {
    return classBytes(this.counts);
  }
}

/**
 * What the pool holds once every phase has run: it keeps a freed buffer for reuse by a tensor of
 * the same size class, so each size is held as many times as the phase that needs most of it.
 */
function heldAfter(phases: readonly PoolBuffers[]): number {
  const most = new Map<number, number>();
  for (const p of phases) for (const [c, n] of p.counts) most.set(c, Math.max(most.get(c) ?? 0, n));
  return classBytes(most);
}

/** Per-token tensors of the batch an iteration holds from its experience to its update (see planMemory). */
const PER_TOKEN_TENSORS = 16;

/** Bytes of the head's largest block of logits over `rows` scored rows (ops/lmHead.ts: at most HEAD_BLOCK_LOGITS a block). */
const headBlockBytes = (rows: number, vocab: number) => Math.min(Math.max(rows, 1) * vocab, HEAD_BLOCK_LOGITS) * F32;

export function planMemory(a: HfArch, run: RunShape, offer: AdapterOffer): MemoryPlan {
  checkRun(a, run);
  const weightDtype: WeightDType = run.weightDtype ?? (offer.shaderF16 ? 'f16' : 'f32');
  const binding = Math.min(offer.maxStorageBufferBindingSize, offer.maxBufferSize);
  const S = run.promptTokens + run.responseTokens;
  const D = a.dModel;
  const kvW = a.nKvHead * a.headDim;
  const items: MemoryItem[] = [];
  const problems: string[] = [];
  /** Activation buffers: each must fit one binding, or the run is too large. */
  const buffers: { name: string; bytes: number }[] = [];

  // Frozen weights: every buffer the loader makes (weightLayout.ts), in the pool's power-of-two
  // buffers; the tables split by rows to fit one binding; a dense weight is never split.
  const params = parameterCount(a);
  const splits: SplitTensor[] = [];
  const tableBytes = Math.min(binding, offer.maxTableBytes ?? binding);
  const widestRow = D * F32; // a row of the LM head, f32 in every layout
  if (widestRow > tableBytes) problems.push(`one row of the embedding or LM head (${formatBytes(widestRow)}) is larger than one binding (${formatBytes(tableBytes)})`);
  const layout = weightLayout(a, weightDtype, Math.max(tableBytes, widestRow));
  const all = layoutBuffers(layout);
  const uploaded = all.reduce((n, b) => n + uploadBytes(b), 0);
  const pooled = all.reduce((n, b) => n + poolBytes(b), 0);
  const headCopy = a.tiedHead && weightDtype === 'f16';
  items.push({
    what: 'weights',
    bytes: pooled,
    detail:
      `${params.toLocaleString('en-US')} parameters: dense weights and embedding in ${weightDtype}, norms and biases in f32, ` +
      `${a.tiedHead ? (headCopy ? 'the LM head an f32 copy of the tied embedding' : 'the LM head the tied embedding itself') : 'the LM head in f32'}; ` +
      `${formatBytes(uploaded)} uploaded in ${all.length} buffers of power-of-two sizes`,
  });
  const w = layout.weights;
  for (const [name, parts, dt] of [
    ['embedding', w.embed, weightDtype],
    ['lm head', w.head === w.embed ? [] : w.head, 'f32'],
  ] as const) {
    if (parts.length > 1) splits.push({ name, bytes: storageBytes(a.vocab * D, dt), parts: parts.length, rowsPerPart: parts[0].shape[0] });
  }
  const weightBuffers = all.map((b) => ({ name: b.name, bytes: uploadBytes(b) }));
  const tables = new Set([...w.embed, ...w.head]);
  const reported = new Set<string>();
  for (const b of all) {
    const kind = b.name.replace(/^layer \d+ /, '');
    if (reported.has(kind)) continue;
    if (!tables.has(b) && uploadBytes(b) > binding) {
      reported.add(kind);
      problems.push(`the ${kind} weight (${formatBytes(uploadBytes(b))}) is larger than one binding (${formatBytes(binding)}); dense weights are not split`);
    } else if (poolBytes(b) > offer.maxBufferSize) {
      reported.add(kind);
      problems.push(`the ${kind} weight takes a ${formatBytes(poolBytes(b))} buffer, more than the adapter's largest (${formatBytes(offer.maxBufferSize)})`);
    }
  }

  // Adapters, value head and their AdamW state: per role, the flat buffers of loraParams.ts
  // (weights, gradients, Adam m and v, the decay mask) and the NaN guard's copies of weights, m
  // and v (hfGuard.ts), each in the pool's power-of-two buffer.
  const roles: number[] = [];
  if (run.lora) {
    roles.push(loraFlatElements(a, run.lora.rank, run.lora.targets, false));
    if (run.lora.roles === 2) roles.push(loraFlatElements(a, run.lora.rank, run.lora.targets, run.valueHead));
  } else if (run.valueHead) roles.push(loraFlatElements(a, 1, [], true));
  for (const e of roles)
    if (e * F32 > binding)
      problems.push(`a role's flat adapter buffer (${formatBytes(e * F32)}) is larger than one binding (${formatBytes(binding)}): lower the LoRA rank or adapt fewer projections`);
  if (roles.length > 0) {
    const guard = run.nanGuard ?? true;
    const perRole = ROLE_BUFFERS + (guard ? GUARD_COPIES : 0);
    const bytes = roles.reduce((n, e) => n + perRole * sizeClass(e * F32), 0);
    items.push({
      what: 'adapters',
      bytes,
      detail: `${roles.map((e) => e.toLocaleString('en-US')).join(' + ')} f32 elements (64-aligned blocks${run.valueHead ? ', the value head with the critic' : ''}) × ${perRole} buffers: weights, gradients, Adam m and v, decay mask${guard ? ", and the NaN guard's copies of weights, m and v" : ''}`,
    });
  }

  // Rollout: the KV cache, one layer of prefill, the batch's ids, positions and mask, the logits the
  // sampler draws from (B, V).
  const adapted = run.lora ? adaptedProjections(run.lora.targets) : 0;
  const rank = run.lora?.rank ?? 0;
  const kvTensor = run.batch * S * kvW * F32;
  const kvCache = new PoolBuffers().bytes(kvTensor, 2 * a.nLayer);
  buffers.push({ name: 'KV cache of one layer (k or v)', bytes: kvTensor });
  const Rp = run.batch * run.promptTokens;
  const prefill = new PoolBuffers()
    .tensors(Rp, [...layerForwardTensors(a, adapted, rank), 1, 1]) // a layer, the prompts' ids and positions
    .tensors(run.batch * S, [1]) // the mask
    .tensors(run.batch, [a.vocab]); // the logits the sampler draws from
  buffers.push({ name: 'prefill MLP activations', bytes: Rp * a.dFf * F32 }, { name: 'sampled logits (batch × vocabulary)', bytes: run.batch * a.vocab * F32 });
  // each decode step: one layer over the batch's new positions, and the logits drawn from
  const decode = new PoolBuffers().tensors(run.batch, [...layerForwardTensors(a, adapted, rank), 1, 1, a.vocab]).tensors(run.batch * S, [1]);
  const phases = [kvCache.with(prefill), kvCache.with(decode)];
  // The batch's per-token numbers (log-probs old and reference, values, rewards, advantages,
  // returns, masks, the update's ratios and losses), alive from the experience to the update,
  // and the per-sequence ones (scores, lengths, statistics), and ids, positions and masks of the whole batch.
  const perToken = new PoolBuffers()
    .tensors(run.batch * run.responseTokens, [1], PER_TOKEN_TENSORS)
    .tensors(run.batch, [1], 8)
    .tensors(run.batch * S, [1], 4);

  // Experience: a forward of the whole batch without a tape, one layer at a time, then the head.
  const R = run.batch * S;
  const N = run.batch * run.responseTokens;
  const logitsBlock = headBlockBytes(N, a.vocab);
  const experience = new PoolBuffers()
    .tensors(R, [...layerForwardTensors(a, adapted, rank), 1, 1, 1])
    .tensors(N, [D])
    .bytes(logitsBlock)
    .with(perToken);
  buffers.push({ name: 'MLP activations of the experience forward', bytes: R * a.dFf * F32 });
  phases.push(experience);

  // Training: the tape of one minibatch, then one layer's backward at a time, or the head's.
  let training: PoolBuffers | null = null;
  let trainingDetail = 'inference only';
  if (run.trainBatch > 0) {
    const Rt = run.trainBatch * S;
    const Nt = run.trainBatch * run.responseTokens;
    const layer = new PoolBuffers().tensors(Rt, layerTapeTensors(a, adapted, rank));
    // Every step's statistics (policy 4, value 2 numbers), and inspected its (minibatch, response) rows, until the update's one readback.
    const steps = run.updateSteps ?? 1;
    const roles = run.valueHead ? 2 : 1;
    const updateKept = new PoolBuffers()
      .bytes(4 * F32, steps)
      .bytes(2 * F32, run.valueHead ? steps : 0)
      .tensors(Nt, [1], run.inspect ? steps * roles : 0);
    const stats = a.norm.kind === 'layer' ? [1, 1] : [1];
    const tape = perToken
      .with(new PoolBuffers())
      .tensors(Rt, layerTapeTensors(a, adapted, rank), a.nLayer)
      .tensors(Rt, [D, D, ...stats, 1, 1, 1]) // the last layer's output, the final norm, the batch's ids, positions and mask
      .tensors(Nt, [D, D, 1, 4]) // the scored rows, their gradient, the targets, the head's saved statistics
      .with(updateKept);
    const layerBack = tape.with(new PoolBuffers().tensors(Rt, [...layerBackwardTensors(a, adapted, rank), D, D]));
    const headBack = tape.with(new PoolBuffers().bytes(headBlockBytes(Nt, a.vocab), 2).tensors(Nt, [D]));
    phases.push(layerBack, headBack);
    training = layerBack.total >= headBack.total ? layerBack : headBack;
    trainingDetail = `${a.nLayer} layers × ${formatBytes(layer.total)} kept for backward (minibatch ${run.trainBatch} × ${S} tokens) + one layer's backward`;
    // One minibatch is at most the batch in every run the page makes: then the experience's MLP rows are named, not these.
    if (run.trainBatch > run.batch) buffers.push({ name: 'MLP activations of one training layer', bytes: Rt * a.dFf * F32 });
  }

  items.push({ what: 'kv cache', bytes: kvCache.total, detail: `${a.nLayer} layers × k and v of batch ${run.batch} × ${S} tokens × ${a.nKvHead} kv heads × ${a.headDim}, f32` });
  items.push({ what: 'rollout scratch', bytes: prefill.total, detail: `one layer of prefill at batch ${run.batch} × ${run.promptTokens} prompt tokens, and the sampled logits` });
  items.push({ what: 'experience', bytes: experience.total, detail: `one layer of a forward over batch ${run.batch} × ${S} tokens, and a block of head logits` });
  if (training) items.push({ what: 'activations', bytes: training.total, detail: trainingDetail });

  const fixed = items.filter((i) => i.what === 'weights' || i.what === 'adapters').reduce((s, i) => s + i.bytes, 0);
  // What the GPU must hold: the pool keeps what each phase freed for the next iteration.
  const workingBytes = heldAfter(phases);
  const totalBytes = fixed + workingBytes;

  const largestBuffer = [...weightBuffers, ...buffers, { name: 'block of head logits', bytes: logitsBlock }].reduce((m, b) => (b.bytes > m.bytes ? b : m), { name: '', bytes: 0 });
  for (const b of buffers)
    if (b.bytes > binding) problems.push(`the ${b.name} take ${formatBytes(b.bytes)}, more than one binding (${formatBytes(binding)}): lower the batch or the sequence length`);
  // The kernels bind up to 8 storage buffers (the optimiser and loss kernels); every adapter offers 8.
  if (offer.maxStorageBuffersPerShaderStage < 8) problems.push(`the adapter offers ${offer.maxStorageBuffersPerShaderStage} storage buffers per shader stage; the kernels need 8`);
  const budget = offer.memoryBytes ?? null;
  if (budget !== null && totalBytes > budget) {
    const weights = items[0].bytes;
    let lower: string;
    if (fixed >= budget) {
      lower = `Choose a smaller model: the weights alone need ${formatBytes(weights)}${weightDtype === 'f32' && run.weightDtype === undefined ? ' (in f32: this GPU has no shader-f16)' : ` in ${weightDtype}`}`;
    } else {
      const fitsWith = (r: RunShape) => planMemory(a, r, { ...offer, memoryBytes: null }).totalBytes <= budget;
      // the minibatch first when training is the largest phase; the batch (and the minibatch with it) otherwise, or when no minibatch fits
      const minibatch =
        training && training.total > Math.max(...phases.slice(0, 3).map((p) => p.total)) ? largestFitting(run.trainBatch, (tb) => fitsWith({ ...run, trainBatch: tb })) : 0;
      const fitsAt = minibatch > 0 ? 0 : largestFitting(run.batch, (b) => fitsWith({ ...run, batch: b, trainBatch: Math.min(run.trainBatch, b) }));
      lower =
        minibatch > 0
          ? `Lower the training minibatch to ${minibatch} (now ${run.trainBatch}), or the response length (now ${run.responseTokens})`
          : fitsAt > 0
            ? `Lower the batch to ${fitsAt} (now ${run.batch}), or the response length (now ${run.responseTokens})`
            : `Lower the response length (now ${run.responseTokens}) or the prompt length (now ${run.promptTokens})`;
    }
    // f16 weights halve the dense weights and the embedding: name them when that alone makes the run fit.
    const f16 = weightDtype === 'f32' ? planMemory(a, { ...run, weightDtype: 'f16' }, { ...offer, memoryBytes: null }) : null;
    if (f16 && f16.totalBytes <= budget) lower = `Store the weights in f16 (${formatBytes(f16.items[0].bytes)} instead of ${formatBytes(weights)}), or: ${lower}`;
    problems.push(
      `this run needs ${formatBytes(totalBytes)} on the GPU (weights ${formatBytes(weights)} in ${weightDtype}, ${describeRest(items)}); the GPU offers ${formatBytes(budget)}. ${lower}`,
    );
  }
  const fits = problems.length === 0;
  const needs = `needs ${formatBytes(totalBytes)} (weights ${formatBytes(items[0].bytes)} in ${weightDtype}${splits.length ? `; ${splits.map((s) => `${s.name} split in ${s.parts} parts`).join(', ')}` : ''})`;
  const offers = budget !== null ? `the GPU offers ${formatBytes(budget)}` : `the GPU does not report its memory; one binding holds ${formatBytes(binding)}`;
  const message = fits ? `Fits: this run ${needs}; ${offers}.` : `Does not fit: ${problems.join('. ')}.`;
  return { weightDtype, items, totalBytes, workingBytes, splits, largestBuffer, fits, problems, message };
}

/** The largest n in [1, now) with fits(n) (the plan grows with n), or 0 when none. */
function largestFitting(now: number, fits: (n: number) => boolean): number {
  let lo = 0;
  let hi = now;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo >= 1 && fits(lo) ? lo : 0;
}

function describeRest(items: MemoryItem[]): string {
  return items
    .filter((i) => i.what !== 'weights' && i.bytes > 0)
    .map((i) => `${i.what} ${formatBytes(i.bytes)}`)
    .join(', ');
}
