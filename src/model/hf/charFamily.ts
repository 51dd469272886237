// The playground's character model as a member of the Hugging Face family: a Gpt's parameters laid
// out as HfModel's GPT-2 weights — what uploadWeights gives for the folder charModelFolder.ts writes —
// made on the backend straight from the host values, so they keep the backend's own precision
// (float64 on the CPU backend: the family is exact against the character model there, not rounded
// through an F32 file). A critic's trunk the same way, its value head (1, D) + (1) as the ValueHead
// an HfModel critic reads. Conv1D weights are stored (in, out); HfModel's dense weights are
// nn.Linear's (out, in), and GPT-2's fused c_attn splits into q, k, v by columns [0, D), [D, 2D), [2D, 3D).
//
// Frozen (charFamilyModel: the reference, or any role read without training) or trainable
// (CharFamilyTrainable: every weight and the value head as views into one flat f32 buffer, weight
// decay where the character model applies it, the update through hfBackward.ts and flatOptimizer.ts,
// its state read and set in the character model's own parameter layout: a TrainerModel).
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { lmHeadLogits } from '../../ops/lmHead.ts';
import { matmulBackward } from '../../ops/matmul.ts';
import { type GptConfig, validateGptConfig } from '../config.ts';
import type { Gpt, OptimizerParams } from '../gpt.ts';
import { paramLayout } from '../params.ts';
import type { Decoder, ModelSnapshot, SequenceModel, TrainerModel } from '../sequenceModel.ts';
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
  valueHead: { w: Leaf; b: Leaf } | null;
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
  if (cfg.head === 'reward') throw new Error('the reward model reads one position per row: only a model with the LM or the value head is a SequenceModel');
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
  const valueHead = cfg.head === 'value' ? { w: vector('value_head.weight'), b: vector('value_head.bias') } : null;
  return { weights, valueHead };
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
    const valueHead = leaves.valueHead ? { w: put(leaves.valueHead.w), b: put(leaves.valueHead.b) } : null;
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

/**
 * The character model on HfModel with every parameter trainable: the weights (and a critic's value
 * head) are views into one flat f32 buffer, their gradients views into a second, so one gradNorm
 * and one AdamW step train them all, with the character model's decay mask (dense weights and the
 * value head's weight; not the embeddings, norms or biases). AdamW's moments start at zero.
 */
export class CharFamilyTrainable implements TrainerModel {
  private constructor(
    readonly be: Backend,
    readonly cfg: GptConfig,
    readonly model: HfModel,
    readonly valueHead: ValueHead | null,
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
    const all = [...weightLeaves(leaves.weights), ...(leaves.valueHead ? [leaves.valueHead.w, leaves.valueHead.b] : [])];
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
    [...weightLeaves(index.weights), ...(index.valueHead ? [index.valueHead.w, index.valueHead.b] : [])].forEach((l, k) => {
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
    const head = (buf: Tensor): ValueHead | null => (leaves.valueHead ? { w: viewOf(buf)(leaves.valueHead.w), b: viewOf(buf)(leaves.valueHead.b) } : null);
    return new CharFamilyTrainable(be, cfg, model, head(flat.params), flat, mapWeights(leaves.weights, viewOf(flat.grads)), head(flat.grads), gptIndex);
  }

  get head(): 'lm' | 'value' {
    return this.valueHead ? 'value' : 'lm';
  }

  get maxPositions(): number {
    return this.model.arch.maxPositions;
  }

  /** Sampling through HfModel's KV cache (the LM head only: generate() refuses a critic). */
  decoder(sequences: Tensor, attnMask: Tensor, positions: Tensor): Decoder {
    return hfLanguageModel(this.model).decoder(sequences, attnMask, positions);
  }

  /** logits (B, S, V), or the critic's values (B, S), of every position. */
  infer(tokens: Tensor, attnMask: Tensor, positions: Tensor): Tensor {
    return (this.valueHead ? hfValueModel(this.model, this.valueHead) : hfLanguageModel(this.model)).infer(tokens, attnMask, positions);
  }

  zeroGrad(): void {
    zeroFlatGrads(this.be, this.flat);
  }

  /** The output of every position, as infer, and the tape backward reads. */
  forward(tokens: Tensor, attnMask: Tensor, positions: Tensor): { out: Tensor; cache: ResponseTape } {
    const be = this.be;
    const [B, S] = tokens.shape;
    const tape = sequenceTaped(this.model, { tokens, attnMask, positions });
    const out = this.valueHead
      ? be.reshape(valueHeadForward(be, this.valueHead, tape.scored), [B, S]) // (B·S) → (B, S)
      : be.reshape(lmHeadLogits(be, { hidden: tape.scored, head: this.model.weights.head }), [B, S, this.model.vocab]); // (B·S, V) → (B, S, V)
    return { out, cache: tape };
  }

  /** Adds every parameter's gradient for ∂L/∂out = gradOut (forward's shape); frees the tape. */
  backward(tape: ResponseTape, gradOut: Tensor): void {
    const be = this.be;
    const N = tape.B * tape.S;
    const head = this.model.weights.head;
    if (head.length !== 1) throw new Error('the character family holds its head in one part');
    be.scope(() => {
      // ∂L/∂rows (N, D): through the value head, or the tied LM head logits = rows·Wᵀ (W's gradient lands in the embedding's)
      const gRows =
        this.valueHead && this.headGrads
          ? valueHeadBackward(be, this.valueHead, tape.scored, be.view(gradOut, 0, [N]), this.headGrads)
          : matmulBackward(be, {
              gradOut: be.view(gradOut, 0, [N, this.model.vocab]),
              a: tape.scored,
              b: head[0],
              transB: true,
              gradB: this.weightGrads.head[0],
              needGradA: true,
            })!;
      backwardRowsToWeights(this.model, tape, gRows, this.weightGrads);
    });
    disposeTape(this.model, tape);
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
