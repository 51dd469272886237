// The weight map: canonical names → safetensors entries, with the shape each must have by the
// config, checked before anything is read. Canonical names (one model, four families):
//   embed                          (vocab, D) token embedding
//   positions                      (maxPositions, D) GPT-2's learned position table
//   layers.{l}.inputNorm[Bias]     norm before attention (RMSNorm weight; LayerNorm weight + bias)
//   layers.{l}.q/k/v[Bias]         Llama/Qwen projections, nn.Linear layout (out, in)
//   layers.{l}.qkv[Bias]           GPT-2's fused c_attn, kept fused, Conv1D layout (in, out) = (D, 3D)
//   layers.{l}.o[Bias]             attention output projection
//   layers.{l}.qNorm / kNorm       Qwen3's per-head RMSNorm weights (headDim)
//   layers.{l}.postNorm[Bias]      norm before the MLP
//   layers.{l}.gate/up/down[Bias]  MLP; GPT-2's c_fc is `up` and its mlp.c_proj is `down`
//   finalNorm[Bias]                norm after the last layer
//   lmHead                         (vocab, D) output projection; absent when tied (use `embed`)
// Orientation: nn.Linear stores W as (out, in) and computes x·Wᵀ ('outIn'); GPT-2's Conv1D stores
// (in, out) and computes x·W ('inOut') — pytorch_utils.py Conv1D. The map records which, so the
// loader never guesses. GPT-2's c_attn stays fused because PEFT adapts it as one module
// (`target_modules=["c_attn"]`, lora_B of 3D rows): part 2 exports exactly that.
import type { HfArch } from './arch.ts';
import { HF_DTYPES, type HfDtype } from './dtype.ts';
import type { SafetensorsEntry } from './safetensorsHeader.ts';

export type WeightLayout = 'outIn' | 'inOut' | 'vector' | 'table';

export interface WeightRef {
  /** Canonical name, e.g. "layers.3.q". */
  name: string;
  /** Key in the safetensors file. */
  key: string;
  file: string;
  dtype: HfDtype;
  /** Shape as stored. */
  shape: number[];
  layout: WeightLayout;
  /** Absolute byte range in `file`. */
  begin: number;
  end: number;
}

export interface WeightMap {
  /** Key prefix the checkpoint uses ("model.", "transformer." or ""). */
  prefix: string;
  byName: Map<string, WeightRef>;
  /** Tensors in the files the model does not use (GPT-2's attn.bias masks, rotary caches…). */
  ignored: string[];
}

/** One expected dimension and the config field (or product of fields) it comes from. */
interface Dim {
  n: number;
  from: string;
}

interface Expected {
  name: string;
  key: string;
  dims: Dim[];
  layout: WeightLayout;
}

function expectedWeights(a: HfArch, prefix: string): Expected[] {
  const out: Expected[] = [];
  const gpt2 = a.family === 'gpt2';
  const D: Dim = { n: a.dModel, from: gpt2 ? 'n_embd' : 'hidden_size' };
  const V: Dim = { n: a.vocab, from: 'vocab_size' };
  const F: Dim = { n: a.dFf, from: gpt2 ? 'n_inner' : 'intermediate_size' };
  const hd: Dim = { n: a.headDim, from: 'head_dim' };
  const qOut: Dim = { n: a.nHead * a.headDim, from: `num_attention_heads × head_dim = ${a.nHead} × ${a.headDim}` };
  const kvOut: Dim = { n: a.nKvHead * a.headDim, from: `num_key_value_heads × head_dim = ${a.nKvHead} × ${a.headDim}` };
  const add = (name: string, key: string, dims: Dim[], layout: WeightLayout) => out.push({ name, key: prefix + key, dims, layout });
  const vec = (name: string, key: string, d: Dim) => add(name, key, [d], 'vector');
  if (gpt2) {
    add('embed', 'wte.weight', [V, D], 'table');
    add('positions', 'wpe.weight', [{ n: a.maxPositions, from: 'n_positions' }, D], 'table');
    const threeD: Dim = { n: 3 * a.dModel, from: `3 × n_embd = 3 × ${a.dModel}` };
    for (let l = 0; l < a.nLayer; l++) {
      const h = `h.${l}`;
      const c = `layers.${l}`;
      vec(`${c}.inputNorm`, `${h}.ln_1.weight`, D);
      vec(`${c}.inputNormBias`, `${h}.ln_1.bias`, D);
      add(`${c}.qkv`, `${h}.attn.c_attn.weight`, [D, threeD], 'inOut');
      vec(`${c}.qkvBias`, `${h}.attn.c_attn.bias`, threeD);
      add(`${c}.o`, `${h}.attn.c_proj.weight`, [D, D], 'inOut');
      vec(`${c}.oBias`, `${h}.attn.c_proj.bias`, D);
      vec(`${c}.postNorm`, `${h}.ln_2.weight`, D);
      vec(`${c}.postNormBias`, `${h}.ln_2.bias`, D);
      add(`${c}.up`, `${h}.mlp.c_fc.weight`, [D, F], 'inOut');
      vec(`${c}.upBias`, `${h}.mlp.c_fc.bias`, F);
      add(`${c}.down`, `${h}.mlp.c_proj.weight`, [F, D], 'inOut');
      vec(`${c}.downBias`, `${h}.mlp.c_proj.bias`, D);
    }
    vec('finalNorm', 'ln_f.weight', D);
    vec('finalNormBias', 'ln_f.bias', D);
    return out;
  }
  add('embed', 'embed_tokens.weight', [V, D], 'table');
  for (let l = 0; l < a.nLayer; l++) {
    const h = `layers.${l}`;
    const c = `layers.${l}`;
    vec(`${c}.inputNorm`, `${h}.input_layernorm.weight`, D);
    add(`${c}.q`, `${h}.self_attn.q_proj.weight`, [qOut, D], 'outIn');
    add(`${c}.k`, `${h}.self_attn.k_proj.weight`, [kvOut, D], 'outIn');
    add(`${c}.v`, `${h}.self_attn.v_proj.weight`, [kvOut, D], 'outIn');
    if (a.qkvBias) {
      vec(`${c}.qBias`, `${h}.self_attn.q_proj.bias`, qOut);
      vec(`${c}.kBias`, `${h}.self_attn.k_proj.bias`, kvOut);
      vec(`${c}.vBias`, `${h}.self_attn.v_proj.bias`, kvOut);
    }
    if (a.qkNorm) {
      vec(`${c}.qNorm`, `${h}.self_attn.q_norm.weight`, hd);
      vec(`${c}.kNorm`, `${h}.self_attn.k_norm.weight`, hd);
    }
    add(`${c}.o`, `${h}.self_attn.o_proj.weight`, [D, qOut], 'outIn');
    if (a.oBias) vec(`${c}.oBias`, `${h}.self_attn.o_proj.bias`, D);
    vec(`${c}.postNorm`, `${h}.post_attention_layernorm.weight`, D);
    add(`${c}.gate`, `${h}.mlp.gate_proj.weight`, [F, D], 'outIn');
    add(`${c}.up`, `${h}.mlp.up_proj.weight`, [F, D], 'outIn');
    add(`${c}.down`, `${h}.mlp.down_proj.weight`, [D, F], 'outIn');
    if (a.mlpBias) {
      vec(`${c}.gateBias`, `${h}.mlp.gate_proj.bias`, F);
      vec(`${c}.upBias`, `${h}.mlp.up_proj.bias`, F);
      vec(`${c}.downBias`, `${h}.mlp.down_proj.bias`, D);
    }
  }
  vec('finalNorm', 'norm.weight', D);
  return out;
}

/** The key prefixes a family's checkpoints use: the *ForCausalLM wrapper's, or none (a bare base model). */
function candidatePrefixes(a: HfArch): string[] {
  return a.family === 'gpt2' ? ['transformer.', ''] : ['model.', ''];
}

const configName = 'config.json';

/**
 * Builds the weight map from the union of the files' headers, checking that every tensor the
 * config implies is present with that shape and a float dtype. Throws naming the tensor and the field.
 */
export function buildWeightMap(a: HfArch, entries: Map<string, SafetensorsEntry>, weightsLabel = 'the weights'): WeightMap {
  const embedKey = a.family === 'gpt2' ? 'wte.weight' : 'embed_tokens.weight';
  const prefix = candidatePrefixes(a).find((p) => entries.has(p + embedKey));
  if (prefix === undefined) {
    const tried = candidatePrefixes(a)
      .map((p) => p + embedKey)
      .join(' or ');
    throw new Error(`${weightsLabel}: no ${tried}; is this a ${a.architecture} checkpoint?`);
  }
  const expected = expectedWeights(a, prefix);
  // The head: lm_head.weight sits outside the base model's prefix in every family.
  if (!a.tiedHead)
    expected.push({
      name: 'lmHead',
      key: 'lm_head.weight',
      dims: [
        { n: a.vocab, from: 'vocab_size' },
        { n: a.dModel, from: a.family === 'gpt2' ? 'n_embd' : 'hidden_size' },
      ],
      layout: 'outIn',
    });

  const byName = new Map<string, WeightRef>();
  for (const ex of expected) {
    const e = entries.get(ex.key);
    if (!e) {
      const hint = ex.name === 'lmHead' ? ` (${configName} says tie_word_embeddings false, so the head is a separate tensor)` : '';
      throw new Error(`${weightsLabel}: tensor ${ex.key} is missing${hint}`);
    }
    const want = ex.dims.map((d) => d.n);
    if (e.shape.length !== want.length || e.shape.some((n, i) => n !== want[i])) {
      const i = e.shape.length === want.length ? e.shape.findIndex((n, j) => n !== want[j]) : -1;
      const why = i >= 0 ? `${configName} says ${ex.dims[i].from} ${ex.dims[i].n}` : `${configName} implies a ${want.length}-d tensor`;
      throw new Error(`${why} but ${ex.key} is [${e.shape.join(', ')}] (expected [${want.join(', ')}])`);
    }
    if (!(HF_DTYPES as readonly string[]).includes(e.dtype)) {
      throw new Error(`${e.file}: tensor ${ex.key} has dtype ${e.dtype}; supported: ${HF_DTYPES.join(', ')} (quantised or integer weights are not)`);
    }
    byName.set(ex.name, { name: ex.name, key: e.key, file: e.file, dtype: e.dtype as HfDtype, shape: e.shape, layout: ex.layout, begin: e.begin, end: e.end });
  }
  const used = new Set(expected.map((x) => x.key));
  const ignored = [...entries.keys()].filter((k) => !used.has(k)).sort();
  return { prefix, byName, ignored };
}

/** The weight of a canonical name; throws when the map has none (e.g. "lmHead" of a tied model). */
export function weight(map: WeightMap, name: string): WeightRef {
  const w = map.byName.get(name);
  if (!w) throw new Error(`no weight ${name} in this model`);
  return w;
}

/** The LM head's weight: lmHead, or the embedding when tied. Both are (vocab, D), rows = tokens. */
export function headWeight(map: WeightMap): WeightRef {
  return map.byName.get('lmHead') ?? weight(map, 'embed');
}
