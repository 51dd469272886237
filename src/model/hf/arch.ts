// The one normalised description of a Hugging Face causal LM that everything downstream reads (the
// memory plan, the float64 reference forward, the kernels and the model): four families, their
// quirks made explicit as fields instead of `if family === …` scattered through the code.
// How each field is read from config.json, with the transformers file that says so, is in
// src/model/hf/config.ts and docs/hf-models.md.

export type HfFamily = 'llama' | 'qwen2' | 'qwen3' | 'gpt2';
export const HF_FAMILIES: readonly HfFamily[] = ['llama', 'qwen2', 'qwen3', 'gpt2'];

/** The `architectures[0]` each family is loaded as. */
export const ARCHITECTURE_OF: Record<HfFamily, string> = {
  llama: 'LlamaForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
  gpt2: 'GPT2LMHeadModel',
};

/** Llama 3.1's frequency-dependent rescaling of RoPE (modeling_rope_utils.py `_compute_llama3_parameters`). */
export interface Llama3RopeScaling {
  type: 'llama3';
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositions: number;
}

export interface RopeSpec {
  /** rope_theta: the base of the inverse frequencies θ^(−2i/headDim). */
  theta: number;
  /** null = plain RoPE ("default"). */
  scaling: Llama3RopeScaling | null;
}

export interface HfArch {
  family: HfFamily;
  /** architectures[0] of config.json (or the family's, when the file names none). */
  architecture: string;
  nLayer: number;
  /** hidden_size (n_embd). */
  dModel: number;
  nHead: number;
  /** Key/value heads; nHead / nKvHead query heads share one (grouped-query attention). */
  nKvHead: number;
  /** Width of one head; nHead·headDim may differ from dModel (Qwen3-0.6B: 16·128 = 2048 ≠ 1024). */
  headDim: number;
  /** intermediate_size (n_inner, 4·n_embd by default, for GPT-2). */
  dFf: number;
  /** Rows of the embedding and the LM head (may exceed the tokenizer's ids: padded vocabularies). */
  vocab: number;
  /** max_position_embeddings (n_positions): rows of GPT-2's position table; a limit for RoPE models. */
  maxPositions: number;
  /** RMSNorm: w·x/√(mean(x²) + eps); LayerNorm: w·(x − mean)/√(var + eps) + b. */
  norm: { kind: 'rms' | 'layer'; eps: number };
  /** RoPE on q and k (rotate_half convention), or GPT-2's learned position table added to the embedding. */
  positions: 'rope' | 'learned';
  rope: RopeSpec | null;
  /** Bias on q, k, v projections (Qwen2 always; Llama/Qwen3 with attention_bias). */
  qkvBias: boolean;
  /** Bias on the attention output projection (Llama/Qwen3 attention_bias, GPT-2). */
  oBias: boolean;
  /** Bias on the MLP projections (Llama mlp_bias, GPT-2). */
  mlpBias: boolean;
  /** Qwen3: RMSNorm over head_dim on every q and k head, before RoPE (weights (headDim)). */
  qkNorm: boolean;
  /** The LM head is the embedding matrix (tie_word_embeddings). */
  tiedHead: boolean;
  /** gated: down(act(gate(x))·up(x)) (SwiGLU); plain: down(act(up(x))) (GPT-2's c_fc → c_proj). */
  mlp: 'gated' | 'plain';
  /** silu (x·sigmoid(x)) or the tanh approximation of GELU (gelu_new). */
  act: 'silu' | 'gelu_tanh';
  /** Softmax scale of attention scores: 1/√headDim in all four families. */
  attnScale: number;
  /** Token ids config.json names (generation_config.json and the tokenizer may override them). */
  bosTokenId: number | null;
  eosTokenIds: number[];
  padTokenId: number | null;
}

/** Parameters of the whole model (embedding counted once when tied). */
export function parameterCount(a: HfArch): number {
  const D = a.dModel;
  const qOut = a.nHead * a.headDim;
  const kvOut = a.nKvHead * a.headDim;
  const normP = a.norm.kind === 'layer' ? 2 * D : D;
  let perLayer = 2 * normP;
  perLayer += D * (qOut + 2 * kvOut) + (a.qkvBias ? qOut + 2 * kvOut : 0);
  perLayer += qOut * D + (a.oBias ? D : 0);
  if (a.qkNorm) perLayer += 2 * a.headDim;
  const nProj = a.mlp === 'gated' ? 3 : 2;
  perLayer += nProj * D * a.dFf + (a.mlpBias ? (nProj - 1) * a.dFf + D : 0);
  let total = a.nLayer * perLayer + a.vocab * D + normP;
  if (a.positions === 'learned') total += a.maxPositions * D;
  if (!a.tiedHead) total += a.vocab * D;
  return total;
}
