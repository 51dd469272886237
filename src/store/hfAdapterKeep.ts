// The trained adapter of the visitor's own model kept in this browser, so a reload can continue the
// run: PEFT's two files and the run's training state (moments, critic: trainingState.ts) in the
// origin-private file system beside the kept model folder (hfKeep.ts), and a record of the run (the
// model's label, its iterations, rows, evaluations, settings, the last iteration's trace for the
// Inspect tab, the earlier runs the charts drew beside it and a Run both under way) written last,
// so a copy cut short is never offered.
import { type HfTrainEval, type HfTrainRow, type HfTrainSettings, upgradeHfTrainRow } from '../rl/hf/hfTrainSettings.ts';
import { removeIfThere, root } from './hfKeep.ts';
import { type HfRunTrace, readRunTrace, readSettings, runTraceJson } from './hfRunFile.ts';
import type { HfComparedRun } from './hfTrain.ts';

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
  /** Earlier runs of this model the charts drew beside this one (their rows without responses). */
  compared?: HfComparedRun[];
  /** A Run both under way when this was kept: every arm's settings, and the arm this adapter is of. */
  runBoth?: KeptRunBoth;
}

export interface KeptRunBoth {
  arm: number;
  arms: HfTrainSettings[];
}

/** What of a kept Run both is left: the arm it is in and its iterations still to train (0: start the next arm); null when nothing is. */
export function runBothLeft(record: Pick<KeptAdapterRecord, 'iterations' | 'runBoth'>): { arm: number; arms: HfTrainSettings[]; iterations: number } | null {
  const rb = record.runBoth;
  if (!rb) return null;
  const iterations = Math.max(0, rb.arms[rb.arm].iterations - record.iterations);
  return iterations === 0 && rb.arm === rb.arms.length - 1 ? null : { arm: rb.arm, arms: rb.arms, iterations };
}

/** The runs for the charts as kept: each row's numbers, not its responses. */
export function comparedToKeep(compared: readonly HfComparedRun[]): HfComparedRun[] {
  return compared.map((c) => ({ ...c, rows: c.rows.map((r) => ({ ...r, responses: [] })) }));
}

/** A kept record's earlier runs, or undefined when they do not read (the run goes on without them). */
function readCompared(x: unknown): HfComparedRun[] | undefined {
  if (!Array.isArray(x)) return undefined;
  try {
    return x.map((c) => {
      if (typeof c?.model !== 'string' || !Array.isArray(c.rows)) throw new Error('not a run');
      return { model: c.model, settings: readSettings(c.settings), rows: c.rows.map(upgradeHfTrainRow) };
    });
  } catch {
    return undefined;
  }
}

/** A kept record's Run both, or undefined when it does not read. */
function readRunBoth(x: unknown): KeptRunBoth | undefined {
  const rb = x as Partial<KeptRunBoth> | undefined;
  if (!rb || !Array.isArray(rb.arms) || rb.arms.length === 0 || !Number.isInteger(rb.arm) || rb.arm! < 0 || rb.arm! >= rb.arms.length) return undefined;
  try {
    return { arm: rb.arm!, arms: rb.arms.map(readSettings) };
  } catch {
    return undefined;
  }
}

/** The record as its file holds it (the trace's typed arrays as lists). */
export function keptRecordText(record: KeptAdapterRecord): string {
  const { lastTrace, ...rest } = record;
  return JSON.stringify({ ...rest, ...(lastTrace ? { lastTrace: runTraceJson(lastTrace) } : {}) });
}

/** The record in `text`, or null when it does not read; a trace that does not read is left out (the run goes on without it). */
export function readKeptRecord(text: string): KeptAdapterRecord | null {
  const {
    lastTrace,
    compared: comparedJson,
    runBoth: runBothJson,
    ...record
  } = JSON.parse(text) as Omit<KeptAdapterRecord, 'lastTrace' | 'compared' | 'runBoth'> & {
    lastTrace?: unknown;
    compared?: unknown;
    runBoth?: unknown;
  };
  if (typeof record.label !== 'string' || typeof record.iterations !== 'number' || !Array.isArray(record.rows) || typeof record.settings !== 'object') return null;
  record.rows = record.rows.map(upgradeHfTrainRow);
  let trace: HfRunTrace | undefined;
  try {
    trace = lastTrace === undefined ? undefined : readRunTrace(lastTrace, 'lastTrace', record.iterations);
  } catch {
    trace = undefined;
  }
  const compared = readCompared(comparedJson);
  const runBoth = readRunBoth(runBothJson);
  return { ...record, ...(trace ? { lastTrace: trace } : {}), ...(compared ? { compared } : {}), ...(runBoth ? { runBoth } : {}) };
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
