// The memory plan of a Hugging Face model on one GPU, made before anything is allocated: bytes for
// the frozen weights, the KV cache of a rollout, the activations a training step keeps for backward,
// LoRA adapters with their AdamW state and a value head; checked against what the adapter offers
// (maxBufferSize, maxStorageBufferBindingSize, maxStorageBuffersPerShaderStage, and the total memory
// when it is known), with the tensors that must be split because one binding is too small, and a
// verdict in words: what is needed, what the GPU offers, what to lower.
//
// Peak = weights + adapters/optimiser + max(rollout, training), because a rollout's KV cache and a
// training step's activations are never alive together (make_experience runs between them, and it is
// a forward without a cache: less than either).
//   rollout  = KV cache (layers × 2 × kvHeads × headDim × (prompt + response) × batch, f32)
//              + one layer's prefill temporaries + one chunk of logits
//   training = per layer, what HfModel.layerForward keeps for backward (layerTapeWords: the
//              layer's input, its norms with their statistics, q/k before and after q/k norm and
//              rope, v, the attention output and its log-sum-exp — attention keeps no B·heads·S²
//              probabilities, its backward recomputes them — the MLP's inputs and activations, and
//              each adapted projection's s·x·Aᵀ; all f32) + the final hidden states + one chunk of
//              logits + one layer's gradients (at most its tape)
//   adapters = per trained role, 5 flat f32 buffers and the NaN guard's 3 copies (loraFlatElements
//              each, pool-rounded)
import { storageBytes } from '../../backend/tensor.ts';
import { parameterCount, type HfArch } from './arch.ts';
import { sizeClass } from '../../gpu/bufferPool.ts';
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
  /** Tokens per chunk of the LM head's logits (the chunked log-softmax). Default 64. */
  logitChunkTokens?: number;
  /** What dense weights and the embedding are stored in; default f16 when the adapter has shader-f16, else f32. */
  weightDtype?: WeightDType;
}

export interface MemoryItem {
  what: 'weights' | 'adapters' | 'kv cache' | 'rollout scratch' | 'activations' | 'logits chunk';
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
  /** Peak bytes (see the header). */
  totalBytes: number;
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
 * f32 words HfModel.layerForward keeps per token of one layer for backward (its LayerTape without
 * the output, which is the next layer's input), with `adapted` projections of LoRA rank `rank`.
 */
export function layerTapeWords(a: HfArch, adapted: number, rank: number): number {
  const qW = a.nHead * a.headDim;
  const kvW = a.nKvHead * a.headDim;
  const stats = a.norm.kind === 'layer' ? 2 : 1; // rstd (and LayerNorm's mean) per row
  const rope = a.positions === 'rope';
  let w = a.dModel; // the layer's input
  w += 2 * (a.dModel + stats); // input and post-attention norms
  w += qW + 2 * kvW; // q_proj, k_proj, v_proj
  if (a.qkNorm) w += qW + a.nHead + kvW + a.nKvHead; // q_norm, k_norm over each head, with rstd per head
  if (rope) w += qW + kvW; // q and k after rope
  w += qW + a.nHead; // attention output and its log-sum-exp per head
  w += a.dModel; // after attention, with the residual
  w += (a.mlp === 'gated' ? 3 : 2) * a.dFf; // gate, up and SwiGLU; GPT-2's c_fc and GELU
  return w + adapted * rank;
}

export function planMemory(a: HfArch, run: RunShape, offer: AdapterOffer): MemoryPlan {
  checkRun(a, run);
  const weightDtype: WeightDType = run.weightDtype ?? (offer.shaderF16 ? 'f16' : 'f32');
  const binding = Math.min(offer.maxStorageBufferBindingSize, offer.maxBufferSize);
  const S = run.promptTokens + run.responseTokens;
  const D = a.dModel;
  const qW = a.nHead * a.headDim;
  const kvW = a.nKvHead * a.headDim;
  const chunk = run.logitChunkTokens ?? 64;
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

  // Rollout: KV cache, one layer of prefill temporaries, one chunk of logits.
  const kvPerLayer = 2 * kvW * S * run.batch * F32;
  const kv = a.nLayer * kvPerLayer;
  buffers.push({ name: 'KV cache of one layer (k or v)', bytes: kvPerLayer / 2 });
  const Rp = run.batch * run.promptTokens;
  const rolloutScratch = Rp * (2 * D + qW + 2 * kvW + 2 * a.dFf + a.nHead) * F32;
  buffers.push({ name: 'prefill MLP activations', bytes: Rp * a.dFf * F32 });
  const logitsChunk = Math.min(chunk, Math.max(run.batch, run.trainBatch) * S) * a.vocab * F32;
  if (logitsChunk > binding)
    problems.push(`a chunk of ${chunk} tokens of logits (${formatBytes(logitsChunk)}) exceeds one binding (${formatBytes(binding)}): lower the logits chunk`);
  const rollout = kv + rolloutScratch + logitsChunk;

  // Training: activations kept for backward over one minibatch.
  let training = 0;
  let trainingDetail = 'inference only';
  if (run.trainBatch > 0) {
    const R = run.trainBatch * S;
    const perLayer = R * layerTapeWords(a, run.lora ? adaptedProjections(run.lora.targets) : 0, run.lora?.rank ?? 0) * F32;
    const finalRows = R * (2 * D + (a.norm.kind === 'layer' ? 2 : 1)) * F32; // the last layer's output, and its final norm
    training = a.nLayer * perLayer + finalRows + logitsChunk + perLayer;
    trainingDetail = `${a.nLayer} layers × ${formatBytes(perLayer)} kept for backward (minibatch ${run.trainBatch} × ${S} tokens) + one layer of gradients`;
    buffers.push({ name: 'MLP activations of one training layer', bytes: R * a.dFf * F32 });
  }

  items.push({ what: 'kv cache', bytes: kv, detail: `${a.nLayer} layers × 2 × ${a.nKvHead} kv heads × ${a.headDim} × ${S} tokens × batch ${run.batch}, f32` });
  items.push({ what: 'rollout scratch', bytes: rolloutScratch, detail: `one layer of prefill at batch ${run.batch} × ${run.promptTokens} prompt tokens` });
  items.push({ what: 'logits chunk', bytes: logitsChunk, detail: `${chunk} tokens × ${a.vocab.toLocaleString('en-US')} vocabulary, f32` });
  if (training > 0) items.push({ what: 'activations', bytes: training, detail: trainingDetail });

  const fixed = items.filter((i) => i.what === 'weights' || i.what === 'adapters').reduce((s, i) => s + i.bytes, 0);
  const totalBytes = fixed + Math.max(rollout, training);

  const largestBuffer = [...weightBuffers, ...buffers, { name: 'logits chunk', bytes: logitsChunk }].reduce((m, b) => (b.bytes > m.bytes ? b : m), { name: '', bytes: 0 });
  for (const b of buffers) {
    if (b.bytes > binding) problems.push(`the ${b.name} take ${formatBytes(b.bytes)}, more than one binding (${formatBytes(binding)}): lower the batch or the sequence length`);
  }
  // The kernels bind up to 8 storage buffers (the optimiser and loss kernels); every adapter offers 8.
  if (offer.maxStorageBuffersPerShaderStage < 8) problems.push(`the adapter offers ${offer.maxStorageBuffersPerShaderStage} storage buffers per shader stage; the kernels need 8`);
  const budget = offer.memoryBytes ?? null;
  if (budget !== null && totalBytes > budget) {
    const weights = items[0].bytes;
    let lower: string;
    if (fixed >= budget) {
      lower = `Choose a smaller model: the weights alone need ${formatBytes(weights)}${weightDtype === 'f32' && run.weightDtype === undefined ? ' (in f32: this GPU has no shader-f16)' : ` in ${weightDtype}`}`;
    } else if (training > rollout) {
      const fitsAt = largestFitting(run.trainBatch, (tb) => planMemory(a, { ...run, trainBatch: tb }, { ...offer, memoryBytes: null }).totalBytes <= budget);
      lower =
        fitsAt > 0
          ? `Lower the training minibatch to ${fitsAt} (now ${run.trainBatch}), or the response length (now ${run.responseTokens})`
          : `Lower the response length (now ${run.responseTokens}) or the prompt length (now ${run.promptTokens})`;
    } else {
      const fitsAt = largestFitting(run.batch, (b) => planMemory(a, { ...run, batch: b }, { ...offer, memoryBytes: null }).totalBytes <= budget);
      lower =
        fitsAt > 0
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
  return { weightDtype, items, totalBytes, splits, largestBuffer, fits, problems, message };
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
