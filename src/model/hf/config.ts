// config.json → HfArch, or a refusal that names the architecture or the field and says what is
// supported. Nothing is allocated before this passes. Defaults are the ones of each family's config
// class in transformers (src/transformers/models/<family>/configuration_<family>.py), because a
// config.json only lists the fields that differ from them:
//   llama  (LlamaConfig):  rms_norm_eps 1e-6, tie_word_embeddings false, head_dim hidden/heads,
//                          attention_bias (q, k, v, o) false, mlp_bias false, rope_theta 10000
//   qwen2  (Qwen2Config):  q/k/v bias always on, o_proj without (modeling_qwen2.py), tie false
//   qwen3  (Qwen3Config):  head_dim 128 when absent (not hidden/heads!), q_norm/k_norm, tie false
//   gpt2   (GPT2Config):   layer_norm_epsilon 1e-5, n_inner 4·n_embd, gelu_new, tie_word_embeddings
//                          true (the PretrainedConfig default)
// RoPE parameters come either as transformers 4's `rope_theta` + `rope_scaling` or as 5's
// `rope_parameters` (modeling_rope_utils.py standardises both; "type" is the old name of "rope_type").
import { quoted } from '../safetensors.ts';
import { ARCHITECTURE_OF, type HfArch, type HfFamily, type Llama3RopeScaling, type RopeSpec } from './arch.ts';

export const SUPPORTED_ARCHITECTURES = Object.values(ARCHITECTURE_OF);
const SUPPORTED = `supported: ${SUPPORTED_ARCHITECTURES.join(', ')}`;

type Json = Record<string, unknown>;

/** An error whose message starts with "config.json:". */
function refuse(msg: string): Error {
  return new Error(`config.json: ${msg}`);
}

const show = (v: unknown) => quoted(v);

function positiveInt(cfg: Json, field: string, fallback?: number): number {
  const v = cfg[field] ?? fallback;
  if (!Number.isSafeInteger(v) || (v as number) < 1) {
    throw refuse(v === undefined ? `${field} is missing` : `${field} must be a positive integer, got ${show(v)}`);
  }
  return v as number;
}

function positiveNumber(cfg: Json, field: string, fallback: number): number {
  const v = cfg[field] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw refuse(`${field} must be a positive number, got ${show(v)}`);
  return v;
}

function flag(cfg: Json, field: string, fallback: boolean): boolean {
  const v = cfg[field] ?? fallback;
  if (typeof v !== 'boolean') throw refuse(`${field} must be true or false, got ${show(v)}`);
  return v;
}

function optionalId(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  if (!Number.isSafeInteger(v) || (v as number) < 0) throw refuse(`${field} must be a token id (integer ≥ 0), got ${show(v)}`);
  return v as number;
}

/** eos_token_id: an int or a list of ints (config.json or generation_config.json). */
export function idList(v: unknown, field: string, prefix = 'config.json'): number[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  for (const x of list) {
    if (!Number.isSafeInteger(x) || (x as number) < 0) throw new Error(`${prefix}: ${field} must be a token id or a list of ids, got ${show(v)}`);
  }
  return [...new Set(list as number[])];
}

/** Which family a config describes, from architectures[0] (or model_type when that is absent). */
function familyOf(cfg: Json): { family: HfFamily; architecture: string } {
  const archs = cfg.architectures;
  const arch = Array.isArray(archs) && typeof archs[0] === 'string' ? (archs[0] as string) : null;
  const modelType = typeof cfg.model_type === 'string' ? cfg.model_type : null;
  if (cfg.is_encoder_decoder === true || (arch && /ForConditionalGeneration$|Seq2SeqLM$/.test(arch)) || modelType === 't5') {
    throw refuse(`${arch ?? modelType ?? 'this model'} is an encoder-decoder (is_encoder_decoder); only decoder-only causal LMs load here, ${SUPPORTED}`);
  }
  for (const [family, name] of Object.entries(ARCHITECTURE_OF) as [HfFamily, string][]) {
    if (arch === name || (arch === null && modelType === family)) return { family, architecture: name };
  }
  const what = arch ? `architecture ${arch}` : modelType ? `model_type ${modelType}` : 'no architectures and no model_type';
  throw refuse(`${what} is not supported; ${SUPPORTED}`);
}

/** Fields whose presence means a mixture of experts, in the configs of the MoE families of transformers. */
const MOE_FIELDS = ['num_experts', 'num_local_experts', 'n_routed_experts', 'moe_intermediate_size', 'num_experts_per_tok'];

function refuseUnsupportedFeatures(cfg: Json, architecture: string, nLayer: number): void {
  if (cfg.quantization_config !== undefined && cfg.quantization_config !== null) {
    const q = cfg.quantization_config as Json;
    const method = typeof q === 'object' && typeof q.quant_method === 'string' ? ` (${q.quant_method})` : '';
    throw refuse(`quantization_config${method}: quantised weights are not supported; use a BF16, F16 or F32 checkpoint of ${architecture}`);
  }
  for (const f of MOE_FIELDS) {
    const v = cfg[f];
    if (v !== undefined && v !== null && v !== 0) throw refuse(`${f} = ${show(v)}: mixture-of-experts models are not supported; ${SUPPORTED} (dense)`);
  }
  if (cfg.add_cross_attention === true) throw refuse('add_cross_attention is true: cross-attention layers are not supported');
  // Qwen2/Qwen3 configs carry sliding_window but only use it with use_sliding_window true, on the layers
  // layer_types marks "sliding_attention" (by default those ≥ max_window_layers): configuration_qwen2.py.
  if (cfg.use_sliding_window === true && cfg.sliding_window !== null && cfg.sliding_window !== undefined) {
    const types = Array.isArray(cfg.layer_types) ? (cfg.layer_types as unknown[]) : null;
    const maxWindowLayers = typeof cfg.max_window_layers === 'number' ? cfg.max_window_layers : 28;
    const sliding = types ? types.filter((t) => t === 'sliding_attention').length : Math.max(0, nLayer - maxWindowLayers);
    if (sliding > 0) {
      throw refuse(
        `use_sliding_window is true with sliding_window ${show(cfg.sliding_window)} on ${sliding} of ${nLayer} layers: sliding-window attention is not supported (full causal attention only)`,
      );
    }
  }
  if (Array.isArray(cfg.layer_types)) {
    const other = (cfg.layer_types as unknown[]).find((t) => t !== 'full_attention' && t !== 'sliding_attention');
    if (other !== undefined) throw refuse(`layer_types contains ${show(other)}: only full_attention layers are supported`);
  }
  // Mistral-style configs put sliding_window on Llama-shaped models without use_sliding_window.
  if (architecture === ARCHITECTURE_OF.llama && typeof cfg.sliding_window === 'number') {
    throw refuse(`sliding_window ${cfg.sliding_window}: sliding-window attention is not supported (full causal attention only)`);
  }
}

/** RoPE from rope_parameters (transformers 5) or rope_theta + rope_scaling (4). */
function parseRope(cfg: Json): RopeSpec {
  const params = (cfg.rope_parameters ?? cfg.rope_scaling ?? null) as Json | null;
  if (params !== null && (typeof params !== 'object' || Array.isArray(params))) throw refuse(`rope_scaling must be an object or null, got ${show(params)}`);
  const field = cfg.rope_parameters !== undefined ? 'rope_parameters' : 'rope_scaling';
  const theta = (params?.rope_theta as number | undefined) ?? (cfg.rope_theta as number | undefined) ?? 10000;
  if (typeof theta !== 'number' || !Number.isFinite(theta) || theta <= 1) throw refuse(`rope_theta must be a number > 1, got ${show(theta)}`);
  const partial = (params?.partial_rotary_factor ?? cfg.partial_rotary_factor ?? 1) as unknown;
  if (partial !== 1) throw refuse(`partial_rotary_factor ${show(partial)}: RoPE on part of each head is not supported (1 only)`);
  const type = (params?.rope_type ?? params?.type ?? 'default') as unknown;
  if (params === null || type === 'default') return { theta, scaling: null };
  if (type !== 'llama3') throw refuse(`${field} type ${show(type)} is not supported; supported: none/default, llama3`);
  const num = (k: string, fallback?: number) => {
    const v = params[k] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw refuse(`${field}.${k} must be a positive number for rope type llama3, got ${show(v)}`);
    return v;
  };
  const scaling: Llama3RopeScaling = {
    type: 'llama3',
    factor: num('factor'),
    lowFreqFactor: num('low_freq_factor'),
    highFreqFactor: num('high_freq_factor'),
    // transformers 5 fills a missing original_max_position_embeddings with max_position_embeddings
    originalMaxPositions: num('original_max_position_embeddings', cfg.max_position_embeddings as number | undefined),
  };
  if (scaling.highFreqFactor <= scaling.lowFreqFactor) {
    throw refuse(`${field}: high_freq_factor (${scaling.highFreqFactor}) must exceed low_freq_factor (${scaling.lowFreqFactor})`);
  }
  return { theta, scaling };
}

const SILU_NAMES = ['silu', 'swish'];
// gelu_new (NewGELUActivation), gelu_pytorch_tanh and gelu_fast are the same tanh formula
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (activations.py; gelu_fast writes √(2/π) as 0.7978845608).
const GELU_TANH_NAMES = ['gelu_new', 'gelu_pytorch_tanh', 'gelu_fast'];

function parseRopeFamily(cfg: Json, family: Exclude<HfFamily, 'gpt2'>, architecture: string): HfArch {
  const nLayer = positiveInt(cfg, 'num_hidden_layers');
  refuseUnsupportedFeatures(cfg, architecture, nLayer);
  const dModel = positiveInt(cfg, 'hidden_size');
  const nHead = positiveInt(cfg, 'num_attention_heads');
  const nKvHead = positiveInt(cfg, 'num_key_value_heads', nHead);
  if (nHead % nKvHead !== 0) throw refuse(`num_attention_heads ${nHead} is not a multiple of num_key_value_heads ${nKvHead}`);
  // Qwen3Config declares head_dim = 128 as a class default; Llama and Qwen2 fall back to hidden/heads.
  const defaultHeadDim = family === 'qwen3' ? 128 : dModel % nHead === 0 ? dModel / nHead : undefined;
  const headDim = positiveInt(cfg, 'head_dim', defaultHeadDim);
  if (headDim % 2 !== 0) throw refuse(`head_dim ${headDim} must be even for RoPE (first half / second half rotation)`);
  const act = cfg.hidden_act ?? 'silu';
  if (!SILU_NAMES.includes(act as string)) throw refuse(`hidden_act ${show(act)} is not supported for ${architecture}; supported: silu`);
  const attentionBias = flag(cfg, 'attention_bias', false);
  return {
    family,
    architecture,
    nLayer,
    dModel,
    nHead,
    nKvHead,
    headDim,
    dFf: positiveInt(cfg, 'intermediate_size'),
    vocab: positiveInt(cfg, 'vocab_size'),
    maxPositions: positiveInt(cfg, 'max_position_embeddings', family === 'llama' ? 2048 : 32768),
    norm: { kind: 'rms', eps: positiveNumber(cfg, 'rms_norm_eps', 1e-6) },
    positions: 'rope',
    rope: parseRope(cfg),
    qkvBias: family === 'qwen2' ? true : attentionBias,
    oBias: family === 'qwen2' ? false : attentionBias,
    mlpBias: family === 'llama' ? flag(cfg, 'mlp_bias', false) : false,
    qkNorm: family === 'qwen3',
    tiedHead: flag(cfg, 'tie_word_embeddings', false),
    mlp: 'gated',
    act: 'silu',
    attnScale: 1 / Math.sqrt(headDim),
    bosTokenId: optionalId(cfg.bos_token_id, 'bos_token_id'),
    eosTokenIds: idList(cfg.eos_token_id, 'eos_token_id'),
    padTokenId: optionalId(cfg.pad_token_id, 'pad_token_id'),
  };
}

function parseGpt2(cfg: Json, architecture: string): HfArch {
  const nLayer = positiveInt(cfg, 'n_layer', 12);
  refuseUnsupportedFeatures(cfg, architecture, nLayer);
  const dModel = positiveInt(cfg, 'n_embd', 768);
  const nHead = positiveInt(cfg, 'n_head', 12);
  if (dModel % nHead !== 0) throw refuse(`n_embd ${dModel} is not a multiple of n_head ${nHead}`);
  const act = cfg.activation_function ?? 'gelu_new';
  if (!GELU_TANH_NAMES.includes(act as string)) {
    throw refuse(`activation_function ${show(act)} is not supported for GPT2LMHeadModel; supported: ${GELU_TANH_NAMES.join(', ')} (the tanh GELU)`);
  }
  if (cfg.scale_attn_weights === false) throw refuse('scale_attn_weights false (unscaled attention scores) is not supported');
  if (cfg.scale_attn_by_inverse_layer_idx === true) throw refuse('scale_attn_by_inverse_layer_idx true is not supported');
  const nInner = cfg.n_inner ?? null;
  const headDim = dModel / nHead;
  return {
    family: 'gpt2',
    architecture,
    nLayer,
    dModel,
    nHead,
    nKvHead: nHead,
    headDim,
    dFf: nInner === null ? 4 * dModel : positiveInt(cfg, 'n_inner'),
    vocab: positiveInt(cfg, 'vocab_size', 50257),
    maxPositions: positiveInt(cfg, 'n_positions', 1024),
    norm: { kind: 'layer', eps: positiveNumber(cfg, 'layer_norm_epsilon', 1e-5) },
    positions: 'learned',
    rope: null,
    qkvBias: true,
    oBias: true,
    mlpBias: true,
    qkNorm: false,
    tiedHead: flag(cfg, 'tie_word_embeddings', true),
    mlp: 'plain',
    act: 'gelu_tanh',
    attnScale: 1 / Math.sqrt(headDim),
    bosTokenId: optionalId(cfg.bos_token_id ?? 50256, 'bos_token_id'),
    eosTokenIds: idList(cfg.eos_token_id ?? 50256, 'eos_token_id'),
    padTokenId: optionalId(cfg.pad_token_id, 'pad_token_id'),
  };
}

/** A parsed config.json → HfArch; throws "config.json: …" naming what is not supported. */
export function parseHfConfig(cfg: unknown): HfArch {
  if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg)) throw refuse('must hold a JSON object');
  const c = cfg as Json;
  const { family, architecture } = familyOf(c);
  return family === 'gpt2' ? parseGpt2(c, architecture) : parseRopeFamily(c, family, architecture);
}
