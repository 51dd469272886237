// An independent PEFT LoRA merge, for tests (issue #32): the saved adapter is merged into a copy of the
// base Hugging Face folder so that the merged model can be scored without any LoRA code, and its
// log-probs compared with `npm run logprobs --adapter`. On purpose this file uses nothing from
// src/model/hf (loader, safetensors reader/writer, lora.ts, peftAdapter.ts, loraModules.ts): that is the
// code under test. Only node:fs/node:path and the few lines of safetensors below.
//
// The rules, as read in huggingface/peft (commit 5d602fdb, 2026-08-21):
// - src/peft/tuners/lora/layer.py, `LoraLayer.update_layer`: scaling = lora_alpha / r, or
//   lora_alpha / sqrt(r) when `use_rslora`.
// - same file, `Linear.get_delta_weight`: delta = transpose(B @ A, fan_in_fan_out) * scaling, with A the
//   `lora_A` weight (r × in) and B the `lora_B` weight (out × r); `Linear.merge` adds delta to the base
//   layer's weight. `transpose` (src/peft/utils/other.py) is `.T` when fan_in_fan_out, else nothing:
//   transformers' Conv1D (GPT-2) stores its weight as (in × out), and `dispatch_default` forces
//   fan_in_fan_out = True for a Conv1D target.
// - src/peft/utils/save_and_load.py, `get_peft_model_state_dict`: the saved keys drop the adapter name
//   (`…lora_A.default.weight` → `…lora_A.weight`) and, from `PeftModel`, keep the `base_model.model.`
//   prefix (`set_peft_model_state_dict` strips it again on load). File names `adapter_model.safetensors`
//   and `adapter_config.json` (src/peft/utils/constants.py).
// - src/peft/tuners/tuners_utils.py, `check_target_module_exists`: a string `target_modules` is a regex
//   that must match the whole module name; a list matches a name equal to an entry or ending in
//   `.<entry>`.
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const PREFIX = 'base_model.model.';
const DTYPE_BYTES: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

interface TensorEntry {
  dtype: string;
  shape: number[];
  /** The tensor's bytes (a view into the file). */
  bytes: Uint8Array;
}

interface SafetensorsFile {
  metadata?: Record<string, string>;
  /** In the file's header order. */
  tensors: Map<string, TensorEntry>;
}

function readSafetensors(path: string): SafetensorsFile {
  const buf = readFileSync(path);
  const u8 = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  if (u8.length < 8) throw new Error(`${path}: shorter than the 8-byte header length`);
  const n = Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true));
  if (8 + n > u8.length) throw new Error(`${path}: header of ${n} bytes runs past the end of the file`);
  const header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + n))) as Record<string, unknown>;
  const dataStart = 8 + n;
  const out: SafetensorsFile = { tensors: new Map() };
  for (const [name, v] of Object.entries(header)) {
    if (name === '__metadata__') {
      out.metadata = v as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets } = v as { dtype: string; shape: number[]; data_offsets: [number, number] };
    const [b, e] = data_offsets;
    const size = DTYPE_BYTES[dtype];
    if (size === undefined) throw new Error(`${path}: tensor ${name} has unknown dtype ${dtype}`);
    if (e - b !== size * shape.reduce((a, x) => a * x, 1)) throw new Error(`${path}: tensor ${name} has ${e - b} bytes for shape [${shape}] of ${dtype}`);
    if (dataStart + e > u8.length) throw new Error(`${path}: tensor ${name} runs past the end of the file`);
    out.tensors.set(name, { dtype, shape, bytes: u8.subarray(dataStart + b, dataStart + e) });
  }
  return out;
}

/** Header (padded with spaces to a multiple of 8 bytes, as the Rust writer does) then the tensors in order. */
function encodeSafetensors(file: SafetensorsFile): Uint8Array {
  const header: Record<string, unknown> = {};
  if (file.metadata) header.__metadata__ = file.metadata;
  let offset = 0;
  for (const [name, t] of file.tensors) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (new TextEncoder().encode(json).length % 8)) % 8);
  const h = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + h.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  let p = 8 + h.length;
  for (const t of file.tensors.values()) {
    out.set(t.bytes, p);
    p += t.bytes.length;
  }
  return out;
}

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Decodes F32, F16 or BF16 (little-endian) to float64. */
function decode(what: string, t: TensorEntry): Float64Array {
  const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  const n = t.bytes.length / DTYPE_BYTES[t.dtype];
  const out = new Float64Array(n);
  const f32 = new DataView(new ArrayBuffer(4));
  if (t.dtype === 'F32') for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
  else if (t.dtype === 'F16') for (let i = 0; i < n; i++) out[i] = halfToNumber(dv.getUint16(2 * i, true));
  else if (t.dtype === 'BF16')
    for (let i = 0; i < n; i++) {
      f32.setUint32(0, dv.getUint16(2 * i, true) << 16);
      out[i] = f32.getFloat32(0);
    }
  else throw new Error(`${what} has dtype ${t.dtype}; the merge reads F32, F16 or BF16`);
  return out;
}

function encodeF32(values: Float64Array): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) dv.setFloat32(4 * i, values[i], true);
  return out;
}

interface AdapterConfig {
  peft_type?: string;
  r: number;
  lora_alpha: number;
  use_rslora?: boolean;
  fan_in_fan_out?: boolean;
  target_modules?: string | string[] | null;
  use_dora?: boolean;
  lora_bias?: boolean;
  modules_to_save?: string[] | null;
  rank_pattern?: Record<string, number> | null;
  alpha_pattern?: Record<string, number> | null;
}

function targets(config: AdapterConfig, module: string): boolean {
  const t = config.target_modules;
  if (t === 'all-linear') return true; // expanded by PEFT at injection; the saved list is usually explicit
  if (typeof t === 'string') return new RegExp(`^(?:${t})$`).test(module);
  if (Array.isArray(t)) return t.some((k) => module === k || module.endsWith(`.${k}`));
  return false;
}

/** Writes to outDir a copy of the Hugging Face model folder baseDir with the PEFT LoRA adapter in adapterDir merged into its weights. */
export function mergePeftAdapter(baseDir: string, adapterDir: string, outDir: string): { merged: string[] /* base weight keys changed */ } {
  if (resolve(outDir) === resolve(baseDir)) throw new Error('mergePeftAdapter: outDir must not be baseDir');

  // The adapter.
  const config = JSON.parse(readFileSync(join(adapterDir, 'adapter_config.json'), 'utf8')) as AdapterConfig;
  if (config.peft_type !== undefined && config.peft_type !== 'LORA') throw new Error(`adapter_config.json: peft_type ${config.peft_type} is not LORA`);
  if (config.use_dora) throw new Error('adapter_config.json: use_dora (DoRA) is not a plain LoRA merge');
  if (config.lora_bias) throw new Error('adapter_config.json: lora_bias is not supported');
  if (config.modules_to_save?.length) throw new Error('adapter_config.json: modules_to_save is not supported');
  if (Object.keys(config.rank_pattern ?? {}).length || Object.keys(config.alpha_pattern ?? {}).length)
    throw new Error('adapter_config.json: rank_pattern/alpha_pattern are not supported');
  if (!(Number.isInteger(config.r) && config.r > 0)) throw new Error(`adapter_config.json: r = ${config.r}`);
  if (typeof config.lora_alpha !== 'number') throw new Error(`adapter_config.json: lora_alpha = ${config.lora_alpha}`);
  const r = config.r;
  const scale = config.use_rslora ? config.lora_alpha / Math.sqrt(r) : config.lora_alpha / r;
  const fanInFanOut = config.fan_in_fan_out === true;

  const adapter = readSafetensors(join(adapterDir, 'adapter_model.safetensors'));
  const pairs = new Map<string, { A?: TensorEntry; B?: TensorEntry }>();
  for (const [key, t] of adapter.tensors) {
    const m = /^base_model\.model\.(.+)\.(lora_A|lora_B)\.weight$/.exec(key);
    if (!m) throw new Error(`adapter_model.safetensors: unexpected key ${key} (want ${PREFIX}<module>.lora_A/lora_B.weight)`);
    const p = pairs.get(m[1]) ?? {};
    p[m[2] === 'lora_A' ? 'A' : 'B'] = t;
    pairs.set(m[1], p);
  }

  // The base weights: one file or an index of shards.
  const single = join(baseDir, 'model.safetensors');
  const indexPath = join(baseDir, 'model.safetensors.index.json');
  if (existsSync(single) && existsSync(indexPath)) throw new Error(`${baseDir}: both model.safetensors and model.safetensors.index.json; which one is the model is ambiguous`);
  let index: { metadata?: Record<string, unknown>; weight_map: Record<string, string> } | undefined;
  const shards = new Map<string, SafetensorsFile>();
  const shardOf = new Map<string, string>();
  if (existsSync(single)) {
    const f = readSafetensors(single);
    shards.set('model.safetensors', f);
    for (const k of f.tensors.keys()) shardOf.set(k, 'model.safetensors');
  } else if (existsSync(indexPath)) {
    index = JSON.parse(readFileSync(indexPath, 'utf8'));
    if (!index?.weight_map) throw new Error('model.safetensors.index.json: no weight_map');
    for (const [k, file] of Object.entries(index.weight_map)) {
      if (!shards.has(file)) shards.set(file, readSafetensors(join(baseDir, file)));
      if (!shards.get(file)!.tensors.has(k)) throw new Error(`model.safetensors.index.json: ${k} is mapped to ${file}, which does not hold it`);
      shardOf.set(k, file);
    }
  } else throw new Error(`${baseDir}: neither model.safetensors nor model.safetensors.index.json`);

  // Every merge is computed before anything is written, so an error leaves outDir untouched.
  const merged = new Map<string, Uint8Array>();
  for (const [module, { A, B }] of pairs) {
    if (!A || !B) throw new Error(`adapter_model.safetensors: ${module} has ${A ? 'lora_A' : 'lora_B'} but not ${A ? 'lora_B' : 'lora_A'}`);
    if (!targets(config, module)) throw new Error(`adapter_model.safetensors: ${module} is not matched by target_modules ${JSON.stringify(config.target_modules)}`);
    const tried = [`${module}.weight`];
    if (module.startsWith('transformer.')) tried.push(`${module.slice('transformer.'.length)}.weight`);
    const key = tried.find((k) => shardOf.has(k));
    if (!key) throw new Error(`base model has no weight ${tried.join(' (nor ')}${tried.length > 1 ? ')' : ''} for adapter module ${module}`);
    if (merged.has(key)) throw new Error(`adapter_model.safetensors: two adapter modules merge into ${key}`);
    const W = shards.get(shardOf.get(key)!)!.tensors.get(key)!;
    if (A.shape.length !== 2 || B.shape.length !== 2 || W.shape.length !== 2) throw new Error(`${module}: lora_A, lora_B and ${key} must be matrices`);
    const [rA, nIn] = A.shape;
    const [nOut, rB] = B.shape;
    if (rA !== r || rB !== r) throw new Error(`${module}: lora_A [${A.shape}] and lora_B [${B.shape}] do not have rank r = ${r}`);
    const want = fanInFanOut ? [nIn, nOut] : [nOut, nIn];
    if (W.shape[0] !== want[0] || W.shape[1] !== want[1])
      throw new Error(`${key} has shape [${W.shape}], but the adapter needs [${want}] (${fanInFanOut ? 'fan_in_fan_out: in × out' : 'out × in'})`);
    const w = decode(key, W);
    const a = decode(`${module}.lora_A.weight`, A);
    const b = decode(`${module}.lora_B.weight`, B);
    for (let o = 0; o < nOut; o++)
      for (let i = 0; i < nIn; i++) {
        let d = 0;
        for (let k = 0; k < r; k++) d += b[o * r + k] * a[k * nIn + i];
        w[fanInFanOut ? i * nOut + o : o * nIn + i] += scale * d;
      }
    merged.set(key, encodeF32(w));
  }

  // Write: every file of the base folder, the weight files rewritten where a tensor changed.
  mkdirSync(outDir, { recursive: true });
  for (const name of readdirSync(baseDir)) {
    if (shards.has(name) || name === 'model.safetensors.index.json') continue;
    const src = join(baseDir, name);
    if (statSync(src).isDirectory()) cpSync(src, join(outDir, name), { recursive: true });
    else copyFileSync(src, join(outDir, name));
  }
  let totalSize = 0;
  for (const [name, file] of shards) {
    const tensors = new Map<string, TensorEntry>();
    for (const [k, t] of file.tensors) {
      const m = merged.get(k);
      tensors.set(k, m ? { dtype: 'F32', shape: t.shape, bytes: m } : t);
      totalSize += (m ?? t.bytes).length;
    }
    if ([...file.tensors.keys()].some((k) => merged.has(k))) writeFileSync(join(outDir, name), encodeSafetensors({ metadata: file.metadata, tensors }));
    else copyFileSync(join(baseDir, name), join(outDir, name));
  }
  if (index) {
    const out = { ...index, metadata: { ...(index.metadata ?? {}), total_size: totalSize } };
    writeFileSync(join(outDir, 'model.safetensors.index.json'), `${JSON.stringify(out, null, 2)}\n`);
  }
  return { merged: [...merged.keys()].sort() };
}
