// Model ↔ safetensors. A checkpoint holds every parameter by its GPT-2 name (F32) and metadata
// {config: JSON GptConfig, alphabet, task, format_version}. Loading validates everything on the
// host, uploads into a NEW flat tensor and only then swaps it in, so a bad file never touches the
// current model.
import type { Backend } from '../backend/backend.ts';
import { validateGptConfig, type GptConfig, type HeadKind } from './config.ts';
import { Gpt } from './gpt.ts';
import type { CharModelState } from './sequenceModel.ts';
import { initParams, paramLayout, type ParamLayout } from './params.ts';
import { Rng } from '../util/rng.ts';
import { CharTokenizer } from './tokenizer.ts';
import { decodeSafetensors, encodeSafetensors, quoted, type SafeTensor } from './safetensors.ts';

export const CHECKPOINT_FORMAT_VERSION = '1';

export interface CheckpointInfo {
  config: GptConfig;
  alphabet: string;
  task: string;
}

/** What saving a model reads of it: a trainer's role or a reward model, of either family. */
export type CheckpointSource = Pick<CharModelState, 'be' | 'cfg' | 'stateTensors' | 'toGptLayout'>;

export interface ParsedCheckpoint extends CheckpointInfo {
  params: Map<string, { shape: number[]; data: Float32Array }>;
}

/** A checkpoint of `model`'s parameters, whatever its family (one readback, then its character-model layout). */
export async function saveCheckpoint(model: CheckpointSource, info: { alphabet: string; task: string }): Promise<Uint8Array> {
  return checkpointBytes(model.cfg, model.toGptLayout(await model.be.read(model.stateTensors().params)), info);
}

/** A checkpoint of parameters `flat` (host values in paramLayout(cfg)'s order). */
export function checkpointBytes(cfg: GptConfig, flat: ArrayLike<number>, info: { alphabet: string; task: string }): Uint8Array {
  const layout = paramLayout(cfg);
  if (flat.length !== layout.total) throw new Error(`checkpoint: ${flat.length} parameters for a layout of ${layout.total}`);
  const tensors: SafeTensor[] = layout.entries.map((e) => ({
    name: e.name,
    dtype: 'F32',
    shape: [...e.shape],
    data: Float32Array.from({ length: e.size }, (_, i) => flat[e.offset + i]),
  }));
  return encodeSafetensors(tensors, {
    config: JSON.stringify(cfg),
    alphabet: info.alphabet,
    task: info.task,
    format_version: CHECKPOINT_FORMAT_VERSION,
  });
}

/** Decodes and checks the file's own consistency (metadata present, config valid). */
export function parseCheckpoint(bytes: Uint8Array): ParsedCheckpoint {
  const { tensors, metadata } = decodeSafetensors(bytes);
  for (const key of ['config', 'alphabet', 'task', 'format_version']) {
    if (typeof metadata[key] !== 'string') throw new Error(`checkpoint metadata is missing "${key}"`);
  }
  if (metadata.format_version !== CHECKPOINT_FORMAT_VERSION) {
    throw new Error(`checkpoint format_version ${quoted(metadata.format_version)} is not supported (expected ${CHECKPOINT_FORMAT_VERSION})`);
  }
  let config: GptConfig;
  try {
    config = JSON.parse(metadata.config) as GptConfig;
  } catch (e) {
    throw new Error(`checkpoint config is not valid JSON: ${(e as Error).message}`);
  }
  validateGptConfig(config);
  // Token ids index rows of wte: a vocabulary smaller than the alphabet's reads past the table.
  const vocab = new CharTokenizer(metadata.alphabet).vocabSize;
  if (config.vocabSize !== vocab) {
    throw new Error(`checkpoint vocabSize ${config.vocabSize} does not fit its alphabet of ${vocab} tokens (3 special + ${vocab - 3} characters)`);
  }
  const params = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, t] of tensors) {
    if (t.dtype !== 'F32') throw new Error(`checkpoint tensor ${quoted(name)} has dtype ${t.dtype}, expected F32`);
    params.set(name, { shape: t.shape, data: t.data as Float32Array });
  }
  return { config, alphabet: metadata.alphabet, task: metadata.task, params };
}

/**
 * Flat host parameters for `layout` from a parsed checkpoint. Every name the layout needs must be
 * present with its exact shape; names outside `layout` are an error unless `allowExtra`.
 * `skip` names (a new head) are left for the caller to initialise.
 */
function flatFrom(ck: ParsedCheckpoint, layout: ParamLayout, skip: (name: string) => boolean, allowExtra: boolean): Float32Array {
  const flat = new Float32Array(layout.total);
  for (const e of layout.entries) {
    if (skip(e.name)) continue;
    const t = ck.params.get(e.name);
    if (!t) throw new Error(`checkpoint is missing parameter "${e.name}"`);
    if (t.shape.length !== e.shape.length || t.shape.some((d, i) => d !== e.shape[i])) {
      throw new Error(`checkpoint parameter "${e.name}" has shape [${t.shape.join(', ')}], expected [${e.shape.join(', ')}]`);
    }
    flat.set(t.data, e.offset);
  }
  if (!allowExtra) {
    for (const name of ck.params.keys()) if (!layout.byName.has(name)) throw new Error(`checkpoint has unexpected parameter ${quoted(name)}`);
  }
  for (let i = 0; i < flat.length; i++) {
    if (!Number.isFinite(flat[i])) throw new Error('checkpoint contains a non-finite parameter value');
  }
  return flat;
}

/** A checkpoint's config, alphabet and task, and its parameters flat in its own config's layout (checked as flatFrom checks them). */
export function checkpointParams(bytes: Uint8Array): { info: CheckpointInfo; params: Float32Array } {
  const ck = parseCheckpoint(bytes);
  return { info: { config: ck.config, alphabet: ck.alphabet, task: ck.task }, params: flatFrom(ck, paramLayout(ck.config), () => false, false) };
}

/**
 * Replaces `model`'s parameters with the checkpoint's. Throws (leaving the model untouched) on a
 * truncated or malformed file, a different config, alphabet or task, or a missing / misshapen /
 * unexpected tensor.
 */
export function loadCheckpointInto(model: Gpt, bytes: Uint8Array, expect: { alphabet: string; task?: string }): CheckpointInfo {
  const ck = parseCheckpoint(bytes);
  const got = JSON.stringify(pickConfig(ck.config));
  const want = JSON.stringify(pickConfig(model.cfg));
  if (got !== want) throw new Error(`checkpoint config ${got} does not match the model's ${want}`);
  checkAlphabet(ck, expect);
  const flat = flatFrom(ck, model.layout, () => false, false);
  model.replaceParams(model.be.tensor(flat, [model.layout.total]));
  return { config: ck.config, alphabet: ck.alphabet, task: ck.task };
}

/**
 * A new model from a checkpoint. With `head` different from the file's (an SFT lm checkpoint →
 * critic or reward model), the trunk is copied and the new head initialised from `seed`.
 */
export function modelFromCheckpoint(
  be: Backend,
  bytes: Uint8Array,
  opts: { head?: HeadKind; seed?: number; alphabet?: string; task?: string } = {},
): { model: Gpt; info: CheckpointInfo } {
  const { host, info } = checkpointHostParams(bytes, opts);
  return { model: new Gpt(be, info.config, host), info };
}

/**
 * A checkpoint's parameters as a model of `opts.head` starts from them, host values in its layout:
 * with a head different from the file's (an SFT lm checkpoint → critic or reward model), the trunk
 * is copied and the new head initialised from `seed`. What modelFromCheckpoint uploads.
 */
export function checkpointHostParams(
  bytes: Uint8Array,
  opts: { head?: HeadKind; seed?: number; alphabet?: string; task?: string } = {},
): { host: Float64Array; info: CheckpointInfo } {
  const ck = parseCheckpoint(bytes);
  if (opts.alphabet !== undefined) checkAlphabet(ck, { alphabet: opts.alphabet, task: opts.task });
  const head = opts.head ?? ck.config.head;
  const cfg: GptConfig = { ...pickConfig(ck.config), head };
  const layout = paramLayout(cfg);
  const newHead = head !== ck.config.head;
  const flat = flatFrom(ck, layout, (name) => newHead && !layout.byName.get(name)!.trunk, newHead);
  // A new head keeps its fresh initialisation from `seed`; everything else comes from the file.
  const host = initParams(layout, new Rng(opts.seed ?? 0));
  for (const e of layout.entries) if (!newHead || e.trunk) host.set(flat.subarray(e.offset, e.offset + e.size), e.offset);
  return { host, info: { config: cfg, alphabet: ck.alphabet, task: ck.task } };
}

function pickConfig(c: GptConfig): GptConfig {
  return { vocabSize: c.vocabSize, nLayer: c.nLayer, nHead: c.nHead, dModel: c.dModel, maxSeq: c.maxSeq, head: c.head };
}

function checkAlphabet(ck: ParsedCheckpoint, expect: { alphabet: string; task?: string }): void {
  if (ck.alphabet !== expect.alphabet) {
    throw new Error(`checkpoint alphabet ${quoted(ck.alphabet)} does not match the task's ${quoted(expect.alphabet)}`);
  }
  if (expect.task !== undefined && ck.task !== expect.task) {
    throw new Error(`checkpoint was trained for task ${quoted(ck.task)}, not "${expect.task}"`);
  }
}
