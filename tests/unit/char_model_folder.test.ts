// The character model as a Hugging Face GPT-2 folder (src/model/hf/charModelFolder.ts): the folder
// opens as a GPT2LMHeadModel of the model's shape, its tokenizer gives CharTokenizer's ids (BOS
// first for a prompt, none for a response) and decodes them back, and HfModel on it scores
// responses with the log-probs the character model's own forward gives (both on the float64 CPU
// backend, fresh random weights of a scale that makes the logits far from uniform; the weights
// rounded to f32 first, as the folder stores them). A value-head model and a mismatched alphabet are
// refused by name.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { charModelFolderFiles } from '../../src/model/hf/charModelFolder.ts';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { HfTokenizer } from '../../src/model/hf/tokenizer.ts';
import { paramLayout } from '../../src/model/params.ts';
import { CharTokenizer } from '../../src/model/tokenizer.ts';
import { charLogprobs } from '../helpers/charLogprobs.ts';
import { expectClose, rng } from '../helpers/random.ts';

const ALPHABET = '0123456789+= ab';

function randomModel(salt: number): { cfg: GptConfig; params: Float64Array } {
  const r = rng(salt);
  const cfg: GptConfig = { vocabSize: new CharTokenizer(ALPHABET).vocabSize, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 24, head: 'lm' };
  const layout = paramLayout(cfg);
  const params = new Float64Array(layout.total);
  // LayerNorm gains near 1, everything else of a scale that spreads the logits over several nats
  for (const e of layout.entries)
    for (let i = 0; i < e.size; i++) params[e.offset + i] = Math.fround(e.name.includes('ln') && e.name.endsWith('weight') ? 1 + 0.2 * r.normal() : 0.3 * r.normal());
  return { cfg, params };
}

describe('the character model as a GPT-2 folder', () => {
  it('opens as a GPT2LMHeadModel whose tokenizer gives the character ids and whose log-probs are the character model’s', async () => {
    const { cfg, params } = randomModel(5100);
    const folder = new MemoryFolder('char-model', charModelFolderFiles(cfg, params, ALPHABET));
    const info = await openHfFolder(folder);
    expect(info.arch).toMatchObject({ family: 'gpt2', nLayer: 2, dModel: 32, nHead: 2, nKvHead: 2, headDim: 16, dFf: 128, vocab: cfg.vocabSize, maxPositions: 24, tiedHead: true });

    const chars = new CharTokenizer(ALPHABET);
    const hfTok = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
    const pairs = [
      ['12+3=', '15'],
      ['7+ab=', ' 9'],
      ['0=', '0000'],
      ['99+99=', '198'],
    ] as const;
    for (const [p, a] of pairs) {
      expect(hfTok.encode(p)).toEqual(chars.encodePrompt(p));
      expect(hfTok.encode(a, { addSpecialTokens: false })).toEqual(chars.encode(a));
      expect(hfTok.decode(chars.encodePrompt(p), { skipSpecialTokens: true })).toBe(p);
    }
    expect(hfTok.eosIds).toEqual([chars.eosId]);
    expect(hfTok.padId).toBe(chars.padId);
    // characters outside the alphabet have no token: encoded as nothing, and named
    expect(hfTok.encode('1?2é', { addSpecialTokens: false })).toEqual(chars.encode('12'));
    expect(hfTok.unknownChars('1?2é?=')).toEqual(['?', 'é']);
    expect(hfTok.unknownChars('12+3=')).toEqual([]);

    const be = new CpuBackend();
    const model = await HfModel.load(be, folder, info, 'f32');
    const gpt = new Gpt(be, cfg, params);
    try {
      const prompts = pairs.map(([p]) => chars.encodePrompt(p));
      const responses = pairs.map(([, a]) => [...chars.encode(a), chars.eosId]);
      const hf = await responseLogprobs(model, prompts, responses);
      let spread = 0; // the largest distance of a log-prob from uniform's log 1/V ≈ −2.9 over the batch
      for (let b = 0; b < pairs.length; b++) {
        const own = await charLogprobs(be, gpt, prompts[b], responses[b]);
        spread = Math.max(spread, ...own.map((x) => Math.abs(x + Math.log(cfg.vocabSize))));
        expectClose(hf.logprobs[b], own, 0, 1e-9, `row ${b} log-probs`);
      }
      // far from uniform somewhere in the batch (a row of 3 tokens alone can sit near it): the comparison tells weights apart
      expect(spread).toBeGreaterThan(0.5);
    } finally {
      model.dispose();
      gpt.dispose();
    }
  });

  it('refuses a model without the LM head and an alphabet of another vocabulary, by name', () => {
    const { cfg, params } = randomModel(5200);
    expect(() => charModelFolderFiles({ ...cfg, head: 'value' }, params, ALPHABET)).toThrow('only a model with the LM head is a GPT2LMHeadModel; this one has the value head');
    expect(() => charModelFolderFiles(cfg, params, `${ALPHABET}xyz`)).toThrow(`the alphabet gives ${cfg.vocabSize + 3} token ids; the model's vocabulary has ${cfg.vocabSize}`);
    expect(() => charModelFolderFiles(cfg, params.subarray(1), ALPHABET)).toThrow('the parameters hold');
  });
});
