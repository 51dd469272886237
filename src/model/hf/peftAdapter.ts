// LoRA adapters as PEFT saves them (save_pretrained): adapter_config.json and
// adapter_model.safetensors with keys base_model.model.<module>.lora_A.weight / lora_B.weight (the
// adapter's name, "default", left out). Written from a trained LoraTrainable; read back into one
// with every field checked against the base model, and anything this page cannot run (DoRA,
// modules_to_save, a restricted layer list, trained biases) refused by name. GPT-2's Conv1D modules
// are written with fan_in_fan_out (loraModules.ts maps them onto the loader's projections).
import type { Backend } from '../../backend/backend.ts';
import type { HfArch } from './arch.ts';
import { decodeToF32, type HfDtype } from './dtype.ts';
import type { ModelFolder } from './folder.ts';
import type { HfModel } from './hfModel.ts';
import { type LoraModuleName, loraScaling, type LoraSettings, type ModelAdapters, peftAdapterConfig, peftAdapterKey } from './lora.ts';
import { type AdapterModule, adapterModules, loraModulesOf } from './loraModules.ts';
import type { LoraTrainable } from './loraParams.ts';
import { readSafetensorsHeader } from './safetensorsHeader.ts';
import { encodeHfSafetensors, type TensorValues } from './safetensorsWrite.ts';

export const ADAPTER_CONFIG = 'adapter_config.json';
export const ADAPTER_WEIGHTS = 'adapter_model.safetensors';

export interface PeftAdapterFiles {
  [ADAPTER_CONFIG]: string;
  [ADAPTER_WEIGHTS]: Uint8Array;
}

/** The two files of a PEFT adapter folder for `t`'s adapters on `model` (F32 values). */
export async function exportPeftAdapter(model: HfModel, t: LoraTrainable, baseModel: string): Promise<PeftAdapterFiles> {
  const tensors = t.modules.flatMap((m) => [m.a, ...m.b]);
  const values = await model.be.readMany(tensors);
  let at = 0;
  const out: TensorValues[] = [];
  for (const { module, b } of t.modules) {
    const a = values[at++];
    // lora_B is the projections' B rows stacked (GPT-2's c_attn: q, k, v).
    const stacked = new Float64Array(module.out * t.settings.r);
    let row = 0;
    for (const part of b) {
      stacked.set(values[at++], row);
      row += part.size;
    }
    out.push({ key: peftAdapterKey(module.path, 'A'), dtype: 'F32', shape: [t.settings.r, module.in], values: a });
    out.push({ key: peftAdapterKey(module.path, 'B'), dtype: 'F32', shape: [module.out, t.settings.r], values: stacked });
  }
  return {
    [ADAPTER_CONFIG]: `${JSON.stringify(peftAdapterConfig(t.settings, baseModel, model.arch.family === 'gpt2'), null, 2)}\n`,
    [ADAPTER_WEIGHTS]: encodeHfSafetensors(out),
  };
}

/** A PEFT adapter read from a folder: its settings and, per adapted module, A (r, in) and B (out, r). */
export interface PeftAdapter {
  settings: LoraSettings;
  modules: { module: AdapterModule; a: Float32Array; b: Float32Array }[];
}

const fail = (field: string, why: string): never => {
  throw new Error(`${ADAPTER_CONFIG}: ${field} ${why}`);
};

/** target_modules as PEFT wrote it: a list of the family's module names, or "all-linear". */
function readTargets(tm: unknown, arch: HfArch): LoraModuleName[] {
  const allowed = loraModulesOf(arch.family);
  if (tm === 'all-linear') return [...allowed];
  if (Array.isArray(tm) && tm.length > 0 && tm.every((t) => (allowed as readonly unknown[]).includes(t))) return allowed.filter((t) => tm.includes(t));
  return fail('target_modules', `is ${JSON.stringify(tm)}; for a ${arch.family} model a list of ${allowed.join(', ')} (or "all-linear") is expected`);
}

/** Reads and checks adapter_config.json and adapter_model.safetensors of `folder` against `arch`. */
export async function readPeftAdapter(folder: ModelFolder, arch: HfArch): Promise<PeftAdapter> {
  const names = await folder.list();
  for (const need of [ADAPTER_CONFIG, ADAPTER_WEIGHTS])
    if (!names.includes(need)) throw new Error(`${folder.label}: ${need} is missing (a PEFT adapter folder holds ${ADAPTER_CONFIG} and ${ADAPTER_WEIGHTS})`);
  const size = (await folder.size(ADAPTER_CONFIG)) ?? 0;
  let cfg: Record<string, unknown>;
  try {
    cfg = JSON.parse(new TextDecoder().decode(await folder.read(ADAPTER_CONFIG, 0, size)));
  } catch (e) {
    throw new Error(`${ADAPTER_CONFIG} is not valid JSON (${(e as Error).message})`);
  }
  if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg)) fail('the file', 'is not a JSON object');
  if (cfg.peft_type !== 'LORA') fail('peft_type', `is ${JSON.stringify(cfg.peft_type)}; only "LORA" is supported`);
  const r = cfg.r;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1 || r > 1024) fail('r', `is ${JSON.stringify(r)}; an integer in [1, 1024] is expected`);
  const alpha = cfg.lora_alpha ?? 8;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha <= 0) fail('lora_alpha', `is ${JSON.stringify(alpha)}; a positive number is expected`);
  const rslora = cfg.use_rslora ?? false;
  if (typeof rslora !== 'boolean') fail('use_rslora', `is ${JSON.stringify(rslora)}; true or false is expected`);
  if (cfg.use_dora === true) fail('use_dora', 'is true; DoRA adapters are not supported');
  // PEFT itself turns fan_in_fan_out on for Conv1D modules, so either value loads on GPT-2.
  if (cfg.fan_in_fan_out === true && arch.family !== 'gpt2') fail('fan_in_fan_out', `is true (Conv1D weights), but a ${arch.family} model has nn.Linear layers`);
  if ((cfg.bias ?? 'none') !== 'none') fail('bias', `is ${JSON.stringify(cfg.bias)}; only "none" (no trained biases) is supported`);
  if (Array.isArray(cfg.modules_to_save) && cfg.modules_to_save.length > 0)
    fail('modules_to_save', `lists ${JSON.stringify(cfg.modules_to_save)}; fully trained modules are not supported`);
  if (cfg.layers_to_transform !== null && cfg.layers_to_transform !== undefined) fail('layers_to_transform', 'restricts the layers; adapters on every layer are expected');
  const targets = readTargets(cfg.target_modules, arch);
  const settings: LoraSettings = { r: r as number, alpha: alpha as number, rslora: rslora as boolean, targets };

  const header = await readSafetensorsHeader(folder, ADAPTER_WEIGHTS);
  const expected = new Map<string, { m: number; which: 'a' | 'b'; shape: number[] }>();
  const modules = adapterModules(arch, targets);
  modules.forEach((module, m) => {
    expected.set(peftAdapterKey(module.path, 'A'), { m, which: 'a', shape: [settings.r, module.in] });
    expected.set(peftAdapterKey(module.path, 'B'), { m, which: 'b', shape: [module.out, settings.r] });
  });
  for (const key of header.entries.keys())
    if (!expected.has(key)) throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is not a lora_A/lora_B weight of ${targets.join(', ')} in a ${arch.nLayer}-layer model`);
  const out: PeftAdapter['modules'] = modules.map((module) => ({ module, a: new Float32Array(0), b: new Float32Array(0) }));
  for (const [key, want] of expected) {
    const e = header.entries.get(key);
    if (!e) throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is missing`);
    if (e.shape.join(',') !== want.shape.join(','))
      throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is [${e.shape.join(', ')}]; this model and r = ${settings.r} take [${want.shape.join(', ')}]`);
    if (e.dtype !== 'F32' && e.dtype !== 'F16' && e.dtype !== 'BF16') throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is ${e.dtype}; F32, F16 or BF16 is expected`);
    out[want.m][want.which] = decodeToF32(await folder.read(ADAPTER_WEIGHTS, e.begin, e.end), e.dtype as HfDtype);
  }
  return { settings, modules: out };
}

/** The adapter on the backend, for HfModel.setAdapters (the caller disposes adapterTensors of it). */
export function uploadPeftAdapter(be: Backend, adapter: PeftAdapter, nLayer: number): ModelAdapters {
  const { r } = adapter.settings;
  const scaling = loraScaling(adapter.settings);
  const layers: ModelAdapters['layers'] = Array.from({ length: nLayer }, () => ({}));
  for (const { module, a, b } of adapter.modules) {
    const shared = be.tensor(a, [r, module.in]);
    for (const p of module.slots) layers[module.layer][p.target] = { a: shared, b: be.tensor(b.subarray(p.from * r, p.to * r), [p.to - p.from, r]), scaling };
  }
  return { settings: adapter.settings, layers };
}

/** Writes an adapter's values into a trainable of the same settings (moments are left as they are). */
export function loadPeftValues(model: HfModel, t: LoraTrainable, adapter: PeftAdapter): void {
  const same = (x: LoraSettings, y: LoraSettings) => x.r === y.r && x.alpha === y.alpha && x.rslora === y.rslora && x.targets.join(',') === y.targets.join(',');
  if (!same(t.settings, adapter.settings)) throw new Error('loadPeftValues: the adapter was made with other settings (r, lora_alpha, use_rslora or target_modules)');
  const { r } = adapter.settings;
  adapter.modules.forEach(({ module, a, b }, i) => {
    const into = t.modules[i];
    model.be.write(into.a, a);
    module.slots.forEach((p, j) => {
      model.be.write(into.b[j], b.subarray(p.from * r, p.to * r));
    });
  });
}
