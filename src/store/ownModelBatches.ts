// The teaching views' batches of the own-model run: its newest iteration, and a run file's recorded
// one when one is shown, read off the inspector's traces (traceBatch.ts). The own-model run is not
// one of the playground's runs, so its batch is kept apart from theirs, with the settings it
// trained with as a playground config (the views read the clip range, loss mode and KL from it).
import { DEFAULT_CONFIG } from '../rl/configKnobs.ts';
import type { PpoConfig } from '../rl/config.ts';
import type { InspectKnobs } from '../rl/inspect/trace.ts';
import type { RunBatch } from './batches.ts';
import { type CapturedTrace, OWN_MODEL_RECORDED_ID, OWN_MODEL_RUN_ID } from './inspection.ts';
import { traceBatch } from './traceBatch.ts';

/** One own-model iteration's batch, under its trace's run id (OWN_MODEL_RUN_ID, OWN_MODEL_RECORDED_ID). */
export interface OwnModelBatch {
  id: string;
  /** The model's label. */
  model: string;
  /** The run file a recorded iteration came from. */
  file?: string;
  batch: RunBatch;
  /** The iteration's settings: the playground's defaults with the trace's knobs. */
  config: PpoConfig;
  /** The trace it was read off (a new trace makes a new batch; the same one keeps it). */
  source: CapturedTrace;
}

/** The playground config an iteration's knobs stand for (the knobs the inspector holds, over the defaults). */
export function configOfKnobs(knobs: InspectKnobs): PpoConfig {
  const { whiten: _w, ...settings } = knobs;
  return { ...DEFAULT_CONFIG, ...settings };
}

/** The batch of trace `c` (the one in `before` if it was read already); none for a trace that does not read. */
function batchOf(c: CapturedTrace, before: readonly OwnModelBatch[]): OwnModelBatch[] {
  const kept = before.find((b) => b.source === c);
  if (kept) return [kept];
  let batch: RunBatch;
  let config: PpoConfig;
  try {
    batch = traceBatch(c);
    config = configOfKnobs(c.trace.knobs);
  } catch {
    // A trace whose arrays are not there: the views go without it (the store refuses such traces; this is the last guard).
    return [];
  }
  return [{ id: c.runId, model: c.model ?? '', ...(c.file !== undefined ? { file: c.file } : {}), batch, config, source: c }];
}

/**
 * The batches the views can show from the inspector's traces: the live run's newest iteration,
 * then the recorded one. `before` is the current list: an entry whose trace is unchanged is kept as
 * it was, and the list itself when nothing changed, so the views do not redraw.
 */
export function ownModelBatches(traces: readonly CapturedTrace[], before: readonly OwnModelBatch[]): readonly OwnModelBatch[] {
  const newest = (id: string) => traces.filter((c) => c.runId === id).reduce<CapturedTrace | null>((a, c) => (a && a.trace.iter > c.trace.iter ? a : c), null);
  const next = [newest(OWN_MODEL_RUN_ID), newest(OWN_MODEL_RECORDED_ID)].flatMap((c) => (c ? batchOf(c, before) : []));
  return next.length === before.length && next.every((b, i) => b === before[i]) ? before : next;
}
