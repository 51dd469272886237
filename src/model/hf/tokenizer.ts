// The model's own tokenizer and chat template, from maintained libraries: @huggingface/tokenizers
// reads tokenizer.json (normalizer, pre-tokenizer Split/ByteLevel, BPE, post-processor, added and
// special tokens) and @huggingface/jinja renders tokenizer_config.json's chat_template, so the ids
// are the ids the model's Python tokenizer gives.
//
// Conventions of RL frameworks (verl's RLHFDataset, OpenRLHF's prompt datasets):
//   - the prompt goes through the chat template as ONE user turn with the generation prompt, and the
//     rendered text is tokenized without adding special tokens (the template already wrote them);
//   - the response is tokenized on its own, also without special tokens; EOS ends it.
// Token ids: eos = generation_config.json's eos_token_id (an int or a list) — what generate() stops
// on — else config.json's, else tokenizer_config's eos_token; bos and pad from tokenizer_config's
// tokens, else generation_config/config ids.
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import type { GenerationDefaults, TokenizerConfig } from './generationConfig.ts';

export interface EncodeOptions {
  /** Let the post-processor add its special tokens (BOS for Llama tokenizers). Default true, as transformers' tokenizer(text). */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Drop special tokens (EOS, chat markers) from the text. Default false. */
  skipSpecialTokens?: boolean;
  /**
   * Remove spaces before punctuation (" ," → ","). Default: tokenizer_config.json's
   * clean_up_tokenization_spaces, else false (transformers' default; @huggingface/tokenizers' own is true).
   */
  cleanUpSpaces?: boolean;
}

export interface ChatOptions {
  /** End with the assistant turn's opening (add_generation_prompt). Default true. */
  addGenerationPrompt?: boolean;
}

export class HfTokenizer {
  private readonly tok: Tokenizer;
  private readonly template: Template | null;
  readonly bosId: number | null;
  readonly eosIds: number[];
  readonly padId: number | null;
  /** 1 + the largest id the tokenizer can produce. */
  readonly vocabSize: number;
  private readonly specialIds: Set<number>;

  constructor(
    tokenizerJson: Record<string, unknown>,
    private readonly config: TokenizerConfig,
    generation: GenerationDefaults | null,
  ) {
    this.tok = new Tokenizer(tokenizerJson, config.raw);
    this.template = config.chatTemplate ? new Template(config.chatTemplate) : null;
    const idOf = (t: string | null) => (t === null ? null : (this.tok.token_to_id(t) ?? null));
    this.bosId = idOf(config.bosToken) ?? generation?.bosTokenId ?? null;
    const eosTok = idOf(config.eosToken);
    this.eosIds = generation && generation.eosTokenIds.length > 0 ? generation.eosTokenIds : eosTok !== null ? [eosTok] : [];
    this.padId = idOf(config.padToken) ?? generation?.padTokenId ?? null;
    const vocab = this.tok.get_vocab(true);
    let max = -1;
    for (const id of vocab.values()) if (id > max) max = id;
    this.vocabSize = max + 1;
    this.specialIds = new Set([...this.tok.get_added_tokens_decoder().entries()].filter(([, t]) => (t as unknown as { special?: boolean }).special).map(([id]) => id));
  }

  get hasChatTemplate(): boolean {
    return this.template !== null;
  }

  encode(text: string, opts: EncodeOptions = {}): number[] {
    return this.tok.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true }).ids;
  }

  /**
   * The distinct characters of `text` this tokenizer has no token for, in order of appearance: a
   * vocabulary without byte fallback or an unknown token (the playground's character model as
   * GPT-2) encodes them as nothing, so the model never sees them. Whitespace is not judged: a
   * SentencePiece-style tokenizer folds it into the next token and encodes it alone as nothing.
   */
  unknownChars(text: string): string[] {
    return [...new Set(Array.from(text))].filter((c) => !/\s/u.test(c) && this.encode(c, { addSpecialTokens: false }).length === 0);
  }

  decode(ids: ArrayLike<number>, opts: DecodeOptions = {}): string {
    // @huggingface/tokenizers refuses an empty list; an empty response is the empty string
    if (ids.length === 0) return '';
    const cleanUp = opts.cleanUpSpaces ?? this.config.raw.clean_up_tokenization_spaces === true;
    return this.tok.decode(Array.from(ids), { skip_special_tokens: opts.skipSpecialTokens ?? false, clean_up_tokenization_spaces: cleanUp });
  }

  /** The text of one token as the model sees it (byte-level pieces decoded; a lone partial UTF-8 byte shows as U+FFFD). */
  tokenText(id: number): string {
    return this.tok.decode([id], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  idOf(token: string): number | null {
    return this.tok.token_to_id(token) ?? null;
  }

  /**
   * One user turn through the chat template (transformers' apply_chat_template(…, tokenize=False)).
   * @huggingface/jinja provides raise_exception itself; a template that calls it throws.
   */
  renderChat(userText: string, opts: ChatOptions = {}): string {
    if (!this.template) throw new Error('this model has no chat template (tokenizer_config.json chat_template or chat_template.jinja)');
    return this.template.render({
      messages: [{ role: 'user', content: userText }],
      add_generation_prompt: opts.addGenerationPrompt ?? true,
      bos_token: this.config.bosToken ?? '',
      eos_token: this.config.eosToken ?? '',
      pad_token: this.config.padToken ?? '',
      unk_token: this.config.unkToken ?? '',
    });
  }

  /** The ids of a chat-templated prompt: rendered, then tokenized without adding special tokens. */
  encodeChat(userText: string, opts: ChatOptions = {}): number[] {
    return this.encode(this.renderChat(userText, opts), { addSpecialTokens: false });
  }
}
