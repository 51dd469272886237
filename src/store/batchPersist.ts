// Each run's latest batch (batches.ts) survives a reload in IndexedDB: one record per run in
// `batches`, keyed by its id. Saved like the runs, throttled (a busy trainer sends a batch every
// iteration), and only the batches that changed since the last write; the same write deletes the
// records of runs the page no longer holds, so a deleted run takes its batch with it.
import type { StoreApi } from 'zustand';
import type { AppState } from './appStore.ts';
import { changedBatches, type BatchRatios, type BatchSamples, type RunBatch, type RunBatches } from './batches.ts';
import { BATCHES, withStores } from './db.ts';
import { ownsRuns } from './tabOwner.ts';

export const BATCH_SAVE_DELAY_MS = 800;

export interface BatchRecord extends RunBatch {
  runId: string;
}

const isNumbers = (x: unknown): x is number[] => Array.isArray(x) && x.every((v) => typeof v === 'number');
const isIter = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

function checkSamples(x: unknown): BatchSamples | null {
  const s = x as Partial<BatchSamples> | null;
  return s && isIter(s.iter) && Array.isArray(s.rows) ? (s as BatchSamples) : null;
}

function checkRatios(x: unknown): BatchRatios | null {
  const r = x as Partial<BatchRatios> | null;
  const c = r?.clip;
  const clipOk = !!c && typeof c.clipLow === 'number' && typeof c.clipHigh === 'number' && (c.dualClip === null || typeof c.dualClip === 'number');
  return r && isIter(r.iter) && isNumbers(r.ratios) && isNumbers(r.advantages) && r.ratios.length === r.advantages.length && clipOk ? (r as BatchRatios) : null;
}

/** A stored record read back as a run's batch; null for one that is not (it is left out). */
export function parseBatchRecord(x: unknown): BatchRecord | null {
  const r = x as Partial<BatchRecord> | null;
  if (!r || typeof r !== 'object' || typeof r.runId !== 'string') return null;
  const samples = r.samples == null ? null : checkSamples(r.samples);
  const ratios = r.ratios == null ? null : checkRatios(r.ratios);
  return samples || ratios ? { runId: r.runId, samples, ratios } : null;
}

export async function loadBatches(): Promise<Record<string, RunBatch>> {
  const req = await withStores([BATCHES], 'readonly', (tx) => tx.objectStore(BATCHES).getAll());
  const out: Record<string, RunBatch> = {};
  for (const x of req.result as unknown[]) {
    const rec = parseBatchRecord(x);
    if (rec) out[rec.runId] = { samples: rec.samples, ratios: rec.ratios };
  }
  return out;
}

/** Writes the batches in `changed` and deletes every record whose run is not in `keep`, in one transaction. */
export async function saveBatches(changed: Readonly<Record<string, RunBatch>>, keep: ReadonlySet<string>): Promise<void> {
  await withStores([BATCHES], 'readwrite', (tx) => {
    const store = tx.objectStore(BATCHES);
    for (const [runId, b] of Object.entries(changed)) if (keep.has(runId)) store.put({ runId, samples: b.samples, ratios: b.ratios } satisfies BatchRecord);
    const keys = store.getAllKeys();
    keys.onsuccess = () => {
      for (const k of keys.result) if (!keep.has(String(k))) store.delete(k);
    };
  });
}

/**
 * From now on the database follows the store's batches. `saved`: what the database holds (as read
 * back). The first write comes at once: batches that arrived while it was being read, and records
 * of runs the store no longer holds, are settled without waiting for the next change. A failed
 * write is retried with the next change.
 */
export function followBatches(store: StoreApi<AppState>, saved: RunBatches, onError: (e: unknown) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const write = () => {
    timer = null;
    if (!ownsRuns()) return; // another tab owns the runs (tabOwner.ts); retried with the next change
    const now = store.getState().batches;
    saveBatches(changedBatches(saved, now), new Set(Object.keys(now))).then(() => {
      saved = now;
    }, onError);
  };
  const stop = store.subscribe((state, prev) => {
    if (state.batches !== prev.batches && !timer) timer = setTimeout(write, BATCH_SAVE_DELAY_MS);
  });
  write();
  return () => {
    stop();
    if (timer) clearTimeout(timer);
  };
}
