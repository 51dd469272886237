// Trains one "Your own model" preset (rl/hf/hfPresets.ts) on the chat model shipped with the page
// through the page's own worker code (HfSession: the same files opened as the panel's "Open the
// shipped chat model" opens them, the same HfTraining) and records what the panel would show:
// every row, the held-out evaluations, the last iteration's trace for the Inspect tab, and the
// adapter with its training state, as the run file "Save the run" writes (store/hfRunFile.ts).
// Shown by the preset's "Show the result".
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend } from '../backend/backend.ts';
import { FileListFolder } from '../model/hf/browserFolder.ts';
import { SHIPPED_CHAT_MODEL } from '../model/hf/shippedModel.ts';
import type { HfPreset } from '../rl/hf/hfPresets.ts';
import type { HfTrainEval, HfTrainRow } from '../rl/hf/hfTrainSettings.ts';
import { hfRunFileText, runModelOf } from '../store/hfRunFile.ts';
import { HfSession } from '../worker/hfSession.ts';
import type { HfModelSummary } from '../worker/hfTypes.ts';
import type { WorkerToPage } from '../worker/protocol.ts';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'public');

export interface RecordedHfPreset {
  text: string;
  rows: HfTrainRow[];
  evals: HfTrainEval[];
  seconds: number;
}

/** Trains `preset` (its settings; `iterations` overrides the count) and returns its run file; rejects with the worker's words. */
export async function recordHfPreset(o: { preset: HfPreset; be: Backend; iterations?: number; now?: () => Date; onRow?: (row: HfTrainRow) => void }): Promise<RecordedHfPreset> {
  const posted: WorkerToPage[] = [];
  const session = new HfSession({
    post: (m) => {
      posted.push(m);
      if (m.type === 'hfTrainRow') o.onRow?.(m.row);
    },
  });
  const of = <T extends WorkerToPage['type']>(type: T) => posted.filter((m) => m.type === type) as Extract<WorkerToPage, { type: T }>[];
  const files = await Promise.all(SHIPPED_CHAT_MODEL.files.map(async (name) => new File([new Uint8Array(await readFile(join(PUBLIC, SHIPPED_CHAT_MODEL.path, name)))], name)));
  const t0 = performance.now();
  await session.open(o.be, new FileListFolder(files, SHIPPED_CHAT_MODEL.label), 1);
  const opened = of('hfOpened')[0];
  if (!opened?.model || opened.refusal !== undefined) throw new Error(`the shipped chat model did not open: ${opened?.refusal ?? 'no answer'}`);
  const model: HfModelSummary = opened.model;
  const settings = { ...o.preset.settings, ...(o.iterations !== undefined ? { iterations: o.iterations } : {}) };
  await session.train({ settings, rewardFunction: '' }, 2);
  const trained = of('hfTrained')[0];
  if (!trained || trained.refusal !== undefined || trained.iterations !== settings.iterations)
    throw new Error(`${o.preset.name}: the worker did not train it: ${trained?.refusal ?? `${trained?.iterations ?? 0} of ${settings.iterations} iterations`}`);
  await session.exportAdapter(3, true);
  const exported = of('hfAdapter')[0];
  if (!exported || exported.config === undefined || exported.weights === undefined)
    throw new Error(`${o.preset.name}: the adapter was not exported: ${exported?.refusal ?? 'no answer'}`);
  const rows = of('hfTrainRow').map((m) => m.row);
  const evals = of('hfTrainEval').map((m) => m.eval);
  const last = of('hfTrace').at(-1);
  const text = hfRunFileText({
    savedAt: (o.now?.() ?? new Date()).toISOString(),
    model: runModelOf(model),
    settings,
    iterations: rows.at(-1)?.iter ?? 0,
    rows,
    evals,
    adapter: { config: exported.config, weights: exported.weights, ...(exported.state ? { state: exported.state } : {}) },
    ...(last && last.trace.iter === rows.at(-1)?.iter
      ? { lastTrace: { trace: last.trace, prompts: last.prompts, tokenText: last.tokenText, endedWithEos: last.endedWithEos } }
      : {}),
  });
  session.close();
  return { text, rows, evals, seconds: (performance.now() - t0) / 1000 };
}
