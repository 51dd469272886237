// config.json → HfArch for the four families (real configs' fields, as published on the Hub), the
// transformers defaults a file leaves out, and every refusal naming its field.
import { describe, expect, it } from 'vitest';
import { parameterCount } from '../../src/model/hf/arch.ts';
import { parseHfConfig } from '../../src/model/hf/config.ts';

// Fields of HuggingFaceTB/SmolLM2-135M's config.json.
const SMOLLM2 = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  hidden_act: 'silu',
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  rope_scaling: null,
  tie_word_embeddings: true,
  vocab_size: 49152,
  bos_token_id: 0,
  eos_token_id: 0,
};

// Fields of Qwen/Qwen3-0.6B's config.json.
const QWEN3_06B = {
  architectures: ['Qwen3ForCausalLM'],
  model_type: 'qwen3',
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  head_dim: 128,
  hidden_act: 'silu',
  max_position_embeddings: 40960,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  rope_scaling: null,
  sliding_window: null,
  use_sliding_window: false,
  max_window_layers: 28,
  attention_bias: false,
  tie_word_embeddings: true,
  vocab_size: 151936,
  bos_token_id: 151643,
  eos_token_id: 151645,
};

// Fields of Qwen/Qwen2.5-0.5B's config.json: sliding_window present but unused.
const QWEN25 = {
  architectures: ['Qwen2ForCausalLM'],
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  max_position_embeddings: 32768,
  max_window_layers: 24,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  sliding_window: 32768,
  use_sliding_window: false,
  tie_word_embeddings: true,
  vocab_size: 151936,
  eos_token_id: 151643,
};

// Fields of meta-llama/Llama-3.2-1B's config.json.
const LLAMA32 = {
  architectures: ['LlamaForCausalLM'],
  hidden_size: 2048,
  intermediate_size: 8192,
  num_hidden_layers: 16,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  head_dim: 64,
  max_position_embeddings: 131072,
  rms_norm_eps: 1e-5,
  rope_scaling: { factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
  rope_theta: 500000.0,
  tie_word_embeddings: true,
  vocab_size: 128256,
  bos_token_id: 128000,
  eos_token_id: [128001, 128008, 128009],
};

// openai-community/gpt2's config.json (the fields that matter).
const GPT2 = {
  architectures: ['GPT2LMHeadModel'],
  model_type: 'gpt2',
  n_embd: 768,
  n_head: 12,
  n_layer: 12,
  n_positions: 1024,
  n_ctx: 1024,
  vocab_size: 50257,
  activation_function: 'gelu_new',
};

describe('parseHfConfig: the four families', () => {
  it('SmolLM2-135M: Llama, GQA 9/3, tied, 134.5 M parameters', () => {
    const a = parseHfConfig(SMOLLM2);
    expect(a).toMatchObject({ family: 'llama', nLayer: 30, dModel: 576, nHead: 9, nKvHead: 3, headDim: 64, dFf: 1536, vocab: 49152, tiedHead: true, mlp: 'gated', act: 'silu' });
    expect(a.norm).toEqual({ kind: 'rms', eps: 1e-5 });
    expect(a.rope).toEqual({ theta: 100000, scaling: null });
    expect(a.qkvBias || a.oBias || a.mlpBias || a.qkNorm).toBe(false);
    expect(a.eosTokenIds).toEqual([0]);
    // the published size: 134 515 008 parameters
    expect(parameterCount(a)).toBe(134515008);
  });

  it('Qwen3-0.6B: per-head q/k norm, head_dim·heads = 2048 ≠ hidden 1024, 596 M parameters', () => {
    const a = parseHfConfig(QWEN3_06B);
    expect(a).toMatchObject({ family: 'qwen3', headDim: 128, nHead: 16, nKvHead: 8, dModel: 1024, qkNorm: true, qkvBias: false, tiedHead: true });
    expect(a.attnScale).toBeCloseTo(1 / Math.sqrt(128), 15);
    // the published count of Qwen3-0.6B (embedding included, tied): 596 049 920
    expect(parameterCount(a)).toBe(596049920);
  });

  it('Qwen3 without head_dim takes Qwen3Config’s default 128, not hidden/heads', () => {
    const { head_dim: _, ...noHeadDim } = QWEN3_06B;
    expect(parseHfConfig({ ...noHeadDim, hidden_size: 512, num_attention_heads: 8 }).headDim).toBe(128);
    expect(parseHfConfig({ ...SMOLLM2, architectures: ['Qwen2ForCausalLM'] }).headDim).toBe(64);
  });

  it('Qwen2.5: q/k/v bias, no o bias, sliding_window present but unused is accepted', () => {
    const a = parseHfConfig(QWEN25);
    expect(a).toMatchObject({ family: 'qwen2', qkvBias: true, oBias: false, mlpBias: false, headDim: 64, nKvHead: 2 });
    expect(a.rope!.theta).toBe(1e6);
  });

  it('Llama 3.2: llama3 rope scaling and an eos list', () => {
    const a = parseHfConfig(LLAMA32);
    expect(a.rope).toEqual({ theta: 500000, scaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } });
    expect(a.eosTokenIds).toEqual([128001, 128008, 128009]);
  });

  it('transformers 5 rope_parameters and the old "type" key read the same', () => {
    const { rope_scaling, rope_theta, ...rest } = LLAMA32;
    const v5 = parseHfConfig({ ...rest, rope_parameters: { ...rope_scaling, rope_theta } });
    expect(v5.rope).toEqual(parseHfConfig(LLAMA32).rope);
    const { rope_type: _, ...old } = rope_scaling;
    expect(parseHfConfig({ ...LLAMA32, rope_scaling: { ...old, type: 'llama3' } }).rope).toEqual(v5.rope);
    expect(parseHfConfig({ ...SMOLLM2, rope_scaling: { rope_type: 'default' } }).rope!.scaling).toBeNull();
  });

  it('GPT-2: LayerNorm 1e-5, learned positions, d_ff 4·n_embd, tied by default, 124.4 M parameters', () => {
    const a = parseHfConfig(GPT2);
    expect(a).toMatchObject({
      family: 'gpt2',
      nLayer: 12,
      dModel: 768,
      nHead: 12,
      nKvHead: 12,
      headDim: 64,
      dFf: 3072,
      maxPositions: 1024,
      positions: 'learned',
      rope: null,
      tiedHead: true,
      mlp: 'plain',
      act: 'gelu_tanh',
    });
    expect(a.norm).toEqual({ kind: 'layer', eps: 1e-5 });
    expect(a.eosTokenIds).toEqual([50256]);
    expect(parameterCount(a)).toBe(124439808);
    expect(parseHfConfig({ ...GPT2, activation_function: 'gelu_pytorch_tanh', n_inner: 100 }).dFf).toBe(100);
  });

  it('model_type alone (no architectures) is enough', () => {
    const { architectures: _, ...rest } = QWEN3_06B;
    expect(parseHfConfig(rest).architecture).toBe('Qwen3ForCausalLM');
  });
});

describe('parseHfConfig refuses, naming the architecture or field and what is supported', () => {
  const cases: [string, unknown, RegExp][] = [
    [
      'T5',
      { architectures: ['T5ForConditionalGeneration'], model_type: 't5', is_encoder_decoder: true, d_model: 512 },
      /T5ForConditionalGeneration is an encoder-decoder.*supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GPT2LMHeadModel/,
    ],
    ['BART flag', { architectures: ['BartForCausalLM'], is_encoder_decoder: true }, /encoder-decoder \(is_encoder_decoder\)/],
    ['Mistral', { ...SMOLLM2, architectures: ['MistralForCausalLM'] }, /architecture MistralForCausalLM is not supported; supported: LlamaForCausalLM/],
    ['sliding window in use', { ...QWEN25, use_sliding_window: true, max_window_layers: 20 }, /use_sliding_window is true with sliding_window 32768 on 4 of 24 layers/],
    [
      'sliding layer_types',
      { ...QWEN3_06B, use_sliding_window: true, sliding_window: 4096, layer_types: Array(28).fill('sliding_attention') },
      /on 28 of 28 layers: sliding-window attention is not supported/,
    ],
    ['MoE', { ...QWEN3_06B, num_experts: 128, num_experts_per_tok: 8 }, /num_experts = 128: mixture-of-experts models are not supported/],
    ['Mixtral-style', { ...SMOLLM2, num_local_experts: 8 }, /num_local_experts = 8/],
    ['GPTQ', { ...GPT2, quantization_config: { quant_method: 'gptq', bits: 4 } }, /quantization_config \(gptq\): quantised weights are not supported/],
    [
      'yarn',
      { ...QWEN3_06B, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 32768 } },
      /rope_scaling type "yarn" is not supported; supported: none\/default, llama3/,
    ],
    ['linear (v4 key)', { ...SMOLLM2, rope_scaling: { type: 'linear', factor: 2 } }, /rope_scaling type "linear" is not supported/],
    ['llama3 without factor', { ...LLAMA32, rope_scaling: { rope_type: 'llama3', low_freq_factor: 1, high_freq_factor: 4 } }, /rope_scaling\.factor must be a positive number/],
    ['gelu erf', { ...GPT2, activation_function: 'gelu' }, /activation_function "gelu" is not supported for GPT2LMHeadModel; supported: gelu_new/],
    ['relu llama', { ...SMOLLM2, hidden_act: 'relu' }, /hidden_act "relu" is not supported for LlamaForCausalLM; supported: silu/],
    ['kv heads', { ...SMOLLM2, num_key_value_heads: 4 }, /num_attention_heads 9 is not a multiple of num_key_value_heads 4/],
    ['missing field', { ...SMOLLM2, intermediate_size: undefined }, /config.json: intermediate_size is missing/],
    ['bad number', { ...SMOLLM2, hidden_size: 57.5 }, /hidden_size must be a positive integer, got 57.5/],
    ['partial rotary', { ...SMOLLM2, partial_rotary_factor: 0.5 }, /partial_rotary_factor 0.5/],
    ['inverse layer scaling', { ...GPT2, scale_attn_by_inverse_layer_idx: true }, /scale_attn_by_inverse_layer_idx/],
    ['not an object', [1, 2], /config.json: must hold a JSON object/],
  ];
  for (const [what, cfg, msg] of cases) {
    it(what, () => {
      expect(() => parseHfConfig(cfg)).toThrow(msg);
      expect(() => parseHfConfig(cfg)).toThrow(/^config\.json: /);
    });
  }
});
