// The playground's character model as a Hugging Face GPT-2 folder. The character model is a pre-LN
// GPT-2 (src/model/block.ts: LayerNorm ε 1e-5, the tanh GELU, learned positions, a tied head, the
// Conv1D (in, out) weights under GPT-2's own names), so its parameters are a GPT2LMHeadModel's as
// they stand: the folder opens in "Your own model" and with `npm run logprobs -- --model`, and
// computes what the character model computes; it is written in the layout transformers'
// GPT2LMHeadModel.from_pretrained reads (not run here: no Python packages on these machines).
//
// Files: config.json; model.safetensors (F32, keys "transformer.…" as save_pretrained writes them,
// no lm_head.weight: the head is the embedding); tokenizer.json, a character-level BPE with no merges
// (ids 0–2 <pad>, <bos>, <eos>, then one id per character of the alphabet: CharTokenizer's ids),
// no normalizer or pre-tokenizer, the Fuse decoder (characters join with nothing between them), and
// a post-processor that puts <bos> first (CharTokenizer.encodePrompt); tokenizer_config.json and
// generation_config.json naming the three special tokens.
import { checkpointParams } from '../checkpoint.ts';
import { type GptConfig, LN_EPS } from '../config.ts';
import { paramLayout } from '../params.ts';
import { BOS_ID, CharTokenizer, EOS_ID, PAD_ID } from '../tokenizer.ts';
import { encodeHfSafetensors, type TensorValues } from './safetensorsWrite.ts';

const SPECIAL_TOKENS = [
  [PAD_ID, '<pad>'],
  [BOS_ID, '<bos>'],
  [EOS_ID, '<eos>'],
] as const;

/** config.json of the character model as a GPT2LMHeadModel. */
export function charModelConfig(cfg: GptConfig): Record<string, unknown> {
  return {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    vocab_size: cfg.vocabSize,
    n_positions: cfg.maxSeq,
    n_ctx: cfg.maxSeq,
    n_embd: cfg.dModel,
    n_layer: cfg.nLayer,
    n_head: cfg.nHead,
    n_inner: null,
    activation_function: 'gelu_new',
    layer_norm_epsilon: LN_EPS,
    resid_pdrop: 0,
    embd_pdrop: 0,
    attn_pdrop: 0,
    tie_word_embeddings: true,
    bos_token_id: BOS_ID,
    eos_token_id: EOS_ID,
    pad_token_id: PAD_ID,
    torch_dtype: 'float32',
  };
}

/** tokenizer.json giving CharTokenizer's ids: `encode(text)` is [<bos>, …characters]. */
export function charTokenizerJson(alphabet: string): Record<string, unknown> {
  const tok = new CharTokenizer(alphabet);
  const vocab: Record<string, number> = {};
  for (const [id, content] of SPECIAL_TOKENS) vocab[content] = id;
  [...tok.alphabet].forEach((c, i) => {
    vocab[c] = SPECIAL_TOKENS.length + i;
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map(([id, content]) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: null,
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<bos>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<bos>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<bos>': { id: '<bos>', ids: [BOS_ID], tokens: ['<bos>'] } },
    },
    decoder: { type: 'Fuse' },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: [] },
  };
}

/**
 * The folder's files for a character model with the LM head: `params` in paramLayout(cfg)'s flat
 * order (a checkpoint's or a live model's values), `alphabet` the task tokenizer's.
 */
export function charModelFolderFiles(cfg: GptConfig, params: ArrayLike<number>, alphabet: string): Map<string, Uint8Array> {
  if (cfg.head !== 'lm') throw new Error(`only a model with the LM head is a GPT2LMHeadModel; this one has the ${cfg.head} head`);
  const layout = paramLayout(cfg);
  if (params.length !== layout.total) throw new Error(`the parameters hold ${params.length} values; the layout of this config holds ${layout.total}`);
  const vocabSize = new CharTokenizer(alphabet).vocabSize;
  if (vocabSize !== cfg.vocabSize) throw new Error(`the alphabet gives ${vocabSize} token ids; the model's vocabulary has ${cfg.vocabSize}`);
  const tensors: TensorValues[] = layout.entries.map((e) => ({
    key: `transformer.${e.name}`,
    dtype: 'F32',
    shape: e.shape,
    values: Array.prototype.slice.call(params, e.offset, e.offset + e.size) as number[],
  }));
  const json = (v: unknown) => new TextEncoder().encode(`${JSON.stringify(v, null, 2)}\n`);
  return new Map([
    ['config.json', json(charModelConfig(cfg))],
    ['model.safetensors', encodeHfSafetensors(tensors)],
    ['tokenizer.json', json(charTokenizerJson(alphabet))],
    [
      'tokenizer_config.json',
      json({
        tokenizer_class: 'PreTrainedTokenizerFast',
        bos_token: '<bos>',
        eos_token: '<eos>',
        pad_token: '<pad>',
        clean_up_tokenization_spaces: false,
        model_max_length: cfg.maxSeq,
      }),
    ],
    ['generation_config.json', json({ bos_token_id: BOS_ID, eos_token_id: EOS_ID, pad_token_id: PAD_ID })],
  ]);
}

/** A character-model checkpoint file (src/model/checkpoint.ts: parameters by name, config and alphabet in its metadata) as the folder's files. */
export function checkpointFolderFiles(bytes: Uint8Array): Map<string, Uint8Array> {
  const { info, params } = checkpointParams(bytes);
  return charModelFolderFiles(info.config, params, info.alphabet);
}
