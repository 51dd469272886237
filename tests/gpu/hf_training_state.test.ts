// A LoRA run's training state (src/model/hf/trainingState.ts) written and put back, on both
// backends: the actor (from PEFT's files plus the state) and the critic come back with every
// parameter, AdamW moment and step count exactly as they were, in F32 on WebGPU and F64 on the
// float64 CPU backend; GPT-2's Conv1D targets as well as Qwen3's projections.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import type { LoraSettings } from '../../src/model/hf/lora.ts';
import { disposeLoraTrainable, type LoraTrainable, newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { ADAPTER_CONFIG, ADAPTER_WEIGHTS, exportPeftAdapter, loadPeftValues, readPeftAdapter } from '../../src/model/hf/peftAdapter.ts';
import { type SyntheticFamily, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { applyTrainingState, encodeTrainingState } from '../../src/model/hf/trainingState.ts';
import { decodeSafetensors } from '../../src/model/safetensors.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';

const CASES: [SyntheticFamily, LoraSettings][] = [
  ['qwen3', { r: 3, alpha: 6, rslora: true, targets: ['q_proj', 'v_proj', 'o_proj', 'down_proj'] }],
  ['gpt2', { r: 2, alpha: 4, rslora: false, targets: ['c_attn', 'c_proj'] }],
];

/**
 * Random parameters and moments (v ≥ 0, as AdamW's are) and a step count, as after some training;
 * with `padding` the actor's padding stays 0, as training leaves it (no gradient, no decay there).
 */
async function trained(be: Backend, t: LoraTrainable, seed: number, steps: number, padding = false): Promise<void> {
  const r = rng(seed);
  const [mask] = await be.readMany([t.decayMask]);
  const keep = (xs: Float64Array) => (padding ? xs.map((x, i) => x * mask[i]) : xs);
  be.write(t.params, keep(randn(r, t.size, 0.2)));
  be.write(t.m, keep(randn(r, t.size, 1e-3)));
  be.write(t.v, keep(randn(r, t.size, 1e-4).map((x) => x * x)));
  t.steps = steps;
}

describe.each(BACKENDS)('LoRA training state on %s', (name, makeBackend) => {
  it.each(CASES)('%s: actor and critic put back exactly, in the backend’s precision', async (family, settings) => {
    const be = await makeBackend();
    const folder = await synthesizeToMemory({ family, dtype: 'F32', shards: 1, seed: rng(7300).nextU32() });
    const info = await openHfFolder(folder);
    const model = await HfModel.load(be, folder, info, 'f32');
    const actor = newLoraTrainable(model, settings, 1);
    const critic = newLoraTrainable(model, settings, 2, true);
    const made: LoraTrainable[] = [actor, critic];
    try {
      await trained(be, actor, 7301, 12, true);
      await trained(be, critic, 7302, 9);
      const state = await encodeTrainingState(be, actor, critic);
      const dtypes = new Set([...decodeSafetensors(state).tensors.values()].map((t) => t.dtype));
      expect([...dtypes]).toEqual([name === 'cpu' ? 'F64' : 'F32']);

      // A reload: PEFT's two files and the state onto a fresh actor of another seed.
      const files = await exportPeftAdapter(model, actor, `synthetic/${family}`);
      const peft = await readPeftAdapter(
        new MemoryFolder('adapter', [
          [ADAPTER_CONFIG, new TextEncoder().encode(files[ADAPTER_CONFIG])],
          [ADAPTER_WEIGHTS, files[ADAPTER_WEIGHTS]],
        ]),
        info.arch,
      );
      const back = newLoraTrainable(model, peft.settings, 99);
      made.push(back);
      loadPeftValues(model, back, peft);
      const backCritic = await applyTrainingState(model, back, state);
      expect(backCritic).not.toBeNull();
      made.push(backCritic!);
      for (const [was, now] of [
        [actor, back],
        [critic, backCritic!],
      ]) {
        const [p0, m0, v0, p1, m1, v1] = await be.readMany([was.params, was.m, was.v, now.params, now.m, now.v]);
        expect(p1).toEqual(p0);
        expect(m1).toEqual(m0);
        expect(v1).toEqual(v0);
        expect(now.steps).toBe(was.steps);
      }
      // Without a critic the state has none to give back.
      const actorOnly = await encodeTrainingState(be, actor, null);
      const third = newLoraTrainable(model, peft.settings, 98);
      made.push(third);
      loadPeftValues(model, third, peft);
      expect(await applyTrainingState(model, third, actorOnly)).toBeNull();
      expect(third.steps).toBe(12);
    } finally {
      for (const t of made) disposeLoraTrainable(be, t);
    }
  });
});
