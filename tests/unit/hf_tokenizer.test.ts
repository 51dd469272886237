// The tokenizer wrapper against ids known from outside this code (GPT-2's real tokenizer.json, ids
// from transformers' documentation), chat templates rendered to exact strings, and the token ids
// (bos, eos list, pad) a model folder's three files define.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGenerationConfig, parseTokenizerConfig } from '../../src/model/hf/generationConfig.ts';
import { parseHfConfig } from '../../src/model/hf/config.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { chatmlTemplate, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { HfTokenizer } from '../../src/model/hf/tokenizer.ts';
import { rng } from '../helpers/random.ts';

const gpt2Json = JSON.parse(readFileSync(new URL('../fixtures/hf/gpt2-tokenizer.json', import.meta.url), 'utf8'));
const gpt2Config = parseTokenizerConfig({ bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', unk_token: '<|endoftext|>', add_prefix_space: false }, null);
const gpt2 = new HfTokenizer(gpt2Json, gpt2Config, null);

describe('GPT-2’s real tokenizer.json through @huggingface/tokenizers', () => {
  it('gives the ids transformers documents', () => {
    // GPT2Tokenizer's docstring: a leading space changes the first token
    expect(gpt2.encode('Hello world')).toEqual([15496, 995]);
    expect(gpt2.encode(' Hello world')).toEqual([18435, 995]);
    // the input of transformers' GPT-2 usage examples
    expect(gpt2.encode('Hello, my dog is cute')).toEqual([15496, 11, 616, 3290, 318, 13779]);
    expect(gpt2.encode('hello world')).toEqual([31373, 995]);
    expect(gpt2.encode('<|endoftext|>')).toEqual([50256]);
  });

  it('ids, specials and decoding', () => {
    expect(gpt2.vocabSize).toBe(50257);
    expect(gpt2.eosIds).toEqual([50256]);
    expect(gpt2.bosId).toBe(50256);
    expect(gpt2.padId).toBeNull();
    expect(gpt2.isSpecial(50256)).toBe(true);
    expect(gpt2.isSpecial(995)).toBe(false);
    expect(gpt2.tokenText(995)).toBe(' world');
    const ids = gpt2.encode('Hi<|endoftext|>');
    expect(gpt2.decode(ids)).toBe('Hi<|endoftext|>');
    expect(gpt2.decode(ids, { skipSpecialTokens: true })).toBe('Hi');
    expect(gpt2.hasChatTemplate).toBe(false);
    // GPT-2's tokenizer_config.json sets clean_up_tokenization_spaces true: " !" loses its space, as in transformers
    const cleaning = new HfTokenizer(gpt2Json, parseTokenizerConfig({ clean_up_tokenization_spaces: true }, null), null);
    expect(cleaning.decode(gpt2.encode('Hi !'))).toBe('Hi!');
    expect(gpt2.decode(gpt2.encode('Hi !'))).toBe('Hi !');
    expect(gpt2.decode([])).toBe('');
    expect(() => gpt2.renderChat('x')).toThrow(/no chat template/);
  });

  it('round-trips random text, multi-byte characters included', () => {
    const r = rng(41);
    const alphabet = [...'abcXYZ 019.,;:!?\'"\n\t -', 'é', '数', '字', '🎉', 'ß', 'Ω'];
    for (let n = 0; n < 200; n++) {
      let s = '';
      const len = r.int(0, 30);
      for (let i = 0; i < len; i++) s += alphabet[r.int(0, alphabet.length)];
      expect(gpt2.decode(gpt2.encode(s))).toBe(s);
    }
  });
});

describe('chat templates through @huggingface/jinja', () => {
  const chatml = parseTokenizerConfig({ eos_token: '<|im_end|>', chat_template: chatmlTemplate(false) }, null);
  const tok = new HfTokenizer(gpt2Json, chatml, null);

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
    const t = new HfTokenizer(gpt2Json, parseTokenizerConfig({ bos_token: '<s>', chat_template: template }, null), null);
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
    const t = new HfTokenizer(gpt2Json, parseTokenizerConfig({ chat_template: "{{ raise_exception('only user and assistant roles') }}" }, null), null);
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
