// Runs and their metric histories survive reloads in IndexedDB (one record per run). Saving is
// debounced: a busy trainer appends metrics every frame, the database needs them every second.
import { useApp } from './appStore.ts';
import type { RunRecord } from './runs.ts';

const DB_NAME = 'ppo-playground';
const STORE = 'runs';
const SAVE_DELAY_MS = 800;

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: 'id' });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

export async function loadRuns(): Promise<RunRecord[]> {
  const db = await openDb();
  try {
    const tx = db.transaction(STORE, 'readonly');
    const req = tx.objectStore(STORE).getAll();
    await done(tx);
    return (req.result as RunRecord[]).sort((a, b) => a.createdAt - b.createdAt);
  } finally {
    db.close();
  }
}

export async function saveRuns(runs: readonly RunRecord[]): Promise<void> {
  const db = await openDb();
  try {
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    // Replace the whole set so deleted runs disappear too.
    store.clear();
    for (const r of runs) store.put(r);
    await done(tx);
  } finally {
    db.close();
  }
}

let started = false;

/** Restores saved runs, then keeps the database in step with the store. Returns when restored. */
export async function startPersistence(): Promise<void> {
  if (started || typeof indexedDB === 'undefined') return;
  started = true;
  try {
    const saved = await loadRuns();
    const s = useApp.getState();
    // Runs begun before the database answered come after the restored ones.
    if (saved.length > 0) s.restoreRuns([...saved, ...s.runs.filter((r) => !saved.some((x) => x.id === r.id))]);
  } catch (e) {
    useApp.getState().setNotice({ tone: 'warn', text: `Saved runs could not be restored: ${String(e)}` });
  }
  let timer: ReturnType<typeof setTimeout> | null = null;
  useApp.subscribe((state, prev) => {
    if (state.runs === prev.runs) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      saveRuns(useApp.getState().runs).catch((e: unknown) => useApp.getState().setNotice({ tone: 'warn', text: `Runs could not be saved: ${String(e)}` }));
    }, SAVE_DELAY_MS);
  });
}
