// PEFT adapter folders (src/model/hf/peftAdapter.ts): trained adapters written as PEFT saves them and
// read back give the same values (f32, exactly) and the same log-probs (bit for bit), on both
// backends, for a Llama-family model and for GPT-2's Conv1D modules; the shapes the config implies are the loaded weights' for every family LoRA takes;
// every field and tensor this page cannot run is refused, naming it.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { LORA_TARGET_WEIGHT, LORA_TARGETS, type LoraSettings, peftAdapterKey } from '../../src/model/hf/lora.ts';
import { disposeLoraTrainable, newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { ADAPTER_CONFIG, ADAPTER_WEIGHTS, exportPeftAdapter, loadPeftValues, readPeftAdapter } from '../../src/model/hf/peftAdapter.ts';
import { targetDims } from '../../src/model/hf/loraModules.ts';
import { encodeHfSafetensors } from '../../src/model/hf/safetensorsWrite.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { type SyntheticFamily, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { BACKENDS, cpuBackend } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';

const SETTINGS: LoraSettings = { r: 3, alpha: 6, rslora: true, targets: ['q_proj', 'v_proj', 'o_proj', 'down_proj'] };
const GPT2_SETTINGS: LoraSettings = { r: 3, alpha: 6, rslora: false, targets: ['c_attn', 'c_proj'] };
const ROUND_TRIPS = [
  ['qwen3', SETTINGS],
  ['gpt2', GPT2_SETTINGS],
] as const;

async function loaded(be: Backend, family: SyntheticFamily, seed: number) {
  const folder = await synthesizeToMemory({ family, dtype: 'F32', shards: 1, seed });
  const info = await openHfFolder(folder);
  return { info, model: await HfModel.load(be, folder, info, 'f32') };
}

describe.each(BACKENDS)('PEFT adapter folders on %s', (_name, makeBackend) => {
  it.each(ROUND_TRIPS)('%s: written and read back: same settings, same values, same log-probs', async (family, settings) => {
    const be = await makeBackend();
    const r = rng(7100);
    const { info, model } = await loaded(be, family, r.nextU32());
    const t = newLoraTrainable(model, settings, 5);
    const t2 = newLoraTrainable(model, settings, 6);
    const t3 = newLoraTrainable(model, { ...settings, r: 2 }, 1);
    try {
      be.write(t.params, Float64Array.from(new Float32Array(randn(r, t.size, 0.2)))); // a "trained" adapter, B ≠ 0
      const files = await exportPeftAdapter(model, t, `synthetic/${family}`);
      const config = JSON.parse(files[ADAPTER_CONFIG]);
      expect(config).toMatchObject({
        peft_type: 'LORA',
        r: 3,
        lora_alpha: 6,
        use_rslora: settings.rslora,
        target_modules: settings.targets,
        base_model_name_or_path: `synthetic/${family}`,
        fan_in_fan_out: family === 'gpt2',
      });
      const folder = new MemoryFolder('adapter', Object.entries({ [ADAPTER_CONFIG]: new TextEncoder().encode(files[ADAPTER_CONFIG]), [ADAPTER_WEIGHTS]: files[ADAPTER_WEIGHTS] }));
      const back = await readPeftAdapter(folder, info.arch);
      expect(back.settings).toEqual(settings);
      // Per PEFT module: A, and lora_B = the projections' B blocks stacked (GPT-2's c_attn: q, k, v).
      expect(back.modules.map((m) => m.module.path)).toEqual(t.modules.map((m) => m.module.path));
      for (const [i, m] of t.modules.entries()) {
        const [a, ...bs] = await be.readMany([m.a, ...m.b]);
        expect(Array.from(back.modules[i].a)).toEqual(Array.from(a));
        expect(Array.from(back.modules[i].b)).toEqual(bs.flatMap((b) => Array.from(b)));
      }
      if (family === 'gpt2') {
        const keys = Object.keys(
          JSON.parse(new TextDecoder().decode(files[ADAPTER_WEIGHTS].subarray(8, 8 + Number(new DataView(files[ADAPTER_WEIGHTS].buffer).getBigUint64(0, true))))),
        );
        expect(keys).toContain(peftAdapterKey('transformer.h.0.attn.c_attn', 'B'));
        expect(keys).toContain(peftAdapterKey('transformer.h.1.mlp.c_proj', 'A'));
        expect(back.modules[0].b.length).toBe(3 * info.arch.dModel * 3);
      }
      const prompts = [[1, 2, 3]];
      const responses = [[4, 5]];
      model.setAdapters(t.adapters);
      const before = await responseLogprobs(model, prompts, responses);
      loadPeftValues(model, t2, back);
      model.setAdapters(t2.adapters);
      expect((await responseLogprobs(model, prompts, responses)).logprobs).toEqual(before.logprobs);
      expect(() => loadPeftValues(model, t3, back)).toThrow(/other settings/);
    } finally {
      disposeLoraTrainable(be, t);
      disposeLoraTrainable(be, t2);
      disposeLoraTrainable(be, t3);
      model.dispose();
    }
  });
});

describe('PEFT adapter folders: shapes and refusals', () => {
  it.each(['llama', 'qwen2', 'qwen3'] as SyntheticFamily[])('%s: the shapes the config implies are the loaded weights’', async (family) => {
    const { info, model } = await loaded(cpuBackend, family, rng(7200).nextU32());
    try {
      for (const target of LORA_TARGETS) {
        const [out, inF] = model.weights.layers[0][LORA_TARGET_WEIGHT[target]]!.w.shape;
        expect(targetDims(info.arch, target), target).toEqual({ out, in: inF });
      }
    } finally {
      model.dispose();
    }
  });

  it('every field and tensor it cannot run is refused, naming it', async () => {
    const { info, model } = await loaded(cpuBackend, 'llama', rng(7300).nextU32());
    const t = newLoraTrainable(model, { r: 2, alpha: 4, rslora: false, targets: ['q_proj'] }, 1);
    const good = await exportPeftAdapter(model, t, 'x');
    disposeLoraTrainable(cpuBackend, t);
    model.dispose();
    const cfg = JSON.parse(good[ADAPTER_CONFIG]);
    const folder = (config: unknown, weights: Uint8Array | null = good[ADAPTER_WEIGHTS]) =>
      new MemoryFolder('adapter', [[ADAPTER_CONFIG, new TextEncoder().encode(JSON.stringify(config))], ...(weights ? [[ADAPTER_WEIGHTS, weights] as [string, Uint8Array]] : [])]);
    const refused = (f: MemoryFolder, why: RegExp | string) => expect(readPeftAdapter(f, info.arch)).rejects.toThrow(why);
    await refused(folder(cfg, null), 'adapter_model.safetensors is missing');
    await refused(folder({ ...cfg, peft_type: 'IA3' }), 'peft_type is "IA3"; only "LORA"');
    await refused(folder({ ...cfg, r: '8' }), 'r is "8"; an integer in [1, 1024]');
    await refused(folder({ ...cfg, use_dora: true }), 'use_dora is true; DoRA');
    await refused(folder({ ...cfg, fan_in_fan_out: true }), 'fan_in_fan_out is true');
    await refused(folder({ ...cfg, bias: 'all' }), 'bias is "all"');
    await refused(folder({ ...cfg, modules_to_save: ['lm_head'] }), 'modules_to_save lists ["lm_head"]');
    await refused(folder({ ...cfg, layers_to_transform: [0] }), 'layers_to_transform restricts the layers');
    await refused(folder({ ...cfg, target_modules: ['c_attn'] }), 'target_modules is ["c_attn"]; for a llama model a list of q_proj');
    // r = 3 in the config for tensors of rank 2: the shapes are named
    await refused(folder({ ...cfg, r: 3 }), /lora_A\.weight is \[2, \d+\]; this model and r = 3 take \[3, \d+\]/);
    // an extra tensor, and a missing one
    const D = info.arch.dModel;
    const extra = encodeHfSafetensors([{ key: 'base_model.model.lm_head.lora_A.weight', dtype: 'F32', shape: [2, D], values: new Float64Array(2 * D) }]);
    await refused(folder(cfg, extra), 'tensor base_model.model.lm_head.lora_A.weight is not a lora_A/lora_B weight');
    await refused(folder(cfg, encodeHfSafetensors([])), `tensor ${peftAdapterKey('model.layers.0.self_attn.q_proj', 'A')} is missing`);
    // a Llama-family adapter on GPT-2, whose modules are c_attn, c_proj and c_fc
    const g = await openHfFolder(await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: 1 }));
    await expect(readPeftAdapter(folder(cfg), g.arch)).rejects.toThrow('target_modules is ["q_proj"]; for a gpt2 model a list of c_attn, c_proj, c_fc');
  });
});
