// The GPT-2 style transformer on top of the Backend interface, so the float64 CPU backend is the
// oracle for the whole model. Paired forward/backward in the style of llm.c: forward keeps the
// activations in a cache, backward walks them in reverse, accumulates parameter gradients into the
// flat gradient buffer and disposes every temporary as soon as it is consumed.
//
// Embeddings, then nLayer blocks (src/model/block.ts, shared with generation), R = B·S rows of
// width D, then ln_f and the head: lm → logits = h·wteᵀ (tied, (B,S,V)); value → h·wᵀ + b at every position
// (B,S); reward → the same scalar read at one position per row (B).
import type { Backend } from '../backend/backend.ts';
import type { AdamWParams } from '../reference/nn/optim.ts';
import { expectShape, type Tensor } from '../backend/tensor.ts';
import { Rng } from '../util/rng.ts';
import { block, blockBackward, disposeBlockActs, gptParams, type BlockActs, type GptParams, type LnActs } from './block.ts';
import { LN_EPS, validateGptConfig, type GptConfig, type HeadKind } from './config.ts';
import { decayMask, headParamPrefix, initParams, paramLayout, type ParamLayout } from './params.ts';
import { fill } from '../ops/elementwise.ts';
import { embedding, embeddingBackward } from '../ops/embedding.ts';
import { layerNorm, layerNormBackward } from '../ops/layerNorm.ts';
import { matmul, matmulBackward } from '../ops/matmul.ts';
import { adamw, gradNorm } from '../ops/optim.ts';
import { gatherRows } from '../ops/slice.ts';
import { attention } from '../ops/attention.ts';
import { gptDecoder } from './gptDecoder.ts';
import { scatterScoreGrads, scoreAtIndices } from './scoreAt.ts';
import type { Decoder, ModelSnapshot } from './sequenceModel.ts';

/** A clip bound no finite f32 gradient norm reaches: min(1, NO_CLIP/(‖g‖ + 1e-6)) = 1 (and stays finite in f32). */
export const NO_CLIP = 1e30;

export type { BlockActs, LnActs } from './block.ts';

/** Everything backward needs; owned by the model until backward or release consumes it. */
export interface ForwardCache {
  readonly B: number;
  readonly S: number;
  tokens: Tensor; // (B, S) i32, caller-owned
  positions: Tensor; // (B, S) i32, caller-owned
  /** xs[0] = embeddings, xs[l+1] = output of block l; each (R, D). */
  xs: Tensor[];
  blocks: BlockActs[];
  lnf: LnActs;
  /** reward head: (R) i32 mapping each row to its sequence b if it is read, else to B (a zero row). */
  scatterIndex: Tensor | null;
  consumed: boolean;
}

export interface ForwardOptions {
  /** reward head only: position t (in [0, S)) read for each row b, host values (B). */
  scoreAt?: ArrayLike<number>;
}

export type OptimizerParams = Omit<AdamWParams, 'step'>;

export class Gpt {
  readonly cfg: GptConfig;
  readonly layout: ParamLayout;
  /** Flat parameters, gradients, AdamW moments and the decay mask, each (layout.total) f32. */
  private flat: Tensor;
  readonly grads: Tensor;
  private m: Tensor;
  private v: Tensor;
  readonly decay: Tensor;
  private pViews = new Map<string, Tensor>();
  private gViews = new Map<string, Tensor>();
  /** Typed views of every parameter and of its gradient (the same tensors as param(name) / grad(name)). */
  private p!: GptParams;
  private readonly g: GptParams;
  /** AdamW steps taken (bias correction is 1-based). */
  steps = 0;

  /** A model with fresh GPT-2 initialisation from `seed`, or the given flat parameters (host). */
  constructor(
    readonly be: Backend,
    cfg: GptConfig,
    init: number | ArrayLike<number> = 0,
  ) {
    this.cfg = validateGptConfig({ ...cfg });
    this.layout = paramLayout(this.cfg);
    const host = typeof init === 'number' ? initParams(this.layout, new Rng(init)) : init;
    if (host.length !== this.layout.total) throw new Error(`expected ${this.layout.total} parameters, got ${host.length}`);
    this.flat = be.tensor(host, [this.layout.total]);
    this.grads = be.zeros([this.layout.total]);
    this.m = be.zeros([this.layout.total]);
    this.v = be.zeros([this.layout.total]);
    this.decay = be.tensor(decayMask(this.layout), [this.layout.total]);
    this.makeViews();
    for (const e of this.layout.entries) this.gViews.set(e.name, be.view(this.grads, e.offset, e.shape));
    this.g = gptParams(this.cfg, (n) => this.grad(n), headParamPrefix(this.cfg.head));
  }

  /** Every parameter, typed per layer (views into the flat buffer; replaced when parameters are). */
  get weights(): GptParams {
    return this.p;
  }

  get head(): HeadKind {
    return this.cfg.head;
  }

  get maxPositions(): number {
    return this.cfg.maxSeq;
  }

  /** KV-cached decoding for generate() (gptDecoder.ts: the fused decode step). */
  decoder(sequences: Tensor, attnMask: Tensor, positions: Tensor): Decoder {
    return gptDecoder(this, sequences, attnMask, positions);
  }

  /** The flat parameter tensor (layout.total). */
  get params(): Tensor {
    return this.flat;
  }

  private makeViews(): void {
    this.pViews.clear();
    for (const e of this.layout.entries) this.pViews.set(e.name, this.be.view(this.flat, e.offset, e.shape));
    this.p = gptParams(this.cfg, (n) => this.param(n), headParamPrefix(this.cfg.head));
  }

  param(name: string): Tensor {
    const t = this.pViews.get(name);
    if (!t) throw new Error(`no parameter named ${name}`);
    return t;
  }

  grad(name: string): Tensor {
    const t = this.gViews.get(name);
    if (!t) throw new Error(`no parameter named ${name}`);
    return t;
  }

  /**
   * Installs a new flat parameter tensor (already validated, layout.total) and disposes the old
   * one; the optimiser state restarts. Used by checkpoint loading to swap only on success.
   */
  replaceParams(next: Tensor): void {
    expectShape('replaceParams', next, [this.layout.total]);
    const old = this.flat;
    this.flat = next;
    this.makeViews();
    this.be.dispose(old);
    this.resetOptimizer();
  }

  /** Parameters and AdamW moments on the device (paramLayout order: the model's own). */
  stateTensors(): { params: Tensor; m: Tensor; v: Tensor } {
    return { params: this.flat, m: this.m, v: this.v };
  }

  /** The model's flat buffers already are in paramLayout's order. */
  toGptLayout(flat: ArrayLike<number>): Float64Array {
    return Float64Array.from(flat);
  }

  /** The AdamW moments (layout.total each) and step count, for saving a trainer's full state. */
  get optimizerState(): { m: Tensor; v: Tensor; steps: number } {
    return { m: this.m, v: this.v, steps: this.steps };
  }

  /**
   * Installs parameters, both AdamW moments and the step count together (host arrays the caller
   * validated; each layout.total long). Everything is uploaded before anything is swapped.
   */
  setState(params: ArrayLike<number>, m: ArrayLike<number>, v: ArrayLike<number>, steps: number): void {
    const n = this.layout.total;
    for (const [name, x] of [
      ['params', params],
      ['m', m],
      ['v', v],
    ] as const) {
      if (x.length !== n) throw new Error(`setState: ${name} has ${x.length} values, expected ${n}`);
    }
    if (!Number.isInteger(steps) || steps < 0) throw new Error(`setState: steps must be a non-negative integer, got ${steps}`);
    const p = this.be.tensor(params, [n]);
    const mm = this.be.tensor(m, [n]);
    const vv = this.be.tensor(v, [n]);
    this.be.dispose(this.flat, this.m, this.v);
    this.flat = p;
    this.m = mm;
    this.v = vv;
    this.makeViews();
    this.steps = steps;
  }

  /** Device-side copies of parameters and moments into `into` (allocated when null); no readback. */
  snapshotInto(into: ModelSnapshot | null): ModelSnapshot {
    const n = this.layout.total;
    const s = into ?? { params: this.be.zeros([n]), m: this.be.zeros([n]), v: this.be.zeros([n]), steps: 0 };
    this.be.copy(this.flat, s.params);
    this.be.copy(this.m, s.m);
    this.be.copy(this.v, s.v);
    s.steps = this.steps;
    return s;
  }

  /** Back to a snapshot taken by snapshotInto (device copies). */
  restoreSnapshot(s: ModelSnapshot): void {
    this.be.copy(s.params, this.flat);
    this.be.copy(s.m, this.m);
    this.be.copy(s.v, this.v);
    this.steps = s.steps;
  }

  resetOptimizer(): void {
    this.be.dispose(this.m, this.v);
    this.m = this.be.zeros([this.layout.total]);
    this.v = this.be.zeros([this.layout.total]);
    this.steps = 0;
  }

  /**
   * A model with head `head` whose trunk is a copy of this model's (the critic and the reward model
   * start from the SFT policy). Head parameters come last in the layout, so the trunk is a common
   * prefix of both flat buffers and copies in one go.
   */
  withHead(head: HeadKind, seed = 0): Gpt {
    const out = new Gpt(this.be, { ...this.cfg, head }, seed);
    const trunk = trunkSize(this.layout);
    if (trunk !== trunkSize(out.layout)) throw new Error('trunk layouts differ');
    this.be.copy(this.be.view(this.flat, 0, [trunk]), this.be.view(out.flat, 0, [trunk]));
    return out;
  }

  /** Copies all parameters from a model of the same config (e.g. the frozen reference policy). */
  copyParamsFrom(src: Gpt): void {
    if (src.layout.total !== this.layout.total || src.cfg.head !== this.cfg.head) throw new Error('copyParamsFrom: configs differ');
    this.be.copy(src.flat, this.flat);
  }

  zeroGrad(): void {
    fill(this.be, { x: this.grads, value: 0 });
  }

  /**
   * One AdamW step over the flat buffers with global grad-norm clipping on the device. Returns the
   * pre-clip gradient norm (1), which the caller reads (later) and disposes. A non-finite norm
   * skips the step on the device (weights and moments untouched, as verl skips optimizer.step());
   * the norm is always passed so the kernel can see it: with clipping off (maxGradNorm ≤ 0) the
   * clip bound is NO_CLIP, which scales every finite norm by exactly 1.
   */
  optimizerStep(hp: OptimizerParams): Tensor {
    const norm = gradNorm(this.be, { grads: this.grads });
    this.steps++;
    const maxGradNorm = hp.maxGradNorm > 0 ? hp.maxGradNorm : NO_CLIP;
    adamw(this.be, { params: this.flat, grads: this.grads, m: this.m, v: this.v, decayMask: this.decay, gradNorm: norm, hp: { ...hp, maxGradNorm, step: this.steps } });
    return norm;
  }

  /**
   * tokens (B,S) i32, attnMask (B,S) f32, positions (B,S) i32 (left-padded rows).
   * Returns the head output — lm: logits (B,S,V); value: values (B,S); reward: scores (B) — owned by
   * the caller, and the cache for backward (or release).
   */
  forward(tokens: Tensor, attnMask: Tensor, positions: Tensor, opts: ForwardOptions = {}): { out: Tensor; cache: ForwardCache } {
    const { be, cfg } = this;
    const [B, S] = tokens.shape;
    expectShape('tokens', tokens, [B, S]);
    expectShape('attnMask', attnMask, [B, S]);
    expectShape('positions', positions, [B, S]);
    if (S > cfg.maxSeq) throw new Error(`sequence length ${S} exceeds maxSeq ${cfg.maxSeq}`);
    const R = B * S;
    const W = this.p;
    const xs: Tensor[] = [embedding(be, { tokens, positions, wte: W.wte, wpe: W.wpe })]; // (R, D)
    const blocks: BlockActs[] = [];
    const attend = (qkv: Tensor) => attention(be, { qkv, attnMask, nHead: cfg.nHead }); // (R, D), (B,H,S,S)
    for (let l = 0; l < cfg.nLayer; l++) {
      const { y, acts } = block(be, W.blocks[l], xs[l], attend);
      xs.push(y);
      blocks.push(acts);
    }
    const lnf = layerNorm(be, { x: xs[cfg.nLayer], gamma: W.lnf.w, beta: W.lnf.b, eps: LN_EPS });
    const cache: ForwardCache = { B, S, tokens, positions, xs, blocks, lnf, scatterIndex: null, consumed: false };

    let out: Tensor;
    if (cfg.head === 'lm') {
      out = be.reshape(matmul(be, { a: lnf.y, b: W.wte, transB: true }), [B, S, cfg.vocabSize]);
    } else {
      const values = matmul(be, { a: lnf.y, b: W.head!.w, bias: W.head!.b, transB: true }); // (R, 1)
      if (cfg.head === 'value') {
        out = be.reshape(values, [B, S]);
      } else {
        const { gather, scatter } = scoreAtIndices(opts.scoreAt, B, S);
        const gatherIdx = be.tensor(gather, [B], 'i32');
        cache.scatterIndex = be.tensor(scatter, [R], 'i32');
        out = be.reshape(gatherRows(be, { x: values, index: gatherIdx }), [B]);
        be.dispose(values, gatherIdx);
      }
    }
    return { out, cache };
  }

  /**
   * Back-propagates gradOut (the shape of forward's output) through the model, ACCUMULATING into
   * the flat gradients (zeroGrad first when starting a step), and disposes the cache.
   */
  backward(cache: ForwardCache, gradOut: Tensor): void {
    if (cache.consumed) throw new Error('backward: this forward cache was already used or released');
    const { be, cfg } = this;
    const { B, S } = cache;
    const R = B * S;
    const L = cfg.nLayer;

    const { p: W, g: G } = this;
    let gHead: Tensor; // (R, D) gradient wrt ln_f output
    if (cfg.head === 'lm') {
      expectShape('gradLogits', gradOut, [B, S, cfg.vocabSize]);
      const g = be.view(gradOut, 0, [R, cfg.vocabSize]);
      gHead = matmulBackward(be, { gradOut: g, a: cache.lnf.y, b: W.wte, transB: true, gradB: G.wte, needGradA: true })!;
    } else {
      let gValues: Tensor; // (R, 1)
      let owned: Tensor[] = [];
      if (cfg.head === 'value') {
        expectShape('gradValues', gradOut, [B, S]);
        gValues = be.view(gradOut, 0, [R, 1]);
      } else {
        expectShape('gradScores', gradOut, [B]);
        gValues = scatterScoreGrads(be, gradOut, cache.scatterIndex!);
        owned = [gValues];
      }
      gHead = matmulBackward(be, { gradOut: gValues, a: cache.lnf.y, b: W.head!.w, transB: true, gradB: G.head!.w, gradBias: G.head!.b, needGradA: true })!;
      be.dispose(...owned, cache.scatterIndex);
    }

    const gX = layerNormBackward(be, { gradY: gHead, x: cache.xs[L], gamma: W.lnf.w, mean: cache.lnf.mean, rstd: cache.lnf.rstd, gradGamma: G.lnf.w, gradBeta: G.lnf.b }); // (R, D), updated in place
    be.dispose(gHead, cache.lnf.y, cache.lnf.mean, cache.lnf.rstd, cache.xs[L]);

    for (let l = L - 1; l >= 0; l--) {
      blockBackward(be, W.blocks[l], G.blocks[l], cache.blocks[l], cache.xs[l], gX, cfg.nHead);
      if (l > 0) be.dispose(cache.xs[l]);
    }
    embeddingBackward(be, { gradOut: gX, tokens: cache.tokens, positions: cache.positions, gradWte: G.wte, gradWpe: G.wpe });
    be.dispose(gX, cache.xs[0]);
    cache.consumed = true;
  }

  /** Disposes a cache that will not be back-propagated (inference-only forward). */
  release(cache: ForwardCache): void {
    if (cache.consumed) return;
    const { be } = this;
    be.dispose(...cache.xs, cache.lnf.y, cache.lnf.mean, cache.lnf.rstd, cache.scatterIndex);
    for (const a of cache.blocks) disposeBlockActs(be, a);
    cache.consumed = true;
  }

  /** Forward without keeping a cache. */
  infer(tokens: Tensor, attnMask: Tensor, positions: Tensor, opts: ForwardOptions = {}): Tensor {
    const { out, cache } = this.forward(tokens, attnMask, positions, opts);
    this.release(cache);
    return out;
  }

  /** Host copy of every parameter by name (checkpoints, tests). */
  async readParams(): Promise<Map<string, Float64Array>> {
    const flat = await this.be.read(this.flat);
    return new Map(this.layout.entries.map((e) => [e.name, flat.slice(e.offset, e.offset + e.size)]));
  }

  dispose(): void {
    this.be.dispose(this.flat, this.grads, this.m, this.v, this.decay);
  }
}

/** Elements of the trunk prefix (everything before the head's parameters). */
export function trunkSize(layout: ParamLayout): number {
  const firstHead = layout.entries.find((e) => !e.trunk);
  return firstHead ? firstHead.offset : layout.total;
}

/** Host helper for left-padded rows: position t of the last real token of each row (0 if none). */
export function lastTokenPositions(attnMask: ArrayLike<number>, B: number, S: number): Int32Array {
  const out = new Int32Array(B);
  for (let b = 0; b < B; b++) {
    let last = 0;
    for (let t = 0; t < S; t++) if (attnMask[b * S + t] !== 0) last = t;
    out[b] = last;
  }
  return out;
}
