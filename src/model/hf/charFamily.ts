// The playground's character model as a member of the Hugging Face family: a Gpt's parameters laid
// out as HfModel's GPT-2 weights — what uploadWeights gives for the folder charModelFolder.ts writes —
// made on the backend straight from the host values, so they keep the backend's own precision
// (float64 on the CPU backend: the family is exact against the character model there, not rounded
// through an F32 file). A critic's or a reward model's trunk the same way, its value or reward head
// (1, D) + (1) as the ValueHead an HfModel critic reads (the reward head read at one position per
// row). Conv1D weights are stored (in, out); HfModel's dense weights are nn.Linear's (out, in), and
// GPT-2's fused c_attn splits into q, k, v by columns [0, D), [D, 2D), [2D, 3D).
//
// Frozen (charFamilyModel: the reference, or any role read without training) or trainable
// (CharFamilyTrainable: every weight and the scalar head as views into one flat f32 buffer, weight
// decay where the character model applies it, the update through hfBackward.ts and flatOptimizer.ts,
// its state read and set in the character model's own parameter layout: a TrainerModel, and with
// the reward head a RewardTrainable).
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { lmHeadLogits } from '../../ops/lmHead.ts';
import { matmulBackward } from '../../ops/matmul.ts';
import { gatherRows } from '../../ops/slice.ts';
import { type GptConfig, type HeadKind, validateGptConfig } from '../config.ts';
import type { ForwardOptions, Gpt, OptimizerParams } from '../gpt.ts';
import { headParamPrefix, paramLayout } from '../params.ts';
import { scatterScoreGrads, scoreAtIndices } from '../scoreAt.ts';
import type { Decoder, ModelSnapshot, RewardTrainable, SequenceModel, TrainerModel } from '../sequenceModel.ts';
import { charModelConfig } from './charModelFolder.ts';
import { parseHfConfig } from './config.ts';
import { type FlatTrainable, flatOptimizerStep, zeroFlatGrads } from './flatOptimizer.ts';
import { backwardRowsToWeights, disposeTape, type ResponseTape, sequenceTaped, type WeightGrads } from './hfBackward.ts';
import { HfModel } from './hfModel.ts';
import { hfLanguageModel, hfValueModel } from './hfSequenceModel.ts';
import { type ValueHead, valueHeadBackward, valueHeadForward } from './valueHead.ts';
import { type LayerOf, type LinearOf, mapWeights, type NormOf, weightLeaves, type WeightsOf } from './weightLayout.ts';

/** One parameter of the character model in HfModel's layout: host values, shape, and whether AdamW decays it. */
interface Leaf {
  values: Float64Array;
  shape: number[];
  decay: boolean;
}

interface CharLeaves {
  weights: WeightsOf<Leaf>;
  /** The value or reward head, (1, D) + (1); null with the LM head. */
  scalarHead: { w: Leaf; b: Leaf } | null;
}

/** Columns [c0, c1) of a row-major (rows, cols) matrix, transposed: (c1 − c0, rows). */
function columnsTransposed(x: Float64Array, rows: number, cols: number, c0: number, c1: number): Float64Array {
  const out = new Float64Array((c1 - c0) * rows);
  for (let r = 0; r < rows; r++) for (let c = c0; c < c1; c++) out[(c - c0) * rows + r] = x[r * cols + c];
  return out;
}

/** The character model's parameters (host values in paramLayout(cfg)'s order) as HfModel's weights. */
function charLeaves(cfg: GptConfig, flat: ArrayLike<number>): CharLeaves {
  const layout = paramLayout(cfg);
  if (flat.length !== layout.total) throw new Error(`the character model's layout holds ${layout.total} parameters, got ${flat.length}`);
  const entry = (name: string) => {
    const e = layout.byName.get(name);
    if (!e) throw new Error(`the character model has no parameter ${name}`);
    return e;
  };
  const values = (name: string) => {
    const e = entry(name);
    return Float64Array.from({ length: e.size }, (_, i) => flat[e.offset + i]);
  };
  const vector = (name: string): Leaf => ({ values: values(name), shape: entry(name).shape, decay: entry(name).decay });
  /** Conv1D `name` (in, out), columns [c0, c1), as an nn.Linear (c1 − c0, in) with its bias. */
  const linear = (name: string, c0?: number, c1?: number): LinearOf<Leaf> => {
    const w = entry(`${name}.weight`);
    const [inn, out] = w.shape;
    const [from, to] = [c0 ?? 0, c1 ?? out];
    return {
      w: { values: columnsTransposed(values(w.name), inn, out, from, to), shape: [to - from, inn], decay: w.decay },
      b: { values: values(`${name}.bias`).slice(from, to), shape: [to - from], decay: entry(`${name}.bias`).decay },
    };
  };
  const norm = (name: string): NormOf<Leaf> => ({ w: vector(`${name}.weight`), b: vector(`${name}.bias`) });
  const D = cfg.dModel;
  const layers = Array.from({ length: cfg.nLayer }, (_, l): LayerOf<Leaf> => {
    const h = `h.${l}`;
    return {
      inputNorm: norm(`${h}.ln_1`),
      q: linear(`${h}.attn.c_attn`, 0, D),
      k: linear(`${h}.attn.c_attn`, D, 2 * D),
      v: linear(`${h}.attn.c_attn`, 2 * D, 3 * D),
      o: linear(`${h}.attn.c_proj`),
      qNorm: null,
      kNorm: null,
      postNorm: norm(`${h}.ln_2`),
      gate: null,
      up: linear(`${h}.mlp.c_fc`),
      down: linear(`${h}.mlp.c_proj`),
    };
  });
  const embed = [vector('wte.weight')]; // the tied head: the same leaf
  const weights: WeightsOf<Leaf> = { embed, positions: vector('wpe.weight'), layers, finalNorm: norm('ln_f'), head: embed };
  const prefix = headParamPrefix(cfg.head); // the value or reward head: (1, D) + (1), read as a ValueHead
  const scalarHead = prefix ? { w: vector(`${prefix}.weight`), b: vector(`${prefix}.bias`) } : null;
  return { weights, scalarHead };
}

const archOf = (cfg: GptConfig) => parseHfConfig(charModelConfig({ ...cfg, head: 'lm' }));
const weightBytes = (w: WeightsOf<Tensor>) => weightLeaves(w).reduce((s, t) => s + t.size * 4, 0);

export interface CharFamilyModel {
  model: HfModel;
  /** The critic's head; null for a model with the LM head. */
  valueHead: ValueHead | null;
  /** What the trainer's experience stage reads: logits (B, S, V), or the critic's values (B, S). */
  sequence: SequenceModel;
  dispose(): void;
}

/** The character model `gpt` (LM or value head) on HfModel, frozen; one readback of its parameters. */
export async function charFamilyModel(gpt: Gpt): Promise<CharFamilyModel> {
  const be = gpt.be;
  if (gpt.cfg.head === 'reward') throw new Error('the reward model reads one position per row: a frozen SequenceModel has the LM or the value head');
  const leaves = charLeaves(gpt.cfg, await be.read(gpt.params));
  const made: Tensor[] = [];
  const put = (l: Leaf): Tensor => {
    const t = be.tensor(l.values, l.shape);
    made.push(t);
    return t;
  };
  try {
    const w = mapWeights(leaves.weights, put);
    const model = HfModel.fromWeights(be, archOf(gpt.cfg), { ...w, dtype: 'f32', bytes: weightBytes(w) });
    const valueHead = leaves.scalarHead ? { w: put(leaves.scalarHead.w), b: put(leaves.scalarHead.b) } : null;
    return {
      model,
      valueHead,
      sequence: valueHead ? hfValueModel(model, valueHead) : hfLanguageModel(model),
      dispose: () => {
        model.dispose();
        if (valueHead) be.dispose(valueHead.w, valueHead.b);
      },
    };
  } catch (e) {
    be.dispose(...made);
    throw e;
  }
}

const ALIGN = 64; // elements: a view's offset stays 256-byte aligned

/** What CharFamilyTrainable's backward reads: the whole-row tape, and the reward head's scatter index (B·S) i32. */
export interface CharFamilyCache {
  tape: ResponseTape;
  scatterIndex: Tensor | null;
  consumed: boolean;
}

/**
 * The character model on HfModel with every parameter trainable: the weights (and a critic's or a
 * reward model's scalar head) are views into one flat f32 buffer, their gradients views into a
 * second, so one gradNorm and one AdamW step train them all, with the character model's decay mask
 * (dense weights and the scalar head's weight; not the embeddings, norms or biases). AdamW's moments
 * start at zero.
 */
export class CharFamilyTrainable implements TrainerModel, RewardTrainable {
  private constructor(
    readonly be: Backend,
    readonly cfg: GptConfig,
    readonly model: HfModel,
    /** The value or reward head (one output per position, read as a ValueHead); null with the LM head. */
    readonly scalarHead: ValueHead | null,
    private readonly flat: FlatTrainable,
    private readonly weightGrads: WeightGrads,
    private readonly headGrads: ValueHead | null,
    /** (flat size) i32: the character model's paramLayout element of each flat element, −1 on padding. */
    private readonly gptIndex: Int32Array,
  ) {}

  /** The character model `gpt` (LM or value head) with every parameter trainable; one readback of its parameters. */
  static async create(gpt: Gpt): Promise<CharFamilyTrainable> {
    return CharFamilyTrainable.fromHost(gpt.be, gpt.cfg, await gpt.be.read(gpt.params));
  }

  /** The character model of config `cfg` whose parameters are `host` (paramLayout(cfg)'s order: a checkpoint's or a saved state's). */
  static fromHost(be: Backend, config: GptConfig, host: ArrayLike<number>): CharFamilyTrainable {
    const cfg = validateGptConfig({ ...config });
    const leaves = charLeaves(cfg, host);
    const all = [...weightLeaves(leaves.weights), ...(leaves.scalarHead ? [leaves.scalarHead.w, leaves.scalarHead.b] : [])];
    const at = new Map<Leaf, number>();
    let size = 0;
    for (const l of all) {
      at.set(l, size);
      size += Math.ceil(l.values.length / ALIGN) * ALIGN;
    }
    const flatHost = new Float64Array(size);
    const decay = new Float64Array(size);
    for (const l of all) {
      flatHost.set(l.values, at.get(l)!);
      if (l.decay) decay.fill(1, at.get(l)!, at.get(l)! + l.values.length);
    }
    // The same leaves made from the character model's element indices: where each flat element lives in its layout.
    const index = charLeaves(
      cfg,
      Float64Array.from({ length: host.length }, (_, i) => i),
    );
    const gptIndex = new Int32Array(size).fill(-1); // (size): the paramLayout element of each flat element, −1 on padding
    [...weightLeaves(index.weights), ...(index.scalarHead ? [index.scalarHead.w, index.scalarHead.b] : [])].forEach((l, k) => {
      gptIndex.set(l.values, at.get(all[k])!);
    });
    const flat: FlatTrainable = {
      params: be.tensor(flatHost, [size]),
      grads: be.zeros([size]),
      m: be.zeros([size]),
      v: be.zeros([size]),
      decayMask: be.tensor(decay, [size]),
      steps: 0,
    };
    const viewOf = (buf: Tensor) => (l: Leaf) => be.view(buf, at.get(l)!, l.shape);
    const w = mapWeights(leaves.weights, viewOf(flat.params));
    const model = HfModel.fromWeights(be, archOf(cfg), { ...w, dtype: 'f32', bytes: size * 4 });
    const head = (buf: Tensor): ValueHead | null => (leaves.scalarHead ? { w: viewOf(buf)(leaves.scalarHead.w), b: viewOf(buf)(leaves.scalarHead.b) } : null);
    return new CharFamilyTrainable(be, cfg, model, head(flat.params), flat, mapWeights(leaves.weights, viewOf(flat.grads)), head(flat.grads), gptIndex);
  }

  get head(): HeadKind {
    return this.cfg.head;
  }

  get maxPositions(): number {
    return this.model.arch.maxPositions;
  }

  /** Sampling through HfModel's KV cache (the LM head only: generate() refuses a critic). */
  decoder(sequences: Tensor, attnMask: Tensor, positions: Tensor): Decoder {
    return hfLanguageModel(this.model).decoder(sequences, attnMask, positions);
  }

  /** logits (B, S, V) or the critic's values (B, S) of every position; the reward head's scores (B) at opts.scoreAt. */
  infer(tokens: Tensor, attnMask: Tensor, positions: Tensor, opts: ForwardOptions = {}): Tensor {
    if (this.head === 'reward') {
      const { out, cache } = this.forward(tokens, attnMask, positions, opts);
      this.release(cache);
      return out;
    }
    return (this.scalarHead ? hfValueModel(this.model, this.scalarHead) : hfLanguageModel(this.model)).infer(tokens, attnMask, positions);
  }

  zeroGrad(): void {
    zeroFlatGrads(this.be, this.flat);
  }

  /** The output at every position (the reward head's at opts.scoreAt), as infer gives it, and the cache backward reads. */
  forward(tokens: Tensor, attnMask: Tensor, positions: Tensor, opts: ForwardOptions = {}): { out: Tensor; cache: CharFamilyCache } {
    const be = this.be;
    const [B, S] = tokens.shape;
    const tape = sequenceTaped(this.model, { tokens, attnMask, positions });
    if (!this.scalarHead) {
      const logits = lmHeadLogits(be, { hidden: tape.scored, head: this.model.weights.head }); // (B·S, V)
      return { out: be.reshape(logits, [B, S, this.model.vocab]), cache: { tape, scatterIndex: null, consumed: false } };
    }
    const values = valueHeadForward(be, this.scalarHead, tape.scored); // (B·S)
    if (this.head === 'value') return { out: be.reshape(values, [B, S]), cache: { tape, scatterIndex: null, consumed: false } };
    let idx: ReturnType<typeof scoreAtIndices>;
    try {
      idx = scoreAtIndices(opts.scoreAt, B, S);
    } catch (e) {
      be.dispose(values);
      disposeTape(this.model, tape);
      throw e;
    }
    const scores = be.scope(() => be.reshape(gatherRows(be, { x: be.reshape(values, [B * S, 1]), index: be.tensor(idx.gather, [B], 'i32') }), [B])); // (B)
    return { out: scores, cache: { tape, scatterIndex: be.tensor(idx.scatter, [B * S], 'i32'), consumed: false } };
  }

  /** Adds every parameter's gradient for ∂L/∂out = gradOut (forward's shape); frees the cache. */
  backward(cache: CharFamilyCache, gradOut: Tensor): void {
    if (cache.consumed) throw new Error('backward: this forward cache was already used or released');
    const be = this.be;
    const { tape } = cache;
    const N = tape.B * tape.S;
    const head = this.model.weights.head;
    if (head.length !== 1) throw new Error('the character family holds its head in one part');
    be.scope(() => {
      let gRows: Tensor; // ∂L/∂rows (N, D) of the final-normed rows
      if (this.scalarHead && this.headGrads) {
        // ∂L/∂outputs (N) of every position: the critic's as given, the reward head's scattered from its read rows
        const gValues = cache.scatterIndex ? be.reshape(scatterScoreGrads(be, gradOut, cache.scatterIndex), [N]) : be.view(gradOut, 0, [N]);
        gRows = valueHeadBackward(be, this.scalarHead, tape.scored, gValues, this.headGrads);
      } else {
        // the tied LM head, logits = rows·Wᵀ: W's gradient lands in the embedding's
        gRows = matmulBackward(be, {
          gradOut: be.view(gradOut, 0, [N, this.model.vocab]),
          a: tape.scored,
          b: head[0],
          transB: true,
          gradB: this.weightGrads.head[0],
          needGradA: true,
        })!;
      }
      backwardRowsToWeights(this.model, tape, gRows, this.weightGrads);
    });
    this.release(cache);
  }

  /** Frees a cache that will not be back-propagated. */
  release(cache: CharFamilyCache): void {
    if (cache.consumed) return;
    disposeTape(this.model, cache.tape);
    if (cache.scatterIndex) this.be.dispose(cache.scatterIndex);
    cache.consumed = true;
  }

  /** AdamW steps taken (bias correction is 1-based). */
  get steps(): number {
    return this.flat.steps;
  }

  set steps(n: number) {
    this.flat.steps = n;
  }

  /** Parameters and AdamW moments on the device, in this family's flat layout. */
  stateTensors(): { params: Tensor; m: Tensor; v: Tensor } {
    const f = this.flat;
    return { params: f.params, m: f.m, v: f.v };
  }

  /** A host copy of a flat buffer in the character model's paramLayout order (padding dropped). */
  toGptLayout(flat: ArrayLike<number>): Float64Array {
    const out = new Float64Array(paramLayout(this.cfg).total);
    this.gptIndex.forEach((g, i) => {
      if (g >= 0) out[g] = flat[i];
    });
    return out;
  }

  snapshotInto(into: ModelSnapshot | null): ModelSnapshot {
    const n = this.flat.params.size;
    const s = into ?? { params: this.be.zeros([n]), m: this.be.zeros([n]), v: this.be.zeros([n]), steps: 0 };
    this.copyState(this.flat, s);
    return s;
  }

  restoreSnapshot(s: ModelSnapshot): void {
    this.copyState(s, this.flat);
  }

  /** Device copies of the parameters, both moments and the step count, buffer into buffer (the weights' views stay valid). */
  private copyState(from: ModelSnapshot, to: ModelSnapshot): void {
    this.be.copy(from.params, to.params);
    this.be.copy(from.m, to.m);
    this.be.copy(from.v, to.v);
    to.steps = from.steps;
  }

  /** Sets the parameters, AdamW moments and step count from values in the character model's layout (Gpt.setState's arguments). */
  setState(params: ArrayLike<number>, m: ArrayLike<number>, v: ArrayLike<number>, steps: number): void {
    const gptSize = paramLayout(this.cfg).total;
    for (const [name, x] of [
      ['params', params],
      ['m', m],
      ['v', v],
    ] as const)
      if (x.length !== gptSize) throw new Error(`setState: ${name} has ${x.length} values, the character model's layout ${gptSize}`);
    if (!Number.isInteger(steps) || steps < 0) throw new Error(`setState: steps must be a non-negative integer, got ${steps}`);
    const f = this.flat;
    for (const [x, into] of [
      [params, f.params],
      [m, f.m],
      [v, f.v],
    ] as const) {
      const t = this.be.tensor(
        Float64Array.from(this.gptIndex, (g) => (g >= 0 ? x[g] : 0)),
        [into.size],
      );
      this.be.copy(t, into); // into its own buffer: the weights' views stay valid
      this.be.dispose(t);
    }
    f.steps = steps;
  }

  /** One AdamW step (global-norm clipping as the character model's); returns the pre-clip gradient norm (1). */
  optimizerStep(hp: OptimizerParams): Tensor {
    return flatOptimizerStep(this.be, this.flat, hp);
  }

  dispose(): void {
    this.model.dispose(); // views: only the rope table (none for GPT-2) is freed
    const f = this.flat;
    this.be.dispose(f.params, f.grads, f.m, f.v, f.decayMask);
  }
}
