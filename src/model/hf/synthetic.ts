// Tiny (or real-shaped) Hugging Face model folders with random weights from a seed, in the exact
// layout transformers writes: config.json, model.safetensors or model-0000k-of-0000n.safetensors +
// model.safetensors.index.json, tokenizer.json (a small byte-level BPE trained here), a
// tokenizer_config.json with a ChatML chat template, and a generation_config.json with a list of
// eos ids. The tests open them as a user's folder would be opened, and the bench builds random
// models at SmolLM2-135M and Qwen3-0.6B shapes: tensors are generated and written block by block
// through a sink, so a multi-GB model never sits in memory (`describeSynthetic` gives the shapes alone).
//
// Families: llama (plain RoPE, untied by default), llama3 (Llama with rope_scaling type llama3,
// tied), qwen2 (q/k/v bias), qwen3 (q_norm/k_norm, head_dim·heads ≠ hidden, tied), gpt2 (Conv1D
// weights (in, out), keys with or without "transformer.").
// Bad folders (`bad`) reproduce what a loader must refuse: a T5 config, a truncated weights file, a
// config whose hidden size disagrees with the weights, no tokenizer.json, and a few unsupported features.
import { Rng } from '../../util/rng.ts';
import { ARCHITECTURE_OF, type HfArch, type HfFamily } from './arch.ts';
import { trainByteLevelBpe, type PreTokenizerStyle } from './bpeTrain.ts';
import { parseHfConfig } from './config.ts';
import type { HfDtype } from './dtype.ts';
import { MemoryFolder } from './folder.ts';
import { maxTokenizerId, SINGLE_WEIGHTS, WEIGHTS_INDEX } from './open.ts';
import { safetensorsHeaderBytes } from './safetensorsHeader.ts';
import { streamHfSafetensors, tensorBytes, type ByteSink, type TensorSpec } from './safetensorsWrite.ts';

export type SyntheticFamily = HfFamily | 'llama3';
export const SYNTHETIC_FAMILIES: readonly SyntheticFamily[] = ['llama', 'llama3', 'qwen2', 'qwen3', 'gpt2'];

export type BadFolder = 't5' | 'truncated' | 'wrong-hidden' | 'no-tokenizer' | 'quantized' | 'sliding-window' | 'moe' | 'yarn';
export const BAD_FOLDERS: readonly BadFolder[] = ['t5', 'truncated', 'wrong-hidden', 'no-tokenizer', 'quantized', 'sliding-window', 'moe', 'yarn'];

export interface SyntheticDims {
  nLayer: number;
  dModel: number;
  nHead: number;
  nKvHead: number;
  headDim: number;
  dFf: number;
  /** config vocab_size: rows of the embedding (≥ the tokenizer's ids, like Qwen's padded vocabularies). */
  vocab: number;
  maxPositions: number;
}

export interface SyntheticSpec {
  family: SyntheticFamily;
  dtype: HfDtype;
  /** 1 = one model.safetensors; n > 1 = n shards + index. */
  shards: number;
  seed: number;
  dims?: Partial<SyntheticDims>;
  /** tie_word_embeddings; default: llama and qwen2 untied, the others tied. */
  tied?: boolean;
  /** GPT-2 only: keys under "transformer." (GPT2LMHeadModel's save) or bare (openai-community/gpt2's files). Default true. */
  gpt2Prefix?: boolean;
  /** GPT-2 only: also write the h.{l}.attn.bias causal-mask buffers old checkpoints carry (the loader ignores them). */
  gpt2MaskBuffers?: boolean;
  bad?: BadFolder;
  /** A tokenizer.json to write instead of the family's synthetic one (its added tokens must hold SPECIAL_TOKENS). */
  tokenizer?: Record<string, unknown>;
  /** The weights' values by safetensors key instead of random ones: how a trained model (the shipped chat model) is written. */
  values?: (key: string) => ArrayLike<number>;
}

/** Real shapes for the bench (random weights; the tokenizer stays the small one). */
export const REAL_SHAPES: Record<string, { family: SyntheticFamily; tied: boolean; dims: SyntheticDims }> = {
  'smollm2-135m': { family: 'llama', tied: true, dims: { nLayer: 30, dModel: 576, nHead: 9, nKvHead: 3, headDim: 64, dFf: 1536, vocab: 49152, maxPositions: 8192 } },
  'qwen3-0.6b': { family: 'qwen3', tied: true, dims: { nLayer: 28, dModel: 1024, nHead: 16, nKvHead: 8, headDim: 128, dFf: 3072, vocab: 151936, maxPositions: 40960 } },
};

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
/** Byte symbols + merges of the synthetic tokenizer at most (specials come on top). */
export const SYNTHETIC_BPE_SIZE = 320;

/** ChatML, as Qwen's templates write it; `bos_token` first for the Llama families (their templates start with it). */
export function chatmlTemplate(withBos: boolean): string {
  return (
    (withBos ? '{{- bos_token }}' : '') +
    "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{%- endfor %}" +
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
  );
}

/** A fixed little corpus: sentences, numbers and arithmetic asked in words, as chat turns. */
export function syntheticCorpus(): string {
  const r = new Rng(12345);
  const lines = [
    'The quick brown fox jumps over the lazy dog.',
    'A language model predicts the next token from the tokens before it.',
    'Reinforcement learning from human feedback trains a policy with a reward.',
    "It's the answer; isn't it? They'll see, we'd know, you're right.",
    'Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 2024 3.14',
    'Unicode: café, naïve, 数字, emoji 🎉 and tabs\tand\nnew lines.',
  ];
  for (let i = 0; i < 200; i++) {
    const a = r.int(0, 100);
    const b = r.int(0, 100);
    lines.push(`<|im_start|>user\nWhat is ${a} + ${b}? Answer with the number.<|im_end|>\n<|im_start|>assistant\n${a + b}<|im_end|>\n`);
  }
  return lines.join('\n');
}

const tokenizerCache = new Map<PreTokenizerStyle, Record<string, unknown>>();

/** The synthetic tokenizer.json of a style (trained once per process, deterministic). */
export function syntheticTokenizerJson(style: PreTokenizerStyle): Record<string, unknown> {
  let t = tokenizerCache.get(style);
  if (!t) {
    t = trainByteLevelBpe(syntheticCorpus(), { vocabSize: SYNTHETIC_BPE_SIZE, style, specialTokens: SPECIAL_TOKENS }).tokenizerJson;
    tokenizerCache.set(style, t);
  }
  return structuredClone(t);
}

/**
 * The tokenizer.json a family's folder gets: Llama's tokenizers add BOS in the post-processor
 * (a TemplateProcessing after ByteLevel, as Llama 3's tokenizer.json), the others add nothing.
 */
export function familyTokenizerJson(family: SyntheticFamily): Record<string, unknown> {
  const json = syntheticTokenizerJson(styleOf(family));
  if (baseFamily(family) !== 'llama') return json;
  const bos = '<|endoftext|>';
  const bosId = syntheticSpecialIds(family).endoftext;
  const special = (type_id: number) => ({ SpecialToken: { id: bos, type_id } });
  json.post_processor = {
    type: 'Sequence',
    processors: [
      json.post_processor,
      {
        type: 'TemplateProcessing',
        single: [special(0), { Sequence: { id: 'A', type_id: 0 } }],
        pair: [special(0), { Sequence: { id: 'A', type_id: 0 } }, special(1), { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } },
      },
    ],
  };
  return json;
}

const baseFamily = (f: SyntheticFamily): HfFamily => (f === 'llama3' ? 'llama' : f);
const styleOf = (f: SyntheticFamily): PreTokenizerStyle => (f === 'qwen2' || f === 'qwen3' ? 'qwen2' : 'gpt2');

/** Ids of <|endoftext|>, <|im_start|> and <|im_end|> in the synthetic tokenizer of a family (or in `tokenizer`). */
export function syntheticSpecialIds(family: SyntheticFamily, tokenizer?: Record<string, unknown>): { endoftext: number; imStart: number; imEnd: number } {
  const added = (tokenizer ?? syntheticTokenizerJson(styleOf(family))).added_tokens as { id: number; content: string }[];
  const id = (c: string) => {
    const t = added.find((x) => x.content === c);
    if (!t) throw new Error(`the tokenizer has no ${c} among its added tokens`);
    return t.id;
  };
  return { endoftext: id('<|endoftext|>'), imStart: id('<|im_start|>'), imEnd: id('<|im_end|>') };
}

export function resolveDims(spec: SyntheticSpec): SyntheticDims {
  const f = baseFamily(spec.family);
  const d = spec.dims ?? {};
  const dModel = d.dModel ?? 64;
  const nHead = d.nHead ?? 4;
  const dims: SyntheticDims = {
    nLayer: d.nLayer ?? 2,
    dModel,
    nHead,
    nKvHead: f === 'gpt2' ? nHead : (d.nKvHead ?? nHead / 2),
    // Qwen3's default shape has head_dim·heads = 96 ≠ hidden 64, as Qwen3-0.6B (2048 ≠ 1024)
    headDim: f === 'gpt2' ? dModel / nHead : (d.headDim ?? (f === 'qwen3' ? 24 : dModel / nHead)),
    dFf: d.dFf ?? (f === 'gpt2' ? 4 * dModel : 2 * dModel),
    vocab: d.vocab ?? 384,
    maxPositions: d.maxPositions ?? 128,
  };
  for (const [k, v] of Object.entries(dims)) if (!Number.isSafeInteger(v) || v < 1) throw new Error(`synthetic dims: ${k} must be a positive integer, got ${v}`);
  const ids = spec.tokenizer ? maxTokenizerId(spec.tokenizer) + 1 : SYNTHETIC_BPE_SIZE + SPECIAL_TOKENS.length;
  if (dims.vocab < ids) throw new Error(`synthetic dims: vocab must be ≥ ${ids} (the tokenizer's ids)`);
  return dims;
}

const isTied = (spec: SyntheticSpec) => spec.tied ?? !(spec.family === 'llama' || spec.family === 'qwen2');

/** The config.json of a spec (before any `bad` mutation). */
export function syntheticConfig(spec: SyntheticSpec): Record<string, unknown> {
  const dims = resolveDims(spec);
  const f = baseFamily(spec.family);
  const torchDtype = { BF16: 'bfloat16', F16: 'float16', F32: 'float32' }[spec.dtype];
  const ids = syntheticSpecialIds(spec.family, spec.tokenizer);
  const common = {
    architectures: [ARCHITECTURE_OF[f]],
    model_type: f,
    torch_dtype: torchDtype,
    tie_word_embeddings: isTied(spec),
    vocab_size: dims.vocab,
    bos_token_id: ids.endoftext,
    eos_token_id: ids.imEnd,
  };
  if (f === 'gpt2') {
    return {
      ...common,
      n_layer: dims.nLayer,
      n_embd: dims.dModel,
      n_head: dims.nHead,
      n_inner: dims.dFf,
      n_positions: dims.maxPositions,
      activation_function: 'gelu_new',
      layer_norm_epsilon: 1e-5,
    };
  }
  const cfg: Record<string, unknown> = {
    ...common,
    hidden_size: dims.dModel,
    intermediate_size: dims.dFf,
    num_hidden_layers: dims.nLayer,
    num_attention_heads: dims.nHead,
    num_key_value_heads: dims.nKvHead,
    head_dim: dims.headDim,
    hidden_act: 'silu',
    max_position_embeddings: dims.maxPositions,
    rms_norm_eps: 1e-6,
    rope_theta: f === 'llama' ? 10000 : 1000000,
    rope_scaling: null,
  };
  if (spec.family === 'llama3') {
    cfg.rope_theta = 500000;
    // factor and original context scaled to the tiny model so all three frequency bands occur
    cfg.rope_scaling = { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 64 };
  }
  if (f === 'qwen2' || f === 'qwen3') Object.assign(cfg, { use_sliding_window: false, sliding_window: 4096, max_window_layers: dims.nLayer, attention_bias: false });
  return cfg;
}

/** The weights a spec writes, in file order (HF's state_dict order), with the key prefix of its family. */
export function syntheticTensors(spec: SyntheticSpec): TensorSpec[] {
  const d = resolveDims(spec);
  const f = baseFamily(spec.family);
  const dt = spec.dtype;
  const out: TensorSpec[] = [];
  const t = (key: string, shape: number[]) => out.push({ key, dtype: dt, shape });
  const D = d.dModel;
  if (f === 'gpt2') {
    const p = (spec.gpt2Prefix ?? true) ? 'transformer.' : '';
    t(`${p}wte.weight`, [d.vocab, D]);
    t(`${p}wpe.weight`, [d.maxPositions, D]);
    for (let l = 0; l < d.nLayer; l++) {
      const h = `${p}h.${l}`;
      t(`${h}.ln_1.weight`, [D]);
      t(`${h}.ln_1.bias`, [D]);
      if (spec.gpt2MaskBuffers) out.push({ key: `${h}.attn.bias`, dtype: 'F32', shape: [1, 1, d.maxPositions, d.maxPositions] });
      t(`${h}.attn.c_attn.weight`, [D, 3 * D]);
      t(`${h}.attn.c_attn.bias`, [3 * D]);
      t(`${h}.attn.c_proj.weight`, [D, D]);
      t(`${h}.attn.c_proj.bias`, [D]);
      t(`${h}.ln_2.weight`, [D]);
      t(`${h}.ln_2.bias`, [D]);
      t(`${h}.mlp.c_fc.weight`, [D, d.dFf]);
      t(`${h}.mlp.c_fc.bias`, [d.dFf]);
      t(`${h}.mlp.c_proj.weight`, [d.dFf, D]);
      t(`${h}.mlp.c_proj.bias`, [D]);
    }
    t(`${p}ln_f.weight`, [D]);
    t(`${p}ln_f.bias`, [D]);
  } else {
    const q = d.nHead * d.headDim;
    const kv = d.nKvHead * d.headDim;
    t('model.embed_tokens.weight', [d.vocab, D]);
    for (let l = 0; l < d.nLayer; l++) {
      const h = `model.layers.${l}`;
      t(`${h}.input_layernorm.weight`, [D]);
      t(`${h}.self_attn.q_proj.weight`, [q, D]);
      if (f === 'qwen2') t(`${h}.self_attn.q_proj.bias`, [q]);
      t(`${h}.self_attn.k_proj.weight`, [kv, D]);
      if (f === 'qwen2') t(`${h}.self_attn.k_proj.bias`, [kv]);
      t(`${h}.self_attn.v_proj.weight`, [kv, D]);
      if (f === 'qwen2') t(`${h}.self_attn.v_proj.bias`, [kv]);
      if (f === 'qwen3') {
        t(`${h}.self_attn.q_norm.weight`, [d.headDim]);
        t(`${h}.self_attn.k_norm.weight`, [d.headDim]);
      }
      t(`${h}.self_attn.o_proj.weight`, [D, q]);
      t(`${h}.post_attention_layernorm.weight`, [D]);
      t(`${h}.mlp.gate_proj.weight`, [d.dFf, D]);
      t(`${h}.mlp.up_proj.weight`, [d.dFf, D]);
      t(`${h}.mlp.down_proj.weight`, [D, d.dFf]);
    }
    t('model.norm.weight', [D]);
  }
  if (!isTied(spec)) t('lm_head.weight', [d.vocab, D]);
  return out;
}

/** How a tensor's random values are drawn: norms near 1, biases small, matrices scaled by fan-in. */
function valueScale(key: string, shape: number[], dModel: number): { mean: number; std: number } {
  if (/(norm|ln_\d|ln_f)\.weight$/.test(key)) return { mean: 1, std: 0.1 };
  if (key.endsWith('.bias')) return { mean: 0, std: 0.1 };
  if (/(embed_tokens|wte)\.weight$/.test(key) || key === 'lm_head.weight') return { mean: 0, std: 3 / Math.sqrt(dModel) };
  if (key.endsWith('wpe.weight')) return { mean: 0, std: 0.3 };
  // nn.Linear (out, in) reads x (in); Conv1D (in, out) too: the fan-in is the "in" side
  const fanIn = key.includes('.c_') ? shape[0] : shape[shape.length - 1];
  return { mean: 0, std: 1 / Math.sqrt(fanIn) };
}

/** FNV-1a of a string, to give every tensor its own random stream. */
function hashKey(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Where the generator writes: whole small files, or a stream per large one. */
export interface FolderSink {
  writeFile(name: string, bytes: Uint8Array): Promise<void>;
  open(name: string): Promise<ByteSink>;
}

export function memorySink(folder: MemoryFolder): FolderSink {
  return {
    async writeFile(name, bytes) {
      folder.files.set(name, bytes);
    },
    async open(name) {
      const parts: Uint8Array[] = [];
      return {
        async write(b) {
          parts.push(b.slice());
        },
        async close() {
          const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
          let at = 0;
          for (const p of parts) {
            all.set(p, at);
            at += p.length;
          }
          folder.files.set(name, all);
        },
      };
    },
  };
}

/** Drops every byte past `limit`: a weights file that lies about its length. */
function truncating(sink: ByteSink, limit: number): ByteSink {
  let written = 0;
  return {
    async write(b) {
      const keep = Math.max(0, Math.min(b.length, limit - written));
      if (keep > 0) await sink.write(b.subarray(0, keep));
      written += b.length;
    },
    close: () => sink.close(),
  };
}

export const shardName = (k: number, n: number) => `model-${String(k).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;

/** Tensors split into `n` shards of about equal bytes, in order. */
export function splitShards(tensors: TensorSpec[], n: number): TensorSpec[][] {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`shards must be a positive integer, got ${n}`);
  if (n > tensors.length) throw new Error(`shards ${n} exceeds the number of tensors (${tensors.length})`);
  const total = tensors.reduce((s, t) => s + tensorBytes(t), 0);
  const shards: TensorSpec[][] = Array.from({ length: n }, () => []);
  let acc = 0;
  let k = 0;
  for (let i = 0; i < tensors.length; i++) {
    const left = tensors.length - i;
    // move on when this shard has its share, keeping at least one tensor for every later shard
    if (k < n - 1 && shards[k].length > 0 && (acc >= ((k + 1) * total) / n || left <= n - 1 - k)) k++;
    shards[k].push(tensors[i]);
    acc += tensorBytes(tensors[i]);
  }
  return shards;
}

export interface SyntheticDescription {
  config: Record<string, unknown>;
  /** HfArch of the config (what the loader will see; null for a bad config it refuses). */
  arch: HfArch | null;
  /** Files and the tensors in each. */
  files: { name: string; tensors: TensorSpec[] }[];
  weightBytes: number;
}

/** Shapes and files of a spec without generating anything (for memory plans of real-shape models). */
export function describeSynthetic(spec: SyntheticSpec): SyntheticDescription {
  const config = badConfig(spec, syntheticConfig(spec));
  let arch: HfArch | null = null;
  try {
    arch = parseHfConfig(config);
  } catch {
    arch = null;
  }
  const tensors = syntheticTensors(spec);
  const shards = splitShards(tensors, spec.shards);
  const files = shards.map((ts, k) => ({ name: spec.shards === 1 ? SINGLE_WEIGHTS : shardName(k + 1, spec.shards), tensors: ts }));
  return { config, arch, files, weightBytes: tensors.reduce((s, t) => s + tensorBytes(t), 0) };
}

function badConfig(spec: SyntheticSpec, cfg: Record<string, unknown>): Record<string, unknown> {
  switch (spec.bad) {
    case 't5':
      return {
        architectures: ['T5ForConditionalGeneration'],
        model_type: 't5',
        is_encoder_decoder: true,
        d_model: resolveDims(spec).dModel,
        num_layers: 2,
        vocab_size: resolveDims(spec).vocab,
      };
    case 'wrong-hidden':
      return baseFamily(spec.family) === 'gpt2' ? { ...cfg, n_embd: (cfg.n_embd as number) + 16 } : { ...cfg, hidden_size: (cfg.hidden_size as number) + 16 };
    case 'quantized':
      return { ...cfg, quantization_config: { quant_method: 'gptq', bits: 4, group_size: 128 } };
    case 'sliding-window':
      return { ...cfg, use_sliding_window: true, sliding_window: 16, max_window_layers: 0 };
    case 'moe':
      return { ...cfg, num_experts: 8, num_experts_per_tok: 2 };
    case 'yarn':
      return { ...cfg, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 32 } };
    default:
      return cfg;
  }
}

function tokenizerConfigOf(spec: SyntheticSpec): Record<string, unknown> {
  const llama = baseFamily(spec.family) === 'llama';
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: llama ? '<|endoftext|>' : null,
    eos_token: '<|im_end|>',
    pad_token: '<|endoftext|>',
    unk_token: null,
    model_max_length: resolveDims(spec).maxPositions,
    clean_up_tokenization_spaces: false,
    chat_template: chatmlTemplate(llama),
  };
}

/** Writes the folder of `spec` through `sink`; returns the file names written. */
export async function writeSynthetic(spec: SyntheticSpec, sink: FolderSink, blockElems = 1 << 22): Promise<string[]> {
  const desc = describeSynthetic(spec);
  const dims = resolveDims(spec);
  const enc = (v: unknown) => new TextEncoder().encode(`${JSON.stringify(v, null, 2)}\n`);
  const written: string[] = [];
  const put = async (name: string, bytes: Uint8Array) => {
    await sink.writeFile(name, bytes);
    written.push(name);
  };
  await put('config.json', enc(desc.config));
  const tokenizer = spec.tokenizer ?? familyTokenizerJson(spec.family);
  if (spec.bad !== 'no-tokenizer') await put('tokenizer.json', new TextEncoder().encode(JSON.stringify(tokenizer)));
  await put('tokenizer_config.json', enc(tokenizerConfigOf(spec)));
  const ids = syntheticSpecialIds(spec.family, spec.tokenizer);
  await put(
    'generation_config.json',
    enc({ bos_token_id: ids.endoftext, eos_token_id: [ids.imEnd, ids.endoftext], pad_token_id: ids.endoftext, do_sample: true, temperature: 0.7, top_p: 0.8, top_k: 20 }),
  );

  const rngs = new Map<string, Rng>();
  const fill = (t: TensorSpec, start: number, count: number): Float64Array => {
    if (spec.values) return trainedValues(spec.values, t).subarray(start, start + count);
    if (start === 0) rngs.set(t.key, new Rng((spec.seed ^ hashKey(t.key)) >>> 0));
    const r = rngs.get(t.key)!;
    const out = new Float64Array(count);
    if (t.key.endsWith('.attn.bias')) {
      // GPT-2's causal mask buffer: lower-triangular ones (P, P)
      const P = t.shape[3];
      for (let i = 0; i < count; i++) out[i] = (start + i) % P <= Math.floor((start + i) / P) ? 1 : 0;
      return out;
    }
    const { mean, std } = valueScale(t.key, t.shape, dims.dModel);
    for (let i = 0; i < count; i++) out[i] = mean + std * r.normal();
    return out;
  };
  for (const f of desc.files) {
    let target = await sink.open(f.name);
    if (spec.bad === 'truncated' && f === desc.files[desc.files.length - 1]) {
      // cut into the last tensor: the header still promises all of it
      const full = safetensorsHeaderBytes(f.tensors, { format: 'pt' }).length + f.tensors.reduce((s, t) => s + tensorBytes(t), 0);
      target = truncating(target, full - Math.max(1, Math.floor(tensorBytes(f.tensors[f.tensors.length - 1]) / 2)));
    }
    await streamHfSafetensors(target, f.tensors, fill, blockElems);
    written.push(f.name);
  }
  if (desc.files.length > 1) {
    const weightMap: Record<string, string> = {};
    for (const f of desc.files) for (const t of f.tensors) weightMap[t.key] = f.name;
    await put(WEIGHTS_INDEX, enc({ metadata: { total_size: desc.weightBytes }, weight_map: weightMap }));
  }
  return written;
}

/** A trained tensor's values, checked against the size its key takes in the file. */
function trainedValues(values: (key: string) => ArrayLike<number>, t: TensorSpec): Float64Array {
  const v = Float64Array.from(values(t.key));
  const n = t.shape.reduce((a, d) => a * d, 1);
  if (v.length !== n) throw new Error(`${t.key}: ${v.length} trained values for a tensor of ${t.shape.join(' × ')}`);
  return v;
}

/** The folder of `spec` in memory (tests). */
export async function synthesizeToMemory(spec: SyntheticSpec, label = `synthetic-${spec.family}`): Promise<MemoryFolder> {
  const folder = new MemoryFolder(label);
  await writeSynthetic(spec, memorySink(folder));
  return folder;
}
