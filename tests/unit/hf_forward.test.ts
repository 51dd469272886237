// The float64 whole-model forward of the Hugging Face families: hand-computed cases, GQA equal to MHA on
// repeated k/v heads, RoPE models invariant to a shift of all positions (relative positions only),
// left padding invisible to the real tokens, and every family of synthetic folders run end to end.
// (GPT-2 against the project's own GPT: tests/integration/hf_gpt2_crosscheck.test.ts.)
import { describe, expect, it } from 'vitest';
import type { HfArch } from '../../src/model/hf/arch.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { loadReferenceWeights } from '../../src/model/hf/referenceWeights.ts';
import { synthesizeToMemory, SYNTHETIC_FAMILIES } from '../../src/model/hf/synthetic.ts';
import { hfForwardRef, responseLogprobsRef, type RefArch, type RefLayer, type RefWeights } from '../../src/reference/hf/forward.ts';
import { positionsFromMask } from '../../src/reference/nn/rope.ts';
import { expectClose, rng } from '../helpers/random.ts';

async function load(spec: Parameters<typeof synthesizeToMemory>[0]) {
  const folder = await synthesizeToMemory(spec);
  const info = await openHfFolder(folder);
  const arch: RefArch = info.arch; // HfArch is a RefArch
  return { info, arch, w: await loadReferenceWeights(folder, info) };
}

const seed = () => rng(401).nextU32();

/** A one-token-type toy llama: D = 2, one head of width 2, V = 3, hand-picked weights. */
function toyLlama(): { arch: RefArch; w: RefWeights } {
  const arch: RefArch = {
    nLayer: 1,
    dModel: 2,
    nHead: 1,
    nKvHead: 1,
    headDim: 2,
    dFf: 2,
    vocab: 3,
    maxPositions: 8,
    norm: { kind: 'rms', eps: 0 },
    positions: 'rope',
    rope: { theta: 10000, scaling: null },
    qkNorm: false,
    mlp: 'gated',
    act: 'silu',
    attnScale: 1 / Math.sqrt(2),
  };
  const lin = (w: number[], out: number, inn: number) => ({ w: Float64Array.from(w), b: null, out, in: inn });
  const layer: RefLayer = {
    inputNorm: { w: Float64Array.from([1, 1]), b: null },
    q: lin([0, 0, 0, 0], 2, 2), // scores all 0: uniform attention over the visible keys
    k: lin([1, 0, 0, 1], 2, 2),
    v: lin([1, 0, 0, 1], 2, 2),
    o: lin([1, 0, 0, 1], 2, 2),
    qNorm: null,
    kNorm: null,
    postNorm: { w: Float64Array.from([1, 1]), b: null },
    gate: lin([0, 0, 0, 0], 2, 2), // silu(0) = 0: the MLP adds nothing
    up: lin([1, 0, 0, 1], 2, 2),
    down: lin([1, 0, 0, 1], 2, 2),
  };
  const embed = Float64Array.from([3, 4, 1, 0, 0, 2]);
  return { arch, w: { embed, positions: null, layers: [layer], finalNorm: { w: Float64Array.from([1, 1]), b: null }, lmHead: Float64Array.from([1, 0, 0, 1, 1, 1]) } };
}

describe('hfForwardRef by hand', () => {
  it('one token: h = x + n1(x) (attention of one key returns its v), logits = head · rms(h)', () => {
    const { arch, w } = toyLlama();
    const { logits } = hfForwardRef(arch, w, [0], [1], [0], 1, 1);
    // x = [3, 4]; rms(x) = √12.5; h = x·(1 + 1/√12.5); rms(h) normalises back to x/√12.5 = [0.8485…, 1.1313…]
    const n = [3 / Math.sqrt(12.5), 4 / Math.sqrt(12.5)];
    expectClose(logits, [n[0], n[1], n[0] + n[1]], 1e-14, 1e-14, 'logits');
  });

  it('two tokens: the second attends uniformly (q = 0) to both, the first only to itself', () => {
    const { arch, w } = toyLlama();
    const { hidden } = hfForwardRef(arch, w, [0, 2], [1, 1], [0, 1], 1, 2);
    const rmsn = (x: number[]) => {
      const r = Math.sqrt((x[0] ** 2 + x[1] ** 2) / 2);
      return [x[0] / r, x[1] / r];
    };
    const x0 = [3, 4];
    const x1 = [0, 2];
    const a1 = rmsn(x0).map((v, i) => (v + rmsn(x1)[i]) / 2); // mean of the two values
    const h1 = [x1[0] + a1[0], x1[1] + a1[1]];
    expectClose(hidden.subarray(2, 4), rmsn(h1), 1e-14, 1e-14, 'hidden of token 1');
    const h0 = [x0[0] + rmsn(x0)[0], x0[1] + rmsn(x0)[1]];
    expectClose(hidden.subarray(0, 2), rmsn(h0), 1e-14, 1e-14, 'hidden of token 0');
  });

  it('refuses a position beyond max_position_embeddings and a token beyond the vocabulary', () => {
    const { arch, w } = toyLlama();
    expect(() => hfForwardRef(arch, w, [0], [1], [8], 1, 1)).toThrow('position 8 is outside [0, 8) (max_position_embeddings)');
    expect(() => hfForwardRef(arch, w, [3], [1], [0], 1, 1)).toThrow('token id 3 is outside [0, 3)');
  });
});

describe('hfForwardRef properties on synthetic folders', () => {
  it('GQA (4 query heads on 2 kv heads) equals MHA with each kv head’s rows repeated for its group', async () => {
    const { arch, w } = await load({ family: 'qwen3', dtype: 'F32', shards: 1, seed: seed(), dims: { nHead: 4, nKvHead: 2, headDim: 8 } });
    const g = arch.nHead / arch.nKvHead;
    const hd = arch.headDim;
    const repeatRows = (x: Float64Array | null, rowLen: number) => {
      if (!x) return null;
      const out = new Float64Array(arch.nHead * hd * rowLen);
      for (let h = 0; h < arch.nHead; h++) out.set(x.subarray(Math.floor(h / g) * hd * rowLen, (Math.floor(h / g) + 1) * hd * rowLen), h * hd * rowLen);
      return out;
    };
    const mha: RefWeights = {
      ...w,
      layers: w.layers.map((L) => ({
        ...L,
        k: { ...L.k, w: repeatRows(L.k.w, arch.dModel)!, b: repeatRows(L.k.b, 1), out: arch.nHead * hd },
        v: { ...L.v, w: repeatRows(L.v.w, arch.dModel)!, b: repeatRows(L.v.b, 1), out: arch.nHead * hd },
      })),
    };
    const mask = Float64Array.from([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    const tokens = [0, 0, 5, 9, 300, 17, 42, 1, 2, 3, 250, 99];
    const pos = positionsFromMask(mask, 2, 6);
    const a = hfForwardRef(arch, w, tokens, mask, pos, 2, 6).logits;
    const b = hfForwardRef({ ...arch, nKvHead: arch.nHead }, mha, tokens, mask, pos, 2, 6).logits;
    expectClose(a, b, 1e-12, 1e-12, 'GQA vs MHA logits');
  });

  for (const family of SYNTHETIC_FAMILIES) {
    it(`${family}: left padding does not change the real tokens’ logits; ${family === 'gpt2' ? 'learned positions do depend on the offset' : 'shifting every position leaves them unchanged'}`, async () => {
      const { info, arch, w } = await load({ family, dtype: 'BF16', shards: 2, seed: seed() });
      const r = rng(402);
      const S = 7;
      const ids = Array.from({ length: S }, () => r.int(0, info.tokenizerVocab));
      const alone = hfForwardRef(arch, w, ids, new Float64Array(S).fill(1), Int32Array.from(ids.keys()), 1, S).logits;
      expect(alone.every(Number.isFinite)).toBe(true);
      // the same 5 last tokens, left-padded by 2 (pad id 0) in a batch beside the full row
      const tokens = [...ids, 0, 0, ...ids.slice(2)];
      const mask = Float64Array.from([...Array(S).fill(1), 0, 0, ...Array(S - 2).fill(1)]);
      const both = hfForwardRef(arch, w, tokens, mask, positionsFromMask(mask, 2, S), 2, S).logits;
      const V = arch.vocab;
      expectClose(both.subarray(0, S * V), alone, 1e-12, 1e-12, 'row 0');
      const suffix = hfForwardRef(
        arch,
        w,
        ids.slice(2),
        new Float64Array(S - 2).fill(1),
        Int32Array.from({ length: S - 2 }, (_, i) => i),
        1,
        S - 2,
      ).logits;
      expectClose(both.subarray((S + 2) * V, 2 * S * V), suffix, 1e-12, 1e-12, 'padded row');
      const shifted = hfForwardRef(
        arch,
        w,
        ids,
        new Float64Array(S).fill(1),
        Int32Array.from(ids.keys(), (i) => i + 13),
        1,
        S,
      ).logits;
      let maxDiff = 0;
      for (let i = 0; i < alone.length; i++) maxDiff = Math.max(maxDiff, Math.abs(shifted[i] - alone[i]));
      if (family === 'gpt2') expect(maxDiff).toBeGreaterThan(1e-3);
      else expect(maxDiff).toBeLessThan(1e-10);
    });
  }

  it('responseLogprobsRef: log-softmax rows P−1 … of the prompt ‖ response forward, normalised, at temperature T', async () => {
    const { arch, w } = await load({ family: 'llama3', dtype: 'F32', shards: 1, seed: seed() });
    const prompt = [320, 5, 77];
    const response = [12, 250, 322];
    const { logits } = hfForwardRef(arch, w, [...prompt, ...response], new Float64Array(6).fill(1), [0, 1, 2, 3, 4, 5], 1, 6);
    for (const T of [1, 0.6]) {
      const lp = responseLogprobsRef(arch, w, prompt, response, T).logprobs;
      const V = arch.vocab;
      for (let t = 0; t < response.length; t++) {
        const row = logits.subarray((prompt.length - 1 + t) * V, (prompt.length + t) * V);
        let m = -Infinity;
        for (const z of row) m = Math.max(m, z / T);
        let s = 0;
        for (const z of row) s += Math.exp(z / T - m);
        expect(lp[t]).toBeCloseTo(row[response[t]] / T - m - Math.log(s), 12);
      }
    }
    expect(() => responseLogprobsRef(arch, w, [], [1])).toThrow(/at least one token/);
  });

  it('an HfArch passes for a RefArch (the reference reads the fields it needs)', async () => {
    const { info } = await load({ family: 'gpt2', dtype: 'F16', shards: 1, seed: seed() });
    const a: HfArch = info.arch;
    const r: RefArch = a;
    expect(r.attnScale).toBe(1 / Math.sqrt(a.headDim));
  });
});
