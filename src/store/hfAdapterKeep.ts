// The trained adapter of the visitor's own model kept in this browser, so a reload can continue the
// run: PEFT's two files and the run's training state (moments, critic: trainingState.ts) in the
// origin-private file system beside the kept model folder (hfKeep.ts), and a record of the run (the
// model's label, its iterations, rows, evaluations, settings and the last iteration's trace for the
// Inspect tab) written last, so a copy cut short is never offered.
import { type HfTrainEval, type HfTrainRow, type HfTrainSettings, upgradeHfTrainRow } from '../rl/hf/hfTrainSettings.ts';
import { removeIfThere, root } from './hfKeep.ts';
import { type HfRunTrace, readRunTrace, runTraceJson } from './hfRunFile.ts';

const DIR = 'hf-adapter';
const RECORD = 'hf-adapter.json';
const CONFIG = 'adapter_config.json';
const WEIGHTS = 'adapter_model.safetensors';
const STATE = 'training_state.safetensors';

/** What a kept adapter was trained on and how far. */
export interface KeptAdapterRecord {
  label: string; // the model folder's label it belongs to
  iterations: number;
  settings: HfTrainSettings;
  rows: HfTrainRow[];
  evals: HfTrainEval[];
  savedAt: number;
  /** Iteration `iterations` as the inspector reads it; absent when the page had none. */
  lastTrace?: HfRunTrace;
}

/** The record as its file holds it (the trace's typed arrays as lists). */
export function keptRecordText(record: KeptAdapterRecord): string {
  const { lastTrace, ...rest } = record;
  return JSON.stringify({ ...rest, ...(lastTrace ? { lastTrace: runTraceJson(lastTrace) } : {}) });
}

/** The record in `text`, or null when it does not read; a trace that does not read is left out (the run goes on without it). */
export function readKeptRecord(text: string): KeptAdapterRecord | null {
  const { lastTrace, ...record } = JSON.parse(text) as Omit<KeptAdapterRecord, 'lastTrace'> & { lastTrace?: unknown };
  if (typeof record.label !== 'string' || typeof record.iterations !== 'number' || !Array.isArray(record.rows) || typeof record.settings !== 'object') return null;
  record.rows = record.rows.map(upgradeHfTrainRow);
  let trace: HfRunTrace | undefined;
  try {
    trace = lastTrace === undefined ? undefined : readRunTrace(lastTrace, 'lastTrace', record.iterations);
  } catch {
    trace = undefined;
  }
  return { ...record, ...(trace ? { lastTrace: trace } : {}) };
}

export interface KeptAdapter {
  record: KeptAdapterRecord;
  config: string;
  weights: Uint8Array;
  /** Absent for an adapter kept before training states were (it continues with fresh moments and critic). */
  state?: Uint8Array;
}

async function write(dir: FileSystemDirectoryHandle, name: string, data: string | Uint8Array): Promise<void> {
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await w.write(data as FileSystemWriteChunkType);
  await w.close();
}

/** Keeps the adapter in place of any kept before. */
export async function keepAdapter(record: KeptAdapterRecord, config: string, weights: Uint8Array, state?: Uint8Array): Promise<void> {
  const r = await root();
  await removeIfThere(r, RECORD);
  await removeIfThere(r, DIR);
  const dir = await r.getDirectoryHandle(DIR, { create: true });
  await write(dir, CONFIG, config);
  await write(dir, WEIGHTS, weights);
  if (state) await write(dir, STATE, state);
  await write(r, RECORD, keptRecordText(record));
}

/** The kept adapter with its record, or null (none, or one that does not read). */
export async function readKeptAdapter(): Promise<KeptAdapter | null> {
  try {
    const r = await root();
    const record = readKeptRecord(await (await (await r.getFileHandle(RECORD)).getFile()).text());
    if (!record) return null;
    const dir = await r.getDirectoryHandle(DIR);
    const config = await (await (await dir.getFileHandle(CONFIG)).getFile()).text();
    const weights = new Uint8Array(await (await (await dir.getFileHandle(WEIGHTS)).getFile()).arrayBuffer());
    const state = await dir
      .getFileHandle(STATE)
      .then(async (h) => new Uint8Array(await (await h.getFile()).arrayBuffer()))
      .catch(() => undefined);
    return { record, config, weights, ...(state ? { state } : {}) };
  } catch {
    return null;
  }
}

export async function forgetKeptAdapter(): Promise<void> {
  const r = await root();
  await removeIfThere(r, RECORD);
  await removeIfThere(r, DIR);
}
