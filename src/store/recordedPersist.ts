// The file each recorded run was opened from survives a reload in IndexedDB (`recorded`, one
// record per run: its text), so what the file brings besides the run's record — the inspected
// iterations, the trainer state "Continue training" loads, a teacher's question sets — comes back
// with the run: the page reads the text again as it read the file (runFiles.ts). A deleted run
// takes its file with it. Only the tab that owns the runs writes (tabOwner.ts).
import type { StoreApi } from 'zustand';
import type { AppState } from './appStore.ts';
import { RECORDED, withStores } from './db.ts';
import { ownsRuns } from './tabOwner.ts';

export interface RecordedFileRecord {
  runId: string;
  text: string;
}

/** Keeps the text of the file run `runId` was opened from. */
export async function keepRecordedFile(runId: string, text: string): Promise<void> {
  if (typeof indexedDB === 'undefined' || !ownsRuns()) return;
  await withStores([RECORDED], 'readwrite', (tx) => tx.objectStore(RECORDED).put({ runId, text } satisfies RecordedFileRecord));
}

/** The kept files; a record that is not one is left out. */
export async function loadRecordedFiles(): Promise<RecordedFileRecord[]> {
  if (typeof indexedDB === 'undefined') return [];
  const req = await withStores([RECORDED], 'readonly', (tx) => tx.objectStore(RECORDED).getAll());
  return (req.result as Partial<RecordedFileRecord>[]).filter((r): r is RecordedFileRecord => typeof r?.runId === 'string' && typeof r.text === 'string');
}

/** Forgets the files of `runIds`. */
export async function dropRecordedFiles(runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0 || typeof indexedDB === 'undefined' || !ownsRuns()) return;
  await withStores([RECORDED], 'readwrite', (tx) => {
    for (const id of runIds) tx.objectStore(RECORDED).delete(id);
  });
}

/** From now on a run deleted from the store has its file forgotten; returns the unsubscribe. */
export function followRecordedRuns(store: StoreApi<AppState>, onError: (e: unknown) => void): () => void {
  return store.subscribe((state, prev) => {
    if (state.runs === prev.runs) return;
    const kept = new Set(state.runs.map((r) => r.id));
    const gone = prev.runs.filter((r) => r.recorded && !kept.has(r.id)).map((r) => r.id);
    if (gone.length > 0) dropRecordedFiles(gone).catch(onError);
  });
}
