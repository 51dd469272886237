// Resume after a reload: the active run's full trainer state (the worker's `state` message, one
// safetensors file, src/rl/trainerState.ts) is kept in IndexedDB next to the run records.
//
// When: at most every STATE_SAVE_INTERVAL_MS while training (asked for when a metrics message
// arrives), and on Pause, at the end of a budget and after a NaN restore (trainerClient.ts).
// One record only (key "latest"): a few MB for the default model, so the storage used stays bounded.
//
// Consistency: the worker posts iteration k's metrics before a state taken after it, so when a
// state at k arrives the page already holds metrics 0..k−1. The run record is written first, then
// the state, in two transactions: whenever a state at k is stored, its run record holds ≥ k
// points. Resuming truncates the record to iterations < k (those after k are replayed), so the
// curves stay continuous and the record the run appends to is the same one.
import { t } from '../i18n/index.ts';
import { RUNS, STATES, withStores } from './db.ts';
import type { RunRecord } from './runs.ts';
import { useApp } from './appStore.ts';
import * as notices from './notices.ts';
import type { BackendChoice } from '../worker/protocol.ts';
import { ownsRuns } from './tabOwner.ts';

/** Ten seconds: one state is a few MB (a readback and an IndexedDB write), cheap at this rate. */
export const STATE_SAVE_INTERVAL_MS = 10_000;

const KEY = 'latest';

export interface ResumePoint {
  key?: string;
  runId: string;
  /** Iterations the state has done: training continues with iteration `iter`. */
  iter: number;
  savedAt: number;
  backend: BackendChoice;
  /** Whether the run was training (not paused) when this state was saved. */
  wasRunning: boolean;
  bytes: ArrayBuffer;
}

export type StateProblemKind = 'quota' | 'version' | 'corrupt' | 'storage';

/** Names what went wrong with a saved state, for the page's message. */
export function classifyStateProblem(e: unknown): { kind: StateProblemKind; label: string; message: string } {
  const name = e instanceof Error || (typeof DOMException !== 'undefined' && e instanceof DOMException) ? (e as Error).name : '';
  const message = e instanceof Error ? e.message : String(e);
  if (name === 'QuotaExceededError' || /quota/i.test(message))
    return { kind: 'quota', label: t('notices:stateProblem.quota'), message: `${name || 'QuotaExceededError'}: ${message}` };
  if (/format_version|version/i.test(message) && /trainer state|not supported/i.test(message)) return { kind: 'version', label: t('notices:stateProblem.version'), message };
  if (/trainer state|safetensors|header|tensor|truncated|metadata/i.test(message)) return { kind: 'corrupt', label: t('notices:stateProblem.corrupt'), message };
  return { kind: 'storage', label: t('notices:stateProblem.storage'), message: name && !message.startsWith(name) ? `${name}: ${message}` : message };
}

/** A stored record with the right fields, else a named problem. */
export function checkResumePointShape(x: unknown): ResumePoint {
  const r = x as Partial<ResumePoint> | null;
  if (!r || typeof r !== 'object') throw new Error('trainer state record: not an object');
  if (typeof r.runId !== 'string') throw new Error('trainer state record: runId missing');
  if (!Number.isInteger(r.iter) || (r.iter as number) < 0) throw new Error(`trainer state record: iteration ${String(r.iter)} is not a non-negative integer`);
  if (!(r.bytes instanceof ArrayBuffer)) throw new Error('trainer state record: the state bytes are missing');
  return r as ResumePoint;
}

/** Iterations whose metrics each run's stored record holds, as last written by this tab. */
const savedMetrics = new Map<string, number>();
/** The run and iteration of the trainer state stored last (written or read back by this tab). */
let savedState: { runId: string; iter: number } | null = null;

export function noteSavedRuns(runs: readonly RunRecord[]): void {
  for (const r of runs) savedMetrics.set(r.id, r.metrics.length);
}

/** What the database holds of a run, for a "storage is full" message (notices.storageFull). */
export function savedOf(runId: string): { metricsThrough: number | null; stateAt: number | null } {
  return { metricsThrough: savedMetrics.get(runId) ?? null, stateAt: savedState?.runId === runId ? savedState.iter : null };
}

/**
 * Writes the run record, then the state (see the header for why two transactions). A tab that
 * does not own the runs (tabOwner.ts) writes nothing.
 */
export async function saveResumePoint(run: RunRecord, point: Omit<ResumePoint, 'key'>): Promise<void> {
  if (!ownsRuns()) return;
  await withStores([RUNS], 'readwrite', (tx) => tx.objectStore(RUNS).put(run));
  noteSavedRuns([run]);
  await withStores([STATES], 'readwrite', (tx) => tx.objectStore(STATES).put({ ...point, key: KEY }));
  savedState = { runId: point.runId, iter: point.iter };
}

export async function loadResumePoint(): Promise<ResumePoint | null> {
  const req = await withStores([STATES], 'readonly', (tx) => tx.objectStore(STATES).get(KEY));
  return req.result === undefined ? null : checkResumePointShape(req.result);
}

export async function deleteResumePoint(): Promise<void> {
  if (!ownsRuns()) return;
  await withStores([STATES], 'readwrite', (tx) => tx.objectStore(STATES).delete(KEY));
}

/** After the runs are restored: offer to resume the run the saved state belongs to. */
export async function checkResumePoint(): Promise<void> {
  const s = useApp.getState();
  let point: ResumePoint | null;
  try {
    point = await loadResumePoint();
  } catch (e) {
    s.setNotice({ tone: 'warn', text: notices.stateUnreadable(classifyStateProblem(e)) });
    return;
  }
  if (!point) return;
  savedState = { runId: point.runId, iter: point.iter };
  const run = s.runs.find((r) => r.id === point.runId);
  if (!run) {
    await deleteResumePoint().catch(() => {});
    return;
  }
  s.setResume({ runId: run.id, runName: run.name, iter: point.iter, savedAt: point.savedAt, wasRunning: point.wasRunning });
}
