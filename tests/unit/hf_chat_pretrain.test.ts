// The shipped chat model's recipe (src/rl/hf/chatPretrain.ts) at a reduced size on the float64
// backend: its tokenizer (trained on the task's chat turns, held-out pairs excluded) splits numbers
// into digits and knows the ChatML specials; full training (a tutor, then a sloppy student) lowers the answer loss; the written
// folder is a BF16 Qwen3 folder in transformers' layout;
// the same seed writes the same bytes. And the shipped folder in public/ is what the page says.
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { SHIPPED_CHAT_MODEL } from '../../src/model/hf/shippedModel.ts';
import { HfTokenizer } from '../../src/model/hf/tokenizer.ts';
import { valuesByKey } from '../../src/model/hf/trainedValues.ts';
import { chatCorpus, chatLr, pretrainChatModel } from '../../src/rl/hf/chatPretrain.ts';
import { isHeldOutPair } from '../../src/tasks/arithmetic.ts';
import { chatArithmeticPrompt } from '../../src/tasks/chatArithmetic.ts';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';

const cpuBackend = new CpuBackend();

const TINY = { nLayer: 1, dModel: 32, nHead: 2, nKvHead: 1, headDim: 24, dFf: 64, vocab: 320, maxPositions: 64 };

async function tokenizerOf(folder: MemoryFolder): Promise<HfTokenizer> {
  const info = await openHfFolder(folder);
  return new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
}

describe('the shipped chat model’s recipe', () => {
  it('the tokenizer corpus holds every training pair once and no held-out pair', () => {
    const lines = chatCorpus(1);
    const pairs = new Set(lines.map((l) => /What is (\d+) \+ (\d+)\?/.exec(l)!.slice(1, 3).join('+')));
    expect(pairs.size).toBe(lines.length);
    let heldOut = 0;
    for (let a = 0; a <= 99; a++)
      for (let b = 0; b <= 99; b++) {
        if (isHeldOutPair(a, b)) heldOut++;
        expect(pairs.has(`${a}+${b}`)).toBe(!isHeldOutPair(a, b));
      }
    expect(heldOut).toBeGreaterThan(500);
  });

  it('lr: linear warm-up to the peak, cosine down to a tenth', () => {
    const o = { lr: 1e-3, warmup: 10, steps: 110 };
    expect(chatLr(o, 0)).toBeCloseTo(1e-4, 12);
    expect(chatLr(o, 9)).toBeCloseTo(1e-3, 12);
    expect(chatLr(o, 10)).toBeCloseTo(1e-3, 12);
    expect(chatLr(o, 60)).toBeCloseTo(0.55e-3, 12);
    expect(chatLr(o, 110)).toBeCloseTo(1e-4, 12);
  });

  it('a reduced run: the loss falls, the folder is a BF16 Qwen3 folder with the digit-by-digit tokenizer, the same seed writes the same bytes', async () => {
    const run = () => pretrainChatModel(cpuBackend, { seed: 7, steps: 10, batch: 8, lr: 1e-2, warmup: 2, sloppySteps: 2, sloppyLr: 1e-3, dims: TINY, evalPrompts: 4 });
    const r = await run();
    expect(r.losses).toHaveLength(12); // 10 tutor + 2 sloppy
    for (const l of r.losses) expect(Number.isFinite(l)).toBe(true);
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean(r.losses.slice(-3))).toBeLessThan(mean(r.losses.slice(0, 3)) - 1);
    expect([...r.folder.files.keys()].sort()).toEqual([...SHIPPED_CHAT_MODEL.files].sort());
    const info = await openHfFolder(r.folder);
    expect(info.arch.family).toBe('qwen3');
    expect(info.arch.tiedHead).toBe(true);
    expect(info.arch.nHead * info.arch.headDim).not.toBe(info.arch.dModel);
    expect(info.config.torch_dtype).toBe('bfloat16');
    const tok = await tokenizerOf(r.folder);
    // Qwen2's pre-tokenizer: one digit a token; the ChatML markers are single special tokens
    const ids = tok.encode('123', { addSpecialTokens: false });
    expect(ids.map((id) => tok.tokenText(id))).toEqual(['1', '2', '3']);
    const prompt = tok.encodeChat(chatArithmeticPrompt(23, 48));
    expect(tok.tokenText(prompt[0])).toBe('<|im_start|>');
    expect(tok.decode(prompt)).toBe(`<|im_start|>user\n${chatArithmeticPrompt(23, 48)}<|im_end|>\n<|im_start|>assistant\n`);
    expect(tok.eosIds).toContain(tok.idOf('<|im_end|>'));
    expect(r.evaluation.samples).toHaveLength(4);
    const again = await run();
    for (const [name, bytes] of r.folder.files) expect(again.folder.files.get(name), name).toEqual(bytes);
  });

  it('valuesByKey names every key of a Qwen3 folder and refuses one it has no weight for', async () => {
    const r = await pretrainChatModel(cpuBackend, { seed: 3, steps: 1, batch: 2, lr: 1e-3, warmup: 1, sloppySteps: 0, sloppyLr: 1e-3, dims: TINY, evalPrompts: 1 });
    const info = await openHfFolder(r.folder);
    const fake = (n: number) => new Float64Array(n);
    const a = info.arch;
    const w = {
      embed: [fake(1)],
      positions: null,
      layers: [
        {
          inputNorm: { w: fake(2), b: null },
          q: { w: fake(3), b: null },
          k: { w: fake(4), b: null },
          v: { w: fake(5), b: null },
          o: { w: fake(6), b: null },
          qNorm: fake(7),
          kNorm: fake(8),
          postNorm: { w: fake(9), b: null },
          gate: { w: fake(10), b: null },
          up: { w: fake(11), b: null },
          down: { w: fake(12), b: null },
        },
      ],
      finalNorm: { w: fake(13), b: null },
      head: [fake(1)],
    };
    const of = valuesByKey(a, w);
    const sizes = [...info.weights.byName.values()].map((ref) => [ref.key, of(ref.key).length]);
    expect(Object.fromEntries(sizes)).toEqual({
      'model.embed_tokens.weight': 1,
      'model.layers.0.input_layernorm.weight': 2,
      'model.layers.0.self_attn.q_proj.weight': 3,
      'model.layers.0.self_attn.k_proj.weight': 4,
      'model.layers.0.self_attn.v_proj.weight': 5,
      'model.layers.0.self_attn.o_proj.weight': 6,
      'model.layers.0.self_attn.q_norm.weight': 7,
      'model.layers.0.self_attn.k_norm.weight': 8,
      'model.layers.0.post_attention_layernorm.weight': 9,
      'model.layers.0.mlp.gate_proj.weight': 10,
      'model.layers.0.mlp.up_proj.weight': 11,
      'model.layers.0.mlp.down_proj.weight': 12,
      'model.norm.weight': 13,
    });
    expect(() => of('model.layers.0.self_attn.q_proj.bias')).toThrow(/q_proj\.bias: no trained weight/);
    expect(() => of('lm_head.weight')).toThrow(/lm_head\.weight: no trained weight/);
    expect(() => of('model.layers.5.mlp.up_proj.weight')).toThrow(/no trained weight/);
  });

  it('the folder in public/ is the shipped model: its files, its size on the page, a Qwen3 config', async () => {
    const dir = new URL(`../../public/${SHIPPED_CHAT_MODEL.path}`, import.meta.url);
    const folder = new MemoryFolder(SHIPPED_CHAT_MODEL.label);
    let bytes = 0;
    for (const name of SHIPPED_CHAT_MODEL.files) {
      const file = new URL(name, dir);
      folder.files.set(name, new Uint8Array(readFileSync(file)));
      bytes += statSync(file).size;
    }
    expect(bytes).toBe(SHIPPED_CHAT_MODEL.bytes);
    const info = await openHfFolder(folder);
    expect(info.config.architectures).toEqual(['Qwen3ForCausalLM']);
  });
});
