// The tokenizer wrapper against ids derived by hand from the BPE rules (a GPT-2-format
// tokenizer.json written below: GPT-2's byte order and regex, nine merges), chat templates rendered
// to exact strings, and the token ids (bos, eos list, pad) a model folder's three files define.
import { describe, expect, it } from 'vitest';
import { bytesToUnicode } from '../../src/model/hf/bpeTrain.ts';
import { parseGenerationConfig, parseTokenizerConfig } from '../../src/model/hf/generationConfig.ts';
import { parseHfConfig } from '../../src/model/hf/config.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { chatmlTemplate, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { HfTokenizer } from '../../src/model/hf/tokenizer.ts';
import { rng } from '../helpers/random.ts';

/**
 * A GPT-2-format tokenizer.json: the 256 byte symbols in GPT-2's id order (printable bytes first,
 * so "!" = 0, "," = 11, and the space "Ġ" = 220, as in GPT-2's own vocabulary), these merges in
 * rank order (ids 256…264), then the added token <|endoftext|> = 265.
 */
const MERGES = ['l l', 'H e', 'He ll', 'Hell o', 'Ġ w', 'o r', 'Ġw or', 'Ġwor l', 'Ġworl d'];
const handJson = (() => {
  const table = bytesToUnicode();
  const order: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) order.push(b);
  for (let b = 0xa1; b <= 0xac; b++) order.push(b);
  for (let b = 0xae; b <= 0xff; b++) order.push(b);
  for (let b = 0; b < 256; b++) if (!order.includes(b)) order.push(b);
  const vocab: Record<string, number> = {};
  order.forEach((b, i) => {
    vocab[table[b]] = i;
  });
  MERGES.forEach((m, i) => {
    vocab[m.replace(' ', '')] = 256 + i;
  });
  const byteLevel = (useRegex: boolean) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: useRegex });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 265, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: byteLevel(true),
    post_processor: byteLevel(false),
    decoder: byteLevel(false),
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: MERGES },
  };
})();
const handConfig = parseTokenizerConfig({ bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', unk_token: '<|endoftext|>', add_prefix_space: false }, null);
const hand = new HfTokenizer(handJson, handConfig, null);
// Byte ids by GPT-2's order: printable ASCII b → b − 0x21; 0xA1…0xAC → 94 + (b − 0xA1); 0xAE…0xFF → 106 + (b − 0xAE).
const id = (ch: string) => ch.charCodeAt(0) - 0x21;

describe('a hand-built GPT-2-format tokenizer.json through @huggingface/tokenizers', () => {
  it('gives the ids the BPE rules give, merge by merge', () => {
    // "Hello": l+l (rank 0) → H+e (1) → He+ll (2) → Hell+o (3) = 259; " world": Ġ+w (4), o+r (5), Ġw+or (6), +l (7), +d (8) = 264
    expect(hand.encode('Hello world')).toEqual([259, 264]);
    // the pre-tokenizer cuts "Hello", ",", " world"; "," is byte 0x2C = 11, as in GPT-2
    expect(hand.encode('Hello, world')).toEqual([259, 11, 264]);
    // no merge starts with "h": only l+l applies
    expect(hand.encode('hello')).toEqual([id('h'), id('e'), 256, id('o')]);
    // " Hello" is one word "ĠHello": its merges build "Hello" beside the space "Ġ" = 220, and no merge joins "Ġ" to it
    expect(hand.encode(' Hello')).toEqual([220, 259]);
    // "é" is the bytes C3 A9 → 106 + (0xC3 − 0xAE) = 127 and 94 + (0xA9 − 0xA1) = 102
    expect(hand.encode('é')).toEqual([127, 102]);
    expect(hand.encode('<|endoftext|>')).toEqual([265]);
    expect(hand.encode('Hi<|endoftext|>')).toEqual([id('H'), id('i'), 265]);
  });

  it('ids, specials and decoding', () => {
    expect(hand.vocabSize).toBe(266);
    expect(hand.eosIds).toEqual([265]);
    expect(hand.bosId).toBe(265);
    expect(hand.padId).toBeNull();
    expect(hand.isSpecial(265)).toBe(true);
    expect(hand.isSpecial(264)).toBe(false);
    expect(hand.tokenText(264)).toBe(' world');
    const ids = hand.encode('Hi<|endoftext|>');
    expect(hand.decode(ids)).toBe('Hi<|endoftext|>');
    expect(hand.decode(ids, { skipSpecialTokens: true })).toBe('Hi');
    expect(hand.hasChatTemplate).toBe(false);
    // with clean_up_tokenization_spaces (GPT-2's tokenizer_config sets it) " !" loses its space, as in transformers
    const cleaning = new HfTokenizer(handJson, parseTokenizerConfig({ clean_up_tokenization_spaces: true }, null), null);
    expect(cleaning.decode(hand.encode('Hi !'))).toBe('Hi!');
    expect(hand.decode(hand.encode('Hi !'))).toBe('Hi !');
    expect(hand.decode([])).toBe('');
    expect(() => hand.renderChat('x')).toThrow(/no chat template/);
  });

  it('round-trips random text, multi-byte characters included', () => {
    const r = rng(41);
    const alphabet = [...'abcXYZ 019.,;:!?\'"\n\t -', 'é', '数', '字', '🎉', 'ß', 'Ω', 'H', 'e', 'l', 'o', 'w'];
    for (let n = 0; n < 200; n++) {
      let s = '';
      const len = r.int(0, 30);
      for (let i = 0; i < len; i++) s += alphabet[r.int(0, alphabet.length)];
      expect(hand.decode(hand.encode(s))).toBe(s);
    }
  });
});

describe('chat templates through @huggingface/jinja', () => {
  const chatml = parseTokenizerConfig({ eos_token: '<|im_end|>', chat_template: chatmlTemplate(false) }, null);
  const tok = new HfTokenizer(handJson, chatml, null);

  it('ChatML: one user turn with and without the generation prompt, exactly', () => {
    expect(tok.renderChat('What is 2 + 3?')).toBe('<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n');
    expect(tok.renderChat('Hi', { addGenerationPrompt: false })).toBe('<|im_start|>user\nHi<|im_end|>\n');
  });

  it('whitespace control, a default system turn and bos_token, as Qwen2.5’s and Llama’s templates use them', () => {
    const template = [
      '{{- bos_token }}',
      "{%- if messages[0]['role'] == 'system' %}",
      "    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}",
      '{%- else %}',
      "    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}",
      '{%- endif %}',
      '{%- for message in messages %}',
      "    {%- if message.role != 'system' %}",
      "        {{- '<|im_start|>' + message.role + '\\n' + message.content | trim + '<|im_end|>\\n' }}",
      '    {%- endif %}',
      '{%- endfor %}',
      '{%- if add_generation_prompt %}',
      "    {{- '<|im_start|>assistant\\n' }}",
      '{%- endif %}',
    ].join('\n');
    const t = new HfTokenizer(handJson, parseTokenizerConfig({ bos_token: '<s>', chat_template: template }, null), null);
    expect(t.renderChat('  Add 1 and 2.  ')).toBe(
      '<s><|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nAdd 1 and 2.<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('chat_template.jinja wins over tokenizer_config’s; a list of named templates gives its "default"', () => {
    expect(parseTokenizerConfig({ chat_template: 'A' }, 'B').chatTemplate).toBe('B');
    expect(
      parseTokenizerConfig(
        {
          chat_template: [
            { name: 'tool_use', template: 'T' },
            { name: 'default', template: 'D' },
          ],
        },
        null,
      ).chatTemplate,
    ).toBe('D');
    expect(parseTokenizerConfig({ eos_token: { content: '</s>', __type: 'AddedToken' } }, null).eosToken).toBe('</s>');
    expect(() => parseTokenizerConfig({ chat_template: 3 }, null)).toThrow('tokenizer_config.json: chat_template must be a string, got 3');
  });

  it('a template that raises names the template', () => {
    const t = new HfTokenizer(handJson, parseTokenizerConfig({ chat_template: "{{ raise_exception('only user and assistant roles') }}" }, null), null);
    expect(() => t.renderChat('x')).toThrow(/only user and assistant roles/);
  });
});

describe('token ids of a model folder', () => {
  it('eos is generation_config’s list; bos and pad come from tokenizer_config; the prompt is tokenized once with its template', async () => {
    for (const family of ['llama', 'qwen3'] as const) {
      const info = await openHfFolder(await synthesizeToMemory({ family, dtype: 'F32', shards: 1, seed: 1 }));
      const tok = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
      const endoftext = tok.idOf('<|endoftext|>')!;
      const imEnd = tok.idOf('<|im_end|>')!;
      const imStart = tok.idOf('<|im_start|>')!;
      expect(tok.eosIds).toEqual([imEnd, endoftext]);
      expect(tok.padId).toBe(endoftext);
      expect(tok.bosId).toBe(endoftext);
      const rendered = tok.renderChat('What is 7 + 5?');
      const ids = tok.encodeChat('What is 7 + 5?');
      expect(ids).toEqual(tok.encode(rendered, { addSpecialTokens: false }));
      // Llama's post-processor adds BOS and its template writes it: encodeChat must not add a second one
      if (family === 'llama') {
        expect(rendered.startsWith('<|endoftext|><|im_start|>user\n')).toBe(true);
        expect(ids.slice(0, 2)).toEqual([endoftext, imStart]);
        expect(tok.encode('x')[0]).toBe(endoftext);
        expect(tok.encode('x', { addSpecialTokens: false })[0]).not.toBe(endoftext);
      } else {
        expect(ids[0]).toBe(imStart);
        expect(tok.encode('x')).toEqual(tok.encode('x', { addSpecialTokens: false }));
      }
      expect(tok.decode(ids)).toBe(rendered);
      expect(tok.decode(ids, { skipSpecialTokens: true })).toBe(rendered.replace(/<\|[a-z_]+\|>/g, ''));
    }
  });

  it('generation_config.json: eos an int or a list, HF defaults for what it leaves out, bad values named', () => {
    const a = parseHfConfig({ architectures: ['GPT2LMHeadModel'], n_embd: 8, n_head: 2, n_layer: 1, vocab_size: 10, eos_token_id: 3, bos_token_id: 1 });
    expect(parseGenerationConfig({ eos_token_id: 5 }, a)).toMatchObject({
      eosTokenIds: [5],
      bosTokenId: 1,
      doSample: false,
      temperature: 1,
      topP: 1,
      topK: 50,
      maxNewTokens: null,
    });
    expect(parseGenerationConfig({ eos_token_id: [5, 6, 5], temperature: 0.6, top_p: 0.95, do_sample: true, max_new_tokens: 64 }, a)).toMatchObject({
      eosTokenIds: [5, 6],
      temperature: 0.6,
      topP: 0.95,
      doSample: true,
      maxNewTokens: 64,
    });
    expect(parseGenerationConfig({}, a).eosTokenIds).toEqual([3]);
    expect(() => parseGenerationConfig({ eos_token_id: 'x' }, a)).toThrow('generation_config.json: eos_token_id must be a token id or a list of ids, got "x"');
    expect(() => parseGenerationConfig({ top_p: 1.5 }, a)).toThrow('generation_config.json: top_p must be in (0, 1], got 1.5');
  });
});
