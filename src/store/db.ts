// The page's IndexedDB database: `runs` (one record per run: config + metric history, persist.ts),
// `states` (the active run's full trainer state for resume after a reload, resume.ts), `batches`
// (each run's latest iteration for the teaching views, batchPersist.ts), `sft` (the SFT model
// trained or loaded in the tab, one per task, sftModels.ts) and `recorded` (the file each recorded
// run was opened from, recordedPersist.ts).
// Version 2 added `states`, version 3 `batches` and `sft`, version 4 `recorded`; an upgrade keeps
// every saved run and state.
import { t } from '../i18n/index.ts';

export const DB_NAME = 'ppo-playground';
export const DB_VERSION = 4;
export const RUNS = 'runs';
export const STATES = 'states';
export const BATCHES = 'batches';
export const SFT = 'sft';
export const RECORDED = 'recorded';

export function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains(RUNS)) db.createObjectStore(RUNS, { keyPath: 'id' });
      if (!db.objectStoreNames.contains(STATES)) db.createObjectStore(STATES, { keyPath: 'key' });
      if (!db.objectStoreNames.contains(BATCHES)) db.createObjectStore(BATCHES, { keyPath: 'runId' });
      if (!db.objectStoreNames.contains(SFT)) db.createObjectStore(SFT, { keyPath: 'task' });
      if (!db.objectStoreNames.contains(RECORDED)) db.createObjectStore(RECORDED, { keyPath: 'runId' });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
    // Another tab holds an older version open: say so rather than wait forever.
    req.onblocked = () => reject(new Error(t('notices:reason.databaseBlocked')));
  });
}

export function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error(t('notices:reason.transactionAborted')));
  });
}

/** Runs `body` in one transaction over `stores` and resolves when it has committed. */
export async function withStores<T>(stores: string[], mode: IDBTransactionMode, body: (tx: IDBTransaction) => T): Promise<T> {
  const db = await openDb();
  try {
    const tx = db.transaction(stores, mode);
    const out = body(tx);
    await done(tx);
    return out;
  } finally {
    db.close();
  }
}
