// Opening a Hugging Face model folder: every small file read and checked, every safetensors header
// read (two small ranges per file) and matched against the config, before one weight is read or
// one byte of GPU memory is allocated. The result says everything the memory plan and the loader
// need; tensors are then read one at a time (src/model/hf/readWeights.ts).
//
// Files, as transformers saves them (modeling_utils.py save_pretrained / from_pretrained):
//   config.json                          required
//   model.safetensors                    or, when absent,
//   model.safetensors.index.json         {"weight_map": {key: "model-0000k-of-0000n.safetensors"}} + the shards
//   tokenizer.json                       required (the "fast" tokenizer format)
//   tokenizer_config.json                optional: chat_template, bos/eos/pad tokens
//   chat_template.jinja                  optional: newer transformers save the template here instead
//   generation_config.json               optional: eos_token_id (int or list), sampling defaults
import type { HfArch } from './arch.ts';
import { parseHfConfig } from './config.ts';
import { readJsonFile, readTextFile, type ModelFolder } from './folder.ts';
import { generationFromModelConfig, parseGenerationConfig, parseTokenizerConfig, type GenerationDefaults, type TokenizerConfig } from './generationConfig.ts';
import { readSafetensorsHeader, type SafetensorsEntry } from './safetensorsHeader.ts';
import { buildWeightMap, type WeightMap } from './weights.ts';

export const SINGLE_WEIGHTS = 'model.safetensors';
export const WEIGHTS_INDEX = 'model.safetensors.index.json';

export interface HfFolderInfo {
  label: string;
  arch: HfArch;
  /** config.json as parsed. */
  config: Record<string, unknown>;
  weights: WeightMap;
  /** The safetensors files read, with their sizes. */
  weightFiles: { name: string; bytes: number }[];
  /** Bytes of the tensors the model uses, as stored. */
  weightBytes: number;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: TokenizerConfig;
  generation: GenerationDefaults;
  /** 1 + the largest id tokenizer.json defines (≤ arch.vocab). */
  tokenizerVocab: number;
}

/** Which safetensors files hold the weights, and (for shards) which key each file must hold. */
async function weightFileList(folder: ModelFolder, names: Set<string>): Promise<{ files: string[]; index: Map<string, string> | null }> {
  if (names.has(SINGLE_WEIGHTS)) return { files: [SINGLE_WEIGHTS], index: null };
  if (names.has(WEIGHTS_INDEX)) {
    const raw = (await readJsonFile(folder, WEIGHTS_INDEX)) as { weight_map?: unknown } | null;
    const wm = raw?.weight_map;
    if (typeof wm !== 'object' || wm === null || Array.isArray(wm)) throw new Error(`${WEIGHTS_INDEX}: no "weight_map" object`);
    const index = new Map<string, string>();
    for (const [key, file] of Object.entries(wm as Record<string, unknown>)) {
      if (typeof file !== 'string' || /[\\/]/.test(file) || !file.endsWith('.safetensors')) {
        throw new Error(`${WEIGHTS_INDEX}: ${key} maps to ${JSON.stringify(file)}, not a .safetensors file of this folder`);
      }
      if (!names.has(file)) throw new Error(`${WEIGHTS_INDEX} names ${file} (for ${key}) but the folder has no such file`);
      index.set(key, file);
    }
    return { files: [...new Set(index.values())].sort(), index };
  }
  const other = [...names].find((n) => /\.(bin|pt|pth|gguf|ckpt|h5|msgpack)$/.test(n));
  if (other) {
    throw new Error(
      `${other}: only safetensors weights are read (${SINGLE_WEIGHTS} or shards with ${WEIGHTS_INDEX}); save the model with transformers' save_pretrained(safe_serialization=True)`,
    );
  }
  throw new Error(`no weights: the folder has neither ${SINGLE_WEIGHTS} nor ${WEIGHTS_INDEX}`);
}

/** Largest token id tokenizer.json defines (model vocabulary and added tokens). */
export function maxTokenizerId(tok: Record<string, unknown>): number {
  let max = -1;
  const model = tok.model as { vocab?: unknown } | undefined;
  const vocab = model?.vocab;
  if (Array.isArray(vocab))
    max = vocab.length - 1; // Unigram: [[piece, score], …], id = position
  else if (typeof vocab === 'object' && vocab !== null) for (const id of Object.values(vocab)) if (typeof id === 'number' && id > max) max = id;
  for (const t of (tok.added_tokens as { id?: unknown }[] | undefined) ?? []) if (typeof t.id === 'number' && t.id > max) max = t.id;
  return max;
}

export async function openHfFolder(folder: ModelFolder): Promise<HfFolderInfo> {
  const names = new Set(await folder.list());
  if (!names.has('config.json')) {
    throw new Error(`config.json is missing from ${folder.label}: a Hugging Face model folder holds config.json, ${SINGLE_WEIGHTS} (or shards) and tokenizer.json`);
  }
  const config = (await readJsonFile(folder, 'config.json')) as Record<string, unknown>;
  const arch = parseHfConfig(config);

  if (!names.has('tokenizer.json')) {
    throw new Error(
      `tokenizer.json is missing from ${folder.label}: the tokenizer is read from tokenizer.json (the "fast" format); a folder with only vocab.json + merges.txt or tokenizer.model gets one from transformers' AutoTokenizer.from_pretrained(…).save_pretrained(…)`,
    );
  }

  const { files, index } = await weightFileList(folder, names);
  const entries = new Map<string, SafetensorsEntry>();
  const weightFiles: { name: string; bytes: number }[] = [];
  for (const f of files) {
    const h = await readSafetensorsHeader(folder, f);
    weightFiles.push({ name: f, bytes: h.fileSize });
    for (const [k, e] of h.entries) {
      const prev = entries.get(k);
      if (prev) throw new Error(`tensor ${k} is in both ${prev.file} and ${f}`);
      entries.set(k, e);
    }
  }
  if (index) {
    for (const [key, file] of index) {
      const e = entries.get(key);
      if (!e || e.file !== file) throw new Error(`${WEIGHTS_INDEX} maps ${key} to ${file} but that file has no such tensor`);
    }
  }
  const weights = buildWeightMap(arch, entries, files.length === 1 ? files[0] : `the ${files.length} shards`);
  let weightBytes = 0;
  for (const w of weights.byName.values()) weightBytes += w.end - w.begin;

  const tokenizerJson = (await readJsonFile(folder, 'tokenizer.json')) as Record<string, unknown>;
  if (typeof tokenizerJson !== 'object' || tokenizerJson === null || typeof tokenizerJson.model !== 'object') {
    throw new Error('tokenizer.json has no "model" object; is it a tokenizers (fast tokenizer) file?');
  }
  const maxId = maxTokenizerId(tokenizerJson);
  if (maxId < 0) throw new Error('tokenizer.json defines no tokens');
  if (maxId >= arch.vocab) throw new Error(`tokenizer.json has token id ${maxId} but config.json says vocab_size ${arch.vocab}`);

  const chatTemplateFile = names.has('chat_template.jinja') ? await readTextFile(folder, 'chat_template.jinja') : null;
  const tokenizerConfig = parseTokenizerConfig(await readJsonFile(folder, 'tokenizer_config.json'), chatTemplateFile);
  const genRaw = await readJsonFile(folder, 'generation_config.json');
  const generation = genRaw === null ? generationFromModelConfig(arch) : parseGenerationConfig(genRaw, arch);
  for (const id of generation.eosTokenIds) {
    if (id >= arch.vocab) throw new Error(`${generation.source}: eos_token_id ${id} is outside the vocabulary (vocab_size ${arch.vocab})`);
  }
  return { label: folder.label, arch, config, weights, weightFiles, weightBytes, tokenizerJson, tokenizerConfig, generation, tokenizerVocab: maxId + 1 };
}
