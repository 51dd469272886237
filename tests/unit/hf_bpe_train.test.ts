// The byte-level BPE trainer: the tokenizer.json it writes loads in @huggingface/tokenizers, round-trips
// text, keeps specials whole, and gives the same ids as an independent encoder written here (pre-tokenize
// with the style's regex, map bytes to GPT-2's byte characters, apply merges by rank).
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { bytesToUnicode, preTokenize, trainByteLevelBpe, type PreTokenizerStyle } from '../../src/model/hf/bpeTrain.ts';
import { syntheticCorpus } from '../../src/model/hf/synthetic.ts';
import { rng } from '../helpers/random.ts';

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];

/** Textbook BPE: repeatedly merge the adjacent pair of lowest rank until none applies. */
function referenceEncode(text: string, style: PreTokenizerStyle, vocab: Map<string, number>, merges: [string, string][]): number[] {
  const rank = new Map(merges.map(([a, b], i) => [`${a} ${b}`, i]));
  const table = bytesToUnicode();
  const ids: number[] = [];
  const pieces = text.split(new RegExp(`(${SPECIALS.map((s) => s.replace(/[|]/g, '\\|')).join('|')})`));
  for (const piece of pieces) {
    if (SPECIALS.includes(piece)) {
      ids.push(vocab.get(piece)!);
      continue;
    }
    for (const word of preTokenize(piece, style)) {
      let parts = [...new TextEncoder().encode(word)].map((b) => table[b]);
      for (;;) {
        let best = -1;
        let at = -1;
        for (let i = 0; i + 1 < parts.length; i++) {
          const r = rank.get(`${parts[i]} ${parts[i + 1]}`);
          if (r !== undefined && (best < 0 || r < best)) {
            best = r;
            at = i;
          }
        }
        if (at < 0) break;
        parts = [...parts.slice(0, at), parts[at] + parts[at + 1], ...parts.slice(at + 2)];
      }
      for (const p of parts) ids.push(vocab.get(p)!);
    }
  }
  return ids;
}

function randomText(r: ReturnType<typeof rng>): string {
  const pieces = [
    'the',
    ' cat',
    ' 123',
    '4567',
    "'s",
    "'LL",
    ' DON’T',
    '\n',
    '\n\n',
    '  ',
    '\t',
    'é',
    'café',
    ' 数字',
    '🎉',
    '!?',
    ' 7 + 8 = 15',
    'Ω',
    '<|im_end|>',
    '<|im_start|>',
    ' x',
  ];
  let s = '';
  const n = r.int(0, 12);
  for (let i = 0; i < n; i++) s += pieces[r.int(0, pieces.length)];
  return s;
}

describe('trainByteLevelBpe', () => {
  for (const style of ['gpt2', 'qwen2'] as const) {
    describe(`${style} style`, () => {
      const trained = trainByteLevelBpe(syntheticCorpus(), { vocabSize: 400, style, specialTokens: SPECIALS, minFrequency: 2 });
      const json = JSON.parse(JSON.stringify(trained.tokenizerJson));
      const tok = new Tokenizer(json, {});

      it('learns merges up to the size, specials after the BPE ids, deterministically', () => {
        const nBpe = trained.vocab.size - SPECIALS.length;
        expect(nBpe).toBeLessThanOrEqual(400);
        expect(trained.merges.length).toBeGreaterThan(50);
        expect(SPECIALS.map((s) => trained.vocab.get(s))).toEqual([nBpe, nBpe + 1, nBpe + 2]);
        // merges are written "a b": byte-level pieces hold no space, so each splits into exactly two
        for (const m of json.model.merges as string[]) expect(m.split(' ')).toHaveLength(2);
        expect(JSON.stringify(trainByteLevelBpe(syntheticCorpus(), { vocabSize: 400, style, specialTokens: SPECIALS }).tokenizerJson)).toBe(JSON.stringify(trained.tokenizerJson));
      });

      it('@huggingface/tokenizers gives the independent encoder’s ids and decodes back, on random text', () => {
        const r = rng(style === 'gpt2' ? 51 : 52);
        for (let n = 0; n < 300; n++) {
          const text = randomText(r);
          const ids = tok.encode(text).ids;
          expect(ids, JSON.stringify(text)).toEqual(referenceEncode(text, style, trained.vocab, trained.merges));
          // @huggingface/tokenizers refuses to decode an empty list
          expect(ids.length === 0 ? '' : tok.decode(ids, { clean_up_tokenization_spaces: false })).toBe(text);
        }
      });

      it('keeps special tokens whole and never learns them from the text', () => {
        expect(tok.encode('<|im_start|>user\nhi<|im_end|>').ids[0]).toBe(trained.vocab.get('<|im_start|>'));
        for (const t of trained.vocab.keys()) if (!SPECIALS.includes(t)) expect(t).not.toContain('im_');
      });
    });
  }

  it('qwen2 style splits digits one by one and folds contractions case-insensitively, as Qwen2’s regex', () => {
    expect(preTokenize('2024 abc', 'qwen2')).toEqual(['2', '0', '2', '4', ' abc']);
    expect(preTokenize("IT'S", 'qwen2')).toEqual(['IT', "'S"]);
    expect(preTokenize("IT'S", 'gpt2')).toEqual(['IT', "'", 'S']);
    expect(preTokenize('2024 abc', 'gpt2')).toEqual(['2024', ' abc']);
  });

  it('refuses a vocabulary smaller than the byte alphabet', () => {
    expect(() => trainByteLevelBpe('x', { vocabSize: 100, style: 'gpt2', specialTokens: [] })).toThrow('vocabSize must be an integer in [256, 1000000], got 100');
  });
});
