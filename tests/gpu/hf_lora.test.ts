// An HfModel with LoRA adapters on every projection (src/model/hf/lora.ts, HfModel.setAdapters)
// against the float64 oracle run on merged weights W + s·B·A — a second way to the same numbers:
// the model adds the low-rank term beside the frozen weight, the oracle folds it into the weight.
// Fresh synthetic folders (TEST_SEED) of the four families, on both backends (GPT-2's projections
// as the loader splits and transposes its Conv1D modules).
// Tolerances as tests/gpu/hf_model.test.ts: f32 weights |Δ| ≤ 1e-4 on WebGPU (plus a conditioning
// term, below), 1e-9 on the float64 backend. PEFT's init (B = 0) gives the base model's log-probs bit for bit; adapters of the
// wrong shape are refused by name.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import {
  adapterTensors,
  type AdapterValues,
  LORA_TARGETS,
  LORA_TARGET_WEIGHT,
  loraInitValues,
  loraScaling,
  type LoraSettings,
  type LoraTarget,
  uploadAdapters,
} from '../../src/model/hf/lora.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { loadReferenceWeights } from '../../src/model/hf/referenceWeights.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { type SyntheticFamily, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { type RefWeights, responseLogprobsRef } from '../../src/reference/hf/forward.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { weightSensitivity } from '../helpers/f32Sensitivity.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const SETTINGS: LoraSettings = { r: 4, alpha: 8, rslora: false, targets: LORA_TARGETS };

/** W + s·B·A for every adapted projection, on a copy of the oracle's weights. */
function merged(ref: RefWeights, values: Partial<Record<LoraTarget, AdapterValues>>[], s: number, r: number): RefWeights {
  const layers = ref.layers.map((layer, l) => {
    const copy = { ...layer };
    for (const [target, v] of Object.entries(values[l]) as [LoraTarget, AdapterValues][]) {
      const key = LORA_TARGET_WEIGHT[target];
      const lin = layer[key]!;
      const w = Float64Array.from(lin.w);
      for (let o = 0; o < lin.out; o++)
        for (let i = 0; i < lin.in; i++) {
          let t = 0;
          for (let j = 0; j < r; j++) t += v.b[o * r + j] * v.a[j * lin.in + i];
          w[o * lin.in + i] += s * t;
        }
      copy[key] = { ...lin, w };
    }
    return copy;
  });
  return { ...ref, layers };
}

function ids(r: ReturnType<typeof rng>, n: number, V: number): number[] {
  return Array.from({ length: n }, () => r.nextU32() % V);
}

const FAMILIES: SyntheticFamily[] = ['llama', 'qwen2', 'qwen3', 'gpt2'];

describe.each(BACKENDS)('HfModel with LoRA adapters on %s', (name, makeBackend) => {
  it.each(FAMILIES)('%s: log-probs equal the float64 forward on merged weights; B = 0 is the base model', async (family) => {
    const be: Backend = await makeBackend();
    const r = rng(4100 + FAMILIES.indexOf(family));
    const folder = await synthesizeToMemory({ family, dtype: 'F32', shards: 1, seed: r.nextU32() });
    const info = await openHfFolder(folder);
    const ref = await loadReferenceWeights(folder, info);
    const V = info.arch.vocab;
    const prompts = [ids(r, 4, V), ids(r, 2, V)];
    const responses = [ids(r, 3, V), ids(r, 4, V)];
    const model = await HfModel.load(be, folder, info, 'f32');
    const dims = (l: number, t: LoraTarget) => {
      const lin = ref.layers[l][LORA_TARGET_WEIGHT[t]]!;
      return { out: lin.out, in: lin.in };
    };
    // A trained adapter: B ≠ 0 on every projection the family has (GPT-2: no gate_proj).
    const targets = LORA_TARGETS.filter((t) => ref.layers[0][LORA_TARGET_WEIGHT[t]]);
    const trained = ref.layers.map((_, l) =>
      Object.fromEntries(targets.map((t) => [t, { a: f32(randn(r, SETTINGS.r * dims(l, t).in, 0.3)), b: f32(randn(r, dims(l, t).out * SETTINGS.r, 0.3)) }])),
    ) as Partial<Record<LoraTarget, AdapterValues>>[];
    const adapters = uploadAdapters(be, SETTINGS, trained, dims);
    const fresh = uploadAdapters(
      be,
      SETTINGS,
      ref.layers.map((_, l) => Object.fromEntries(targets.map((t, i) => [t, loraInitValues(SETTINGS.r, dims(l, t).in, dims(l, t).out, 10 * l + i)]))),
      dims,
    );
    try {
      const base = await responseLogprobs(model, prompts, responses);
      model.setAdapters(adapters);
      const got = await responseLogprobs(model, prompts, responses);
      const want = merged(ref, trained, loraScaling(SETTINGS), SETTINGS.r);
      // f32 weights: 1e-4 plus 32× the reference's own move under float32 rounding of its weights
      // (a trained adapter can make logits large: a log-prob of −14 moves by ~2e-5 that way; the
      // kernels' error was ≤ 11× that move over 4 seeds × 4 families).
      for (const [b, p] of prompts.entries()) {
        const score = (w: RefWeights) => Array.from(responseLogprobsRef(info.arch, w, p, responses[b]).logprobs);
        const atol = name === 'webgpu' ? Array.from(weightSensitivity(want, score), (s) => 1e-4 + 32 * s) : 1e-9;
        const exp = score(want);
        expectClose(got.logprobs[b], exp, 0, atol, `row ${b}`);
      }
      // the adapters moved the log-probs well past the tolerance: the comparison above has teeth
      expect(Math.max(...got.logprobs.flatMap((row, b) => row.map((x, j) => Math.abs(x - base.logprobs[b][j]))))).toBeGreaterThan(1e-2);
      model.setAdapters(fresh);
      const atInit = await responseLogprobs(model, prompts, responses);
      expect(atInit.logprobs).toEqual(base.logprobs);
      model.setAdapters(null);
      expect((await responseLogprobs(model, prompts, responses)).logprobs).toEqual(base.logprobs);
    } finally {
      be.dispose(...adapterTensors(adapters), ...adapterTensors(fresh));
      model.dispose();
    }
  });

  it('adapters of the wrong shape are refused, naming the projection', async () => {
    const be: Backend = await makeBackend();
    const r = rng(4200);
    const gpt2 = await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: r.nextU32() });
    const gInfo = await openHfFolder(gpt2);
    const gModel = await HfModel.load(be, gpt2, gInfo, 'f32');
    const llama = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: r.nextU32() });
    const lInfo = await openHfFolder(llama);
    const lModel = await HfModel.load(be, llama, lInfo, 'f32');
    const settings: LoraSettings = { ...SETTINGS, targets: ['q_proj'] };
    const nLayer = lInfo.arch.nLayer;
    const D = lInfo.arch.dModel;
    const qOut = lInfo.arch.nHead * lInfo.arch.headDim;
    const good = uploadAdapters(
      be,
      settings,
      Array.from({ length: nLayer }, () => ({ q_proj: loraInitValues(4, D, qOut, 1) })),
      () => ({ out: qOut, in: D }),
    );
    const bad = uploadAdapters(
      be,
      settings,
      Array.from({ length: nLayer }, () => ({ q_proj: loraInitValues(4, D + 1, qOut, 1) })),
      () => ({ out: qOut, in: D + 1 }),
    );
    try {
      const gD = gInfo.arch.dModel;
      expect(() => gModel.setAdapters({ ...bad, layers: bad.layers.slice(0, gInfo.arch.nLayer) })).toThrow(
        `layer 0's q_proj takes A (4, ${gD}) and B (${gD}, 4), got A (4, ${D + 1})`,
      );
      expect(() => lModel.setAdapters(bad)).toThrow(`layer 0's q_proj takes A (4, ${D}) and B (${qOut}, 4), got A (4, ${D + 1})`);
      expect(() => lModel.setAdapters({ ...good, layers: good.layers.slice(1) })).toThrow(`${nLayer - 1} layers for a model of ${nLayer}`);
      lModel.setAdapters(good);
    } finally {
      be.dispose(...adapterTensors(good), ...adapterTensors(bad));
      gModel.dispose();
      lModel.dispose();
    }
  });
});
