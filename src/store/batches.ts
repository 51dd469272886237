// The teaching views' data, kept per run: each run's latest iteration (its sample rows and the
// last minibatch's ratios, with the clip settings that batch was trained with). Only the latest
// iteration is kept per run, so the size stays bounded however long a run trains. The views show
// one run's batch at a time: the one the student picked, else the run training, else the newest.
import type { SampleRow } from '../worker/protocol.ts';
import type { RunRecord } from './runs.ts';

/** The clip settings an update ran with: the clipping view counts that batch's clipped tokens with them. */
export interface ClipSettings {
  clipLow: number;
  clipHigh: number;
  dualClip: number | null;
}

export interface BatchSamples {
  iter: number;
  rows: SampleRow[];
}

/** seqRatios / seqAdvantages: GSPO sequence ratios of the last minibatch (clipping view). */
export interface BatchRatios {
  iter: number;
  ratios: number[];
  advantages: number[];
  seqRatios?: number[];
  seqAdvantages?: number[];
  /** The ε_low / ε_high / dual clip c this batch was trained with (not the settings shown now). */
  clip: ClipSettings;
}

/** One run's latest iteration, as the teaching views read it. */
export interface RunBatch {
  samples: BatchSamples | null;
  ratios: BatchRatios | null;
}

export type RunBatches = Readonly<Record<string, RunBatch>>;

export interface BatchChoice {
  runs: readonly Pick<RunRecord, 'id'>[];
  activeRunId: string | null;
  /** The run the student picked; null follows the run training. */
  viewRunId: string | null;
  batches: RunBatches;
}

/** Whose batch the views show: the picked run, else the active run (empty until its first batch), else the newest run with one. */
export function shownRunId({ runs, activeRunId, viewRunId, batches }: BatchChoice): string | null {
  if (viewRunId && runs.some((r) => r.id === viewRunId)) return viewRunId;
  if (activeRunId) return activeRunId;
  for (let i = runs.length - 1; i >= 0; i--) if (batches[runs[i].id]) return runs[i].id;
  return null;
}

/** The runs the picker offers: those with a batch, in the run list's order. */
export function runsWithBatch<R extends Pick<RunRecord, 'id'>>(runs: readonly R[], batches: RunBatches): R[] {
  return runs.filter((r) => batches[r.id] !== undefined);
}

/** `batches` with one run's entry changed (a new object only for that run). */
export function withBatch(batches: RunBatches, runId: string, part: Partial<RunBatch>): RunBatches {
  const prev = batches[runId] ?? { samples: null, ratios: null };
  return { ...batches, [runId]: { ...prev, ...part } };
}

/** `batches` without the runs not in `keep` (deleted runs take their batch with them). */
export function keepBatches(batches: RunBatches, keep: ReadonlySet<string>): RunBatches {
  const ids = Object.keys(batches);
  if (ids.every((id) => keep.has(id))) return batches;
  return Object.fromEntries(ids.filter((id) => keep.has(id)).map((id) => [id, batches[id]]));
}

/** Entries of `now` that differ from `saved` (by identity: the store replaces a batch whole). */
export function changedBatches(saved: RunBatches, now: RunBatches): Record<string, RunBatch> {
  return Object.fromEntries(Object.entries(now).filter(([id, b]) => saved[id] !== b));
}

export function sameClip(a: ClipSettings, b: ClipSettings): boolean {
  return a.clipLow === b.clipLow && a.clipHigh === b.clipHigh && a.dualClip === b.dualClip;
}
