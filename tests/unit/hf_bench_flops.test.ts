// The hf bench's FLOP counts against a hand count of a tiny shape, against twice the dense
// parameters at the real shapes, and its choice of shapes on a software adapter.
import { describe, expect, it } from 'vitest';
import { parameterCount } from '../../src/model/hf/arch.ts';
import { decodeFlops, HF_BENCH_SHAPES, prefillFlops, selectHfShapes, shapeArch, tokenFlops } from '../../src/bench/hf.ts';
import { updateFlops } from '../../src/bench/hfRl.ts';

const TINY = { family: 'llama' as const, tied: true, dims: { nLayer: 1, dModel: 8, nHead: 2, nKvHead: 1, headDim: 4, dFf: 16, vocab: 384, maxPositions: 64 } };

describe('hf bench FLOPs', () => {
  it('match a hand count of a 1-layer, 8-wide Llama', () => {
    const a = shapeArch(TINY);
    // q 2·8·8 + k 2·8·4 + v 2·8·4 + o 2·8·8 + gate, up, down 3·2·8·16 = 128 + 64 + 64 + 128 + 768
    const proj = 1152;
    // scores and values: 2 heads × 4 dims × context × (2 + 2); logits 2·8·384
    expect(tokenFlops(a, 3, false)).toBe(proj + 32 * 3);
    expect(tokenFlops(a, 3, true)).toBe(proj + 32 * 3 + 6144);
    // 2 prompts of 3: contexts 1, 2, 3, logits of the last token only
    expect(prefillFlops(a, 2, 3)).toBe(2 * (3 * proj + 32 * (1 + 2 + 3) + 6144));
    // decode steps 2 and 3 after 3 prompt tokens attend to 4 and 5 positions, each with logits
    expect(decodeFlops(a, 2, 3, 3)).toBe(2 * (2 * proj + 32 * (4 + 5) + 2 * 6144));
    // GPT-2's plain MLP has two projections
    const g = shapeArch({ family: 'gpt2', tied: true, dims: { ...TINY.dims, nKvHead: 2, dFf: 32 } });
    expect(tokenFlops(g, 1, false)).toBe(4 * 2 * 8 * 8 + 2 * 2 * 8 * 32 + 4 * 2 * 4 * 1);
  });

  it('an update pass counts forward, a backward of the same size and the attention once more', () => {
    const a = shapeArch(TINY);
    const proj = 1152;
    // 2 rows of 1 prompt token + 2 response tokens: positions 0, 1, 2 attend to 1, 2, 3; the logits
    // of positions 0 and 1 predict the response (2·8·384 = 6144 each, forward and backward)
    expect(updateFlops(a, 2, 1, 2, true)).toBe(2 * (3 * 2 * proj + 3 * 32 * (1 + 2 + 3) + 2 * 2 * 6144));
    // the critic's pass: no logits
    expect(updateFlops(a, 2, 1, 2, false)).toBe(2 * (3 * 2 * proj + 3 * 32 * (1 + 2 + 3)));
  });

  it('at the real shapes, a token without attention or logits costs twice the dense parameters', () => {
    for (const s of HF_BENCH_SHAPES.filter((x) => x.real)) {
      const a = shapeArch(s);
      const norms = a.nLayer * (2 * a.dModel + (a.qkNorm ? 2 * a.headDim : 0)) + a.dModel;
      expect(tokenFlops(a, 0, false), s.name).toBe(2 * (parameterCount(a) - a.vocab * a.dModel - norms));
    }
    // SmolLM2-135M: 30 layers × 2 × (576·(576 + 2·192) + 576·576 + 3·576·1536)
    expect(tokenFlops(shapeArch(HF_BENCH_SHAPES[1]), 0, false)).toBe(30 * 2 * (576 * 960 + 576 * 576 + 3 * 576 * 1536));
  });

  it('runs only the reduced shape on a software adapter unless --shapes asks, and names a bad --shapes', () => {
    expect(selectHfShapes(undefined, true).shapes.map((s) => s.real)).toEqual([false]);
    expect(selectHfShapes(undefined, true).note).toMatch(/^software adapter: only the reduced shape/);
    expect(selectHfShapes(undefined, false).shapes).toHaveLength(3);
    expect(selectHfShapes('real', true).shapes.map((s) => s.name)).toEqual(['smollm2-135m', 'qwen3-0.6b']);
    expect(selectHfShapes('reduced,qwen3-0.6b', true).shapes).toHaveLength(2);
    expect(() => selectHfShapes('gpt5', true)).toThrow(/^--shapes must be reduced, real, all or names among smollm2-135m, qwen3-0.6b, got gpt5$/);
  });
});
