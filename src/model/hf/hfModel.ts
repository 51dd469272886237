// A Hugging Face causal LM (Llama, Qwen2, Qwen3, GPT-2) on the ops, weights uploaded once
// (deviceWeights.ts). The block is the one modeling_<family>.py writes and the float64 oracle
// (src/reference/hf/forward.ts) composes:
//   h   = x + o(attn(rope(qn(q(n1(x)))), rope(kn(k(n1(x)))), v(n1(x))))
//   out = h + down(silu(gate(n2(h)))·up(n2(h)))      or GPT-2's   h + down(gelu_tanh(up(n2(h))))
// with n1/n2 RMSNorm or LayerNorm, qn/kn Qwen3's per-head RMSNorm, rope where the family has it and
// GPT-2's learned positions added to the embedding instead. The same block runs over full sequences
// (gqaAttention) and over a KV cache (gqaAttentionCached: a prefill, then one row per step).
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { add, gelu } from '../../ops/elementwise.ts';
import { embeddingRows } from '../../ops/embeddingRows.ts';
import { gqaAttention } from '../../ops/gqaAttention.ts';
import { gqaAttentionCached } from '../../ops/gqaAttentionCached.ts';
import { layerNorm } from '../../ops/layerNorm.ts';
import { linear } from '../../ops/linear.ts';
import { lmHeadLogits, lmHeadLogprobs } from '../../ops/lmHead.ts';
import { rmsNorm } from '../../ops/rmsNorm.ts';
import { rope } from '../../ops/rope.ts';
import { gatherRows } from '../../ops/slice.ts';
import { ropeFrequencies } from '../../ops/ropeFrequencies.ts';
import { swiglu } from '../../ops/swiglu.ts';
import { ropeInvFreq } from '../../reference/nn/rope.ts';
import type { HfArch } from './arch.ts';
import { type DeviceLayer, type DeviceLinear, type DeviceNorm, type DeviceWeights, uploadWeights, type WeightDType, weightTensors } from './deviceWeights.ts';
import type { ModelFolder } from './folder.ts';
import { type LoadRun, MemoryRefusal, planLoad } from './loadPlan.ts';
import type { HfFolderInfo } from './open.ts';
import { LORA_TARGET_WEIGHT, type LoraAdapter, loraLinear, type LoraTarget, type ModelAdapters } from './lora.ts';

export interface LoadOptions {
  maxTableBytes?: number;
  /** What the model is loaded to run (the memory plan's batch and lengths); default SMALLEST_RUN. */
  run?: LoadRun;
  /** GPU memory the run may use, when known (WebGPU does not report it). */
  memoryBytes?: number | null;
}

/** B rows of S tokens, left-padded (prompts) and/or right-padded (responses). */
export interface TokenBatch {
  tokens: Tensor; // (B, S) i32
  attnMask: Tensor; // (B, S) f32, 1 = real token
  positions: Tensor; // (B, S) i32, cumsum(mask) − 1, 0 on padding
}

/** A KV cache for B rows of up to Smax positions: a (B, Smax, Hkv·Dh) f32 key and value tensor per layer. */
export interface KvCache {
  B: number;
  Smax: number;
  k: Tensor[];
  v: Tensor[];
}

/**
 * What a decoder layer's attention is, given its q (R, H·Dh) and k, v (R, Hkv·Dh) after norms and
 * rope: the output (R, H·Dh), and the logsumexp (B, H, S) when the backward will need it.
 */
type Attend = (q: Tensor, k: Tensor, v: Tensor, layer: number) => { out: Tensor; lse?: Tensor };

/** A norm's output and what its backward reads: rstd (and LayerNorm's mean). */
interface NormOut {
  y: Tensor;
  rstd: Tensor;
  mean: Tensor | null;
}

/**
 * Every tensor of one decoder layer's forward that its backward reads (src/model/hf/hfBackward.ts).
 * Shapes: R = B·S rows; D model width; H·Dh, Hkv·Dh the attention widths; F the MLP width.
 */
export interface LayerTape {
  x: Tensor; // (R, D) the layer's input (residual stream)
  n1: NormOut; // input norm of x
  qLin: Tensor; // (R, H·Dh) q_proj(n1), before q_norm and rope
  kLin: Tensor; // (R, Hkv·Dh)
  qNormed: NormOut | null; // Qwen3's q_norm over each head (null otherwise)
  kNormed: NormOut | null;
  q: Tensor; // (R, H·Dh) what attention read (after q_norm and rope)
  k: Tensor; // (R, Hkv·Dh)
  v: Tensor; // (R, Hkv·Dh)
  attn: Tensor; // (R, H·Dh) attention's output
  lse: Tensor | null; // (B, H, S)
  h: Tensor; // (R, D) x + o_proj(attn)
  n2: NormOut; // post-attention norm of h
  gate: Tensor | null; // (R, F) gate_proj(n2), gated MLPs
  up: Tensor; // (R, F)
  act: Tensor; // (R, F) swiglu(gate, up) or gelu(up)
  y: Tensor; // (R, D) h + down_proj(act): the next layer's input
  /** s·x·Aᵀ of each adapted projection, for its adapter's gradient. */
  scaledDown: Partial<Record<LoraTarget, Tensor>>;
}

export class HfModel {
  private constructor(
    readonly be: Backend,
    readonly arch: HfArch,
    readonly weights: DeviceWeights,
    /** (Dh/2, 2) i32 rope frequency words; null for GPT-2. */
    private readonly frequencies: Tensor | null,
  ) {}

  /**
   * Uploads a folder opened by openHfFolder; `dtype` is what dense weights and the embedding live in.
   * On WebGPU the memory plan of `run` (default one row of one token) is made first against the
   * device's limits (and `memoryBytes`, when known), and a MemoryRefusal thrown before anything is
   * allocated when it does not fit. `maxTableBytes` caps the bytes of one part of the embedding and
   * head tables (default: one binding).
   */
  static async load(be: Backend, folder: ModelFolder, info: HfFolderInfo, dtype: WeightDType, opts: LoadOptions = {}): Promise<HfModel> {
    const a = info.arch;
    const plan = planLoad(be, a, dtype, opts.run, opts);
    if (plan && !plan.fits) throw new MemoryRefusal(plan);
    return HfModel.fromWeights(be, a, await uploadWeights(be, folder, info, dtype, opts.maxTableBytes));
  }

  /** The model on weights already on the backend (uploadWeights', or the bench's random ones); adds the rope table. */
  static fromWeights(be: Backend, a: HfArch, weights: DeviceWeights): HfModel {
    const frequencies = a.rope ? ropeFrequencies(be, ropeInvFreq(a.headDim, a.rope.theta, a.rope.scaling)) : null;
    return new HfModel(be, a, weights, frequencies);
  }

  private adapters: ModelAdapters | null = null;

  /**
   * LoRA adapters on the decoder layers' projections (PEFT's lora.Linear), or null for the base
   * model alone. The model does not own them: the caller disposes them. GPT-2's c_attn adapter is
   * three here, on q, k and v, sharing one A (loraModules.ts).
   */
  setAdapters(adapters: ModelAdapters | null): void {
    if (adapters) {
      if (adapters.layers.length !== this.arch.nLayer) throw new Error(`LoRA adapters: ${adapters.layers.length} layers for a model of ${this.arch.nLayer}`);
      adapters.layers.forEach((layer, l) => {
        for (const [target, ad] of Object.entries(layer) as [LoraTarget, LoraAdapter][]) {
          const w = this.weights.layers[l][LORA_TARGET_WEIGHT[target]];
          if (!w) throw new Error(`LoRA adapters: layer ${l} has no ${target}`);
          const [out, inF] = w.w.shape;
          const r = adapters.settings.r;
          if (ad.a.shape[0] !== r || ad.a.shape[1] !== inF || ad.b.shape[0] !== out || ad.b.shape[1] !== r)
            throw new Error(`LoRA adapters: layer ${l}'s ${target} takes A (${r}, ${inF}) and B (${out}, ${r}), got A (${ad.a.shape.join(', ')}) and B (${ad.b.shape.join(', ')})`);
        }
      });
    }
    this.adapters = adapters;
  }

  /** The adapters set by setAdapters (null: the base model). */
  get loraAdapters(): ModelAdapters | null {
    return this.adapters;
  }

  /** (Dh/2, 2) i32 rope frequency words (null for GPT-2): what ropeBackward reads. */
  get ropeTable(): Tensor | null {
    return this.frequencies;
  }

  get vocab(): number {
    return this.arch.vocab;
  }

  /** Final-normed hidden states (B·S, D) f32 of a whole batch: what the LM head (and a value head) reads. */
  hidden(batch: TokenBatch): Tensor {
    const S = batch.tokens.shape[1];
    const a = this.arch;
    this.checkPositions(S);
    return this.be.scope(() => {
      let x = this.embedTokens(batch.tokens, batch.positions);
      for (let l = 0; l < a.nLayer; l++) {
        const prev = x;
        x = this.block(x, batch.positions, l, (q, k, v) => gqaAttention(this.be, { q, k, v, attnMask: batch.attnMask, nHead: a.nHead, nKvHead: a.nKvHead, scale: a.attnScale }));
        this.be.dispose(prev);
      }
      return this.norm(x, this.weights.finalNorm);
    });
  }

  /** log p(target) and the entropy of each row's next-token distribution at temperature T, block by block over the vocabulary. */
  rowLogprobs(hidden: Tensor, targets: Tensor, temperature = 1): { logprobs: Tensor; entropy: Tensor } {
    const { logprobs, entropy, saved } = lmHeadLogprobs(this.be, { hidden, head: this.weights.head, tokens: targets, temperature });
    this.be.dispose(saved);
    return { logprobs, entropy };
  }

  /** Empty caches for B rows of up to Smax positions. */
  newCache(B: number, Smax: number): KvCache {
    const a = this.arch;
    this.checkPositions(Smax);
    const width = a.nKvHead * a.headDim;
    const make = () => Array.from({ length: a.nLayer }, () => this.be.zeros([B, Smax, width]));
    return { B, Smax, k: make(), v: make() };
  }

  /**
   * Runs L new positions [start, start + L) of every row through the layers, writing their keys and
   * values into the cache; returns the final-normed hidden state of each row's last new position (B, D).
   * tokens, positions (B, L) i32; attnMask (B, Smax) f32 with the new columns already set.
   */
  extend(cache: KvCache, tokens: Tensor, positions: Tensor, attnMask: Tensor, start: number): Tensor {
    const a = this.arch;
    const [B, L] = tokens.shape;
    if (B !== cache.B || start + L > cache.Smax) throw new Error(`extend: rows [${start}, ${start + L}) of ${B} sequences do not fit a cache of ${cache.B} × ${cache.Smax}`);
    return this.be.scope(() => {
      let x = this.embedTokens(tokens, positions);
      for (let l = 0; l < a.nLayer; l++) {
        const prev = x;
        x = this.block(x, positions, l, (q, k, v, layer) => ({
          out: gqaAttentionCached(this.be, { q, k, v, kCache: cache.k[layer], vCache: cache.v[layer], attnMask, start, nHead: a.nHead, nKvHead: a.nKvHead, scale: a.attnScale }),
        }));
        this.be.dispose(prev);
      }
      const last = L === 1 ? x : this.lastRows(x, B, L);
      return this.norm(last, this.weights.finalNorm);
    });
  }

  /** logits (B, V) f32 of final-normed hidden rows (B, D): what a sampling step draws from. */
  logits(hidden: Tensor): Tensor {
    return lmHeadLogits(this.be, { hidden, head: this.weights.head });
  }

  disposeCache(cache: KvCache): void {
    this.be.dispose(...cache.k, ...cache.v);
  }

  dispose(): void {
    this.be.dispose(...weightTensors(this.weights), this.frequencies);
  }

  private checkPositions(S: number): void {
    const a = this.arch;
    // GPT-2's learned table has maxPositions rows; RoPE models are trained up to the same limit.
    if (S > a.maxPositions) throw new Error(`${S} positions exceed the model's max_position_embeddings ${a.maxPositions}`);
  }

  /** (R, D) f32: token rows of the embedding (+ GPT-2's position rows). */
  embedTokens(tokens: Tensor, positions: Tensor): Tensor {
    const be = this.be;
    const R = tokens.size;
    const D = this.arch.dModel;
    return be.scope(() => {
      const x = be.reshape(embeddingRows(be, { tokens, table: this.weights.embed }), [R, D]);
      if (!this.weights.positions) return x;
      return add(be, { a: x, b: be.reshape(embeddingRows(be, { tokens: positions, table: [this.weights.positions] }), [R, D]) });
    });
  }

  /** Rows L−1, 2L−1, … of x (B·L, D): each sequence's last row. */
  private lastRows(x: Tensor, B: number, L: number): Tensor {
    const index = this.be.tensor(
      Int32Array.from({ length: B }, (_, b) => (b + 1) * L - 1),
      [B],
      'i32',
    );
    return gatherRows(this.be, { x, index });
  }

  private norm(x: Tensor, n: DeviceNorm): Tensor {
    const r = this.normed(x, n);
    this.be.dispose(r.rstd, r.mean);
    return r.y;
  }

  /** The family's norm of x (RMSNorm or LayerNorm) with what its backward reads. */
  normed(x: Tensor, n: DeviceNorm): NormOut {
    const a = this.arch;
    if (a.norm.kind === 'rms') return { ...rmsNorm(this.be, { x, weight: n.w, eps: a.norm.eps }), mean: null };
    return layerNorm(this.be, { x, gamma: n.w, beta: n.b!, eps: a.norm.eps });
  }

  /** One decoder layer over x (R, D) → (R, D); temporaries freed. */
  private block(x: Tensor, positions: Tensor, layer: number, attend: Attend): Tensor {
    return this.be.scope(() => this.layerForward(x, positions, layer, attend).y);
  }

  /**
   * One decoder layer over x (R, D), every intermediate kept (the caller's scope frees what it does
   * not return). GPT-2's layers have LayerNorm and GELU in place of RMSNorm and SwiGLU.
   */
  layerForward(x: Tensor, positions: Tensor, layer: number, attend: Attend): LayerTape {
    const L: DeviceLayer = this.weights.layers[layer];
    const be = this.be;
    const scaledDown: Partial<Record<LoraTarget, Tensor>> = {};
    const lin = (input: Tensor, l: DeviceLinear, residual: Tensor | null, target: LoraTarget): Tensor => {
      const adapter = this.adapters?.layers[layer][target];
      if (!adapter) return linear(be, { x: input, weight: l.w, bias: l.b, residual });
      const r = loraLinear(be, { x: input, weight: l.w, bias: l.b, residual, adapter });
      scaledDown[target] = r.scaledDown;
      return r.y;
    };
    const n1 = this.normed(x, L.inputNorm);
    const qLin = lin(n1.y, L.q, null, 'q_proj');
    const kLin = lin(n1.y, L.k, null, 'k_proj');
    const v = lin(n1.y, L.v, null, 'v_proj');
    // Qwen3's q_norm / k_norm: RMSNorm over each head's Dh values of (R, H·Dh).
    const eps = this.arch.norm.eps;
    const qNormed = L.qNorm ? { ...rmsNorm(be, { x: qLin, weight: L.qNorm, eps }), mean: null } : null;
    const kNormed = L.kNorm ? { ...rmsNorm(be, { x: kLin, weight: L.kNorm, eps }), mean: null } : null;
    let q = qNormed?.y ?? qLin;
    let k = kNormed?.y ?? kLin;
    if (this.frequencies) {
      q = rope(be, { x: q, positions, frequencies: this.frequencies });
      k = rope(be, { x: k, positions, frequencies: this.frequencies });
    }
    const { out: attn, lse } = attend(q, k, v, layer);
    const h = lin(attn, L.o, x, 'o_proj');
    const n2 = this.normed(h, L.postNorm);
    const gate = L.gate ? lin(n2.y, L.gate, null, 'gate_proj') : null;
    const up = lin(n2.y, L.up, null, 'up_proj');
    const act = gate ? swiglu(be, { gate, up }) : gelu(be, { x: up });
    const y = lin(act, L.down, h, 'down_proj');
    return { x, n1, qLin, kLin, qNormed, kNormed, q, k, v, attn, lse: lse ?? null, h, n2, gate, up, act, y, scaledDown };
  }
}
