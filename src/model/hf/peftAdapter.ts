// LoRA adapters as PEFT saves them (save_pretrained): adapter_config.json and
// adapter_model.safetensors with keys base_model.model.<module>.lora_A.weight / lora_B.weight (the
// adapter's name, "default", left out). Written from a trained LoraTrainable; read back into one
// with every field checked against the base model, and anything this page cannot run (DoRA,
// modules_to_save, a restricted layer list, Conv1D orientation, trained biases) refused by name.
import type { Tensor } from '../../backend/tensor.ts';
import type { HfArch } from './arch.ts';
import { decodeToF32, type HfDtype } from './dtype.ts';
import type { ModelFolder } from './folder.ts';
import type { HfModel } from './hfModel.ts';
import { LORA_TARGETS, loraModulePath, type LoraSettings, type LoraTarget, peftAdapterConfig, peftAdapterKey } from './lora.ts';
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
  const order: { key: string; tensor: Tensor }[] = [];
  t.adapters.layers.forEach((layer, l) => {
    for (const target of t.settings.targets) {
      const ad = layer[target];
      if (!ad) continue;
      order.push({ key: peftAdapterKey(loraModulePath(l, target), 'A'), tensor: ad.a });
      order.push({ key: peftAdapterKey(loraModulePath(l, target), 'B'), tensor: ad.b });
    }
  });
  const values = await model.be.readMany(order.map((o) => o.tensor));
  const tensors: TensorValues[] = order.map((o, i) => ({ key: o.key, dtype: 'F32', shape: [...o.tensor.shape], values: values[i] }));
  return {
    [ADAPTER_CONFIG]: `${JSON.stringify(peftAdapterConfig(t.settings, baseModel), null, 2)}\n`,
    [ADAPTER_WEIGHTS]: encodeHfSafetensors(tensors),
  };
}

/** A PEFT adapter read from a folder: its settings and, per layer and target, A (r, in) and B (out, r). */
export interface PeftAdapter {
  settings: LoraSettings;
  values: Partial<Record<LoraTarget, { a: Float32Array; b: Float32Array }>>[];
}

/** (out, in) of each target's weight in the base model (from its config, as the loader lays it out). */
export function targetDims(a: HfArch, target: LoraTarget): { out: number; in: number } {
  const q = a.nHead * a.headDim;
  const kv = a.nKvHead * a.headDim;
  const F = a.dFf;
  const dims: Record<LoraTarget, [number, number]> = {
    q_proj: [q, a.dModel],
    k_proj: [kv, a.dModel],
    v_proj: [kv, a.dModel],
    o_proj: [a.dModel, q],
    gate_proj: [F, a.dModel],
    up_proj: [F, a.dModel],
    down_proj: [a.dModel, F],
  };
  const [out, inF] = dims[target];
  return { out, in: inF };
}

const fail = (field: string, why: string): never => {
  throw new Error(`${ADAPTER_CONFIG}: ${field} ${why}`);
};

/** Reads and checks adapter_config.json and adapter_model.safetensors of `folder` against `arch`. */
export async function readPeftAdapter(folder: ModelFolder, arch: HfArch): Promise<PeftAdapter> {
  if (arch.family === 'gpt2') throw new Error("LoRA adapters: GPT-2's Conv1D layers (c_attn, c_proj, c_fc) are not supported; Llama, Qwen2 and Qwen3 are");
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
  if (cfg.fan_in_fan_out === true) fail('fan_in_fan_out', 'is true (Conv1D weights); only nn.Linear layers are supported');
  if ((cfg.bias ?? 'none') !== 'none') fail('bias', `is ${JSON.stringify(cfg.bias)}; only "none" (no trained biases) is supported`);
  if (Array.isArray(cfg.modules_to_save) && cfg.modules_to_save.length > 0)
    fail('modules_to_save', `lists ${JSON.stringify(cfg.modules_to_save)}; fully trained modules are not supported`);
  if (cfg.layers_to_transform !== null && cfg.layers_to_transform !== undefined) fail('layers_to_transform', 'restricts the layers; adapters on every layer are expected');
  const tm = cfg.target_modules;
  const targets: LoraTarget[] =
    tm === 'all-linear'
      ? [...LORA_TARGETS]
      : Array.isArray(tm) && tm.length > 0 && tm.every((t) => (LORA_TARGETS as readonly unknown[]).includes(t))
        ? LORA_TARGETS.filter((t) => tm.includes(t))
        : fail('target_modules', `is ${JSON.stringify(tm)}; a list of ${LORA_TARGETS.join(', ')} (or "all-linear") is expected`);
  const settings: LoraSettings = { r: r as number, alpha: alpha as number, rslora: rslora as boolean, targets };

  const header = await readSafetensorsHeader(folder, ADAPTER_WEIGHTS);
  const expected = new Map<string, { l: number; target: LoraTarget; which: 'a' | 'b'; shape: number[] }>();
  for (let l = 0; l < arch.nLayer; l++)
    for (const target of targets) {
      const d = targetDims(arch, target);
      expected.set(peftAdapterKey(loraModulePath(l, target), 'A'), { l, target, which: 'a', shape: [settings.r, d.in] });
      expected.set(peftAdapterKey(loraModulePath(l, target), 'B'), { l, target, which: 'b', shape: [d.out, settings.r] });
    }
  for (const key of header.entries.keys())
    if (!expected.has(key)) throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is not a lora_A/lora_B weight of ${targets.join(', ')} in a ${arch.nLayer}-layer model`);
  const values: PeftAdapter['values'] = Array.from({ length: arch.nLayer }, () => ({}));
  for (const [key, want] of expected) {
    const e = header.entries.get(key);
    if (!e) throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is missing`);
    if (e.shape.join(',') !== want.shape.join(','))
      throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is [${e.shape.join(', ')}]; this model and r = ${settings.r} take [${want.shape.join(', ')}]`);
    if (e.dtype !== 'F32' && e.dtype !== 'F16' && e.dtype !== 'BF16') throw new Error(`${ADAPTER_WEIGHTS}: tensor ${key} is ${e.dtype}; F32, F16 or BF16 is expected`);
    const v = decodeToF32(await folder.read(ADAPTER_WEIGHTS, e.begin, e.end), e.dtype as HfDtype);
    values[want.l][want.target] ??= { a: new Float32Array(0), b: new Float32Array(0) };
    const slot = values[want.l][want.target]!;
    slot[want.which] = v;
  }
  return { settings, values };
}

/** Writes an adapter's values into a trainable of the same settings (moments are left as they are). */
export function loadPeftValues(model: HfModel, t: LoraTrainable, adapter: PeftAdapter): void {
  const same = (x: LoraSettings, y: LoraSettings) => x.r === y.r && x.alpha === y.alpha && x.rslora === y.rslora && x.targets.join(',') === y.targets.join(',');
  if (!same(t.settings, adapter.settings)) throw new Error('loadPeftValues: the adapter was made with other settings (r, lora_alpha, use_rslora or target_modules)');
  adapter.values.forEach((layer, l) => {
    for (const [target, v] of Object.entries(layer) as [LoraTarget, { a: Float32Array; b: Float32Array }][]) {
      const ad = t.adapters.layers[l][target]!;
      model.be.write(ad.a, v.a);
      model.be.write(ad.b, v.b);
    }
  });
}
