// Each run's latest batch in IndexedDB (an in-memory IndexedDB here): it reads back as written,
// the write that follows a deleted run removes its record, records that are not batches are left
// out, the store's changes reach the database (only the changed runs; at once for what arrived
// while the page was reading it), and opening the version-2 database of an older page keeps its
// runs and adds the batches store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { createAppStore } from '../../src/store/appStore.ts';
import { BATCH_SAVE_DELAY_MS, followBatches, loadBatches, parseBatchRecord, saveBatches } from '../../src/store/batchPersist.ts';
import type { RunBatch } from '../../src/store/batches.ts';
import { BATCHES, DB_NAME, openDb, RUNS, STATES, withStores } from '../../src/store/db.ts';
import { installMemoryIndexedDb, type MemoryIndexedDb } from '../helpers/memoryIndexedDb.ts';

const clip = { clipLow: 0.2, clipHigh: 0.28, dualClip: null };
const batch = (iter: number, prompt: string): RunBatch => ({
  samples: {
    iter,
    rows: [
      {
        prompt,
        response: 'ab',
        reward: 0.5,
        endedWithEos: false,
        tokens: [{ text: 'a', advantage: -0.25, kl: 0.01, ratio: 1.1, value: 0.3, rolloutLogprob: -1, oldLogprob: -1.5, newLogprob: -1.25 }],
      },
    ],
  },
  ratios: { iter, ratios: [1.5, 0.5], advantages: [1, -1], seqRatios: [1.2], seqAdvantages: [0.5], clip },
});

let env: { idb: MemoryIndexedDb; uninstall: () => void };
beforeEach(() => {
  env = installMemoryIndexedDb();
});
afterEach(() => {
  env.uninstall();
});

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const storedIds = async () => (await withStores([BATCHES], 'readonly', (tx) => tx.objectStore(BATCHES).getAllKeys())).result.map(String);

describe('batch persistence: the round trip', () => {
  it('what is saved reads back equal, per run', async () => {
    const a = batch(3, 'soup');
    const b = batch(5, 'calm');
    await saveBatches({ 'run-a': a, 'run-b': b }, new Set(['run-a', 'run-b']));
    expect(await loadBatches()).toEqual({ 'run-a': a, 'run-b': b });
  });

  it('a save deletes the records of runs it is not told to keep, and writes no batch of such a run', async () => {
    await saveBatches({ 'run-a': batch(1, 'x'), 'run-b': batch(1, 'y') }, new Set(['run-a', 'run-b']));
    await saveBatches({ 'run-c': batch(2, 'z') }, new Set(['run-a']));
    expect(await storedIds()).toEqual(['run-a']);
  });

  it('records that are not a batch are left out when reading back', async () => {
    await withStores([BATCHES], 'readwrite', (tx) => {
      const st = tx.objectStore(BATCHES);
      st.put({ runId: 'ok', ...batch(1, 'p') });
      st.put({ runId: 'no-clip', samples: null, ratios: { iter: 1, ratios: [1], advantages: [1] } });
      st.put({ runId: 'lengths', samples: null, ratios: { iter: 1, ratios: [1, 2], advantages: [1], clip } });
      st.put({ runId: 'empty', samples: null, ratios: null });
    });
    expect(Object.keys(await loadBatches())).toEqual(['ok']);
    expect(parseBatchRecord(null)).toBeNull();
    expect(parseBatchRecord({ runId: 'x', samples: { iter: -1, rows: [] }, ratios: null })).toBeNull();
    expect(parseBatchRecord({ runId: 'x', samples: { iter: 2, rows: [] }, ratios: null })).toEqual({ runId: 'x', samples: { iter: 2, rows: [] }, ratios: null });
  });
});

describe('batch persistence: the database follows the store', () => {
  it('writes the changed runs after the save delay; a deleted run loses its record; a new store restores the rest', async () => {
    const store = createAppStore();
    const s = () => store.getState();
    const stop = followBatches(store, {}, (e) => {
      throw e;
    });
    const a = s().beginRun({ name: 'β = 0' }).id;
    s().setSamples(a, batch(1, 'soup').samples!);
    s().setRatios(a, batch(1, 'soup').ratios!);
    const b = s().beginRun({ name: 'β = 0.6' }).id;
    s().setSamples(b, batch(1, 'calm').samples!);
    expect(await storedIds()).toEqual([]); // not before the delay
    await wait(BATCH_SAVE_DELAY_MS + 100);
    expect((await storedIds()).sort()).toEqual([a, b].sort());

    s().deleteRun(b);
    await wait(BATCH_SAVE_DELAY_MS + 100);
    expect(await storedIds()).toEqual([a]);
    stop();

    // "after a reload": a fresh store with the saved runs gets arm 1's batch back
    const again = createAppStore();
    again.getState().restoreRuns(s().runs);
    again.getState().restoreBatches(await loadBatches());
    expect(again.getState().samples?.rows[0].prompt).toBe('soup');
    expect(again.getState().ratios?.clip).toEqual(clip);
  });

  it('only the runs whose batch changed are written again', async () => {
    const store = createAppStore();
    const s = () => store.getState();
    const a = s().beginRun().id;
    s().setSamples(a, batch(1, 'a1').samples!);
    const b = s().beginRun().id;
    s().setSamples(b, batch(1, 'b1').samples!);
    await saveBatches(s().batches, new Set([a, b]));
    const stop = followBatches(store, s().batches, (e) => {
      throw e;
    });
    // Overwrite a's record behind the store's back: a write of b alone must leave it as it is.
    await withStores([BATCHES], 'readwrite', (tx) => tx.objectStore(BATCHES).put({ runId: a, ...batch(9, 'marker') }));
    s().setSamples(b, batch(2, 'b2').samples!);
    await wait(BATCH_SAVE_DELAY_MS + 100);
    stop();
    const saved = await loadBatches();
    expect(saved[a].samples?.rows[0].prompt).toBe('marker');
    expect(saved[b].samples?.rows[0].prompt).toBe('b2');
  });
});

describe('batch persistence: when the page opens', () => {
  it('a batch that arrived while the database was read is written at once, and records of runs gone are deleted', async () => {
    await saveBatches({ 'run-gone': batch(1, 'old') }, new Set(['run-gone']));
    const saved = await loadBatches();
    const store = createAppStore();
    const a = store.getState().beginRun().id;
    store.getState().setSamples(a, batch(2, 'early').samples!);
    store.getState().restoreBatches(saved);
    const stop = followBatches(store, saved, (e) => {
      throw e;
    });
    await wait(50); // well before the save delay: this is the first write, not a throttled one
    stop();
    expect(await storedIds()).toEqual([a]);
  });
});

describe('database upgrade', () => {
  it("an older page's version-2 database keeps its runs and gains the batches store", async () => {
    await new Promise<void>((resolve) => {
      const req = env.idb.open(DB_NAME, 2);
      req.onupgradeneeded = () => {
        req.result.createObjectStore(RUNS, { keyPath: 'id' });
        req.result.createObjectStore(STATES, { keyPath: 'key' });
      };
      req.onsuccess = () => {
        const tx = req.result.transaction([RUNS], 'readwrite');
        tx.objectStore(RUNS).put({ id: 'run-old', config: DEFAULT_CONFIG });
        tx.oncomplete = () => resolve();
      };
    });
    const db = await openDb();
    expect(db.objectStoreNames.contains(BATCHES)).toBe(true);
    db.close();
    const runs = await withStores([RUNS], 'readonly', (tx) => tx.objectStore(RUNS).getAll());
    expect((runs.result as { id: string }[]).map((r) => r.id)).toEqual(['run-old']);
  });
});
