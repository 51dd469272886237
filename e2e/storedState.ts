// What the page keeps in IndexedDB while a run trains (its run records and the trainer state saved
// for resuming), read in the page as the page itself would read it after a reload, and a small
// config that trains until a state is saved: shared by the resume and run-file specs.
import { expect, type Page } from '@playwright/test';

export const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

export interface Stored {
  runs: { id: string; iters: number[] }[];
  state: { runId: string; iter: number; bytes: number } | null;
}

/** What IndexedDB holds now (read in the page, as the page would read it after a reload). */
export function stored(page: Page): Promise<Stored> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('ppo-playground');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const names = Array.from(db.objectStoreNames);
    if (!names.includes('runs') || !names.includes('states')) {
      db.close();
      return { runs: [], state: null };
    }
    const tx = db.transaction(['runs', 'states'], 'readonly');
    const req = <T>(r: IDBRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
    const runs = (await req(tx.objectStore('runs').getAll())) as { id: string; metrics: { iter: number }[] }[];
    const st = (await req(tx.objectStore('states').get('latest'))) as { runId: string; iter: number; bytes: ArrayBuffer } | undefined;
    db.close();
    return { runs: runs.map((r) => ({ id: r.id, iters: r.metrics.map((m) => m.iter) })), state: st ? { runId: st.runId, iter: st.iter, bytes: st.bytes.byteLength } : null };
  });
}

export const contiguous = (xs: number[]) => xs.every((x, i) => x === i);

export async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

export async function trainUntilStateAt(page: Page, atLeast: number): Promise<Stored> {
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  // the first state is saved at the first iteration, the next 10 s later
  await expect.poll(async () => (await stored(page)).state?.iter ?? 0, { timeout: 90_000, message: 'a saved trainer state' }).toBeGreaterThanOrEqual(atLeast);
  return stored(page);
}

/**
 * Waits until the stored trainer state is the one Pause saved: the state after the run's last
 * iteration as the page counts it (final once Paused), with the stored record written up to it.
 * Just after Pause an earlier automatic save can still be the stored one, with a record written up
 * to that save as well, and the pause's own lands a moment later (over anything written between).
 */
export async function pausedStateSaved(page: Page): Promise<Stored> {
  await expect
    .poll(
      async () => {
        const st = await stored(page);
        const shown = await iterations(page);
        return st.state !== null && st.runs.length === 1 && st.state.iter === shown && st.runs[0].iters.length === shown ? st.state.iter : -1;
      },
      { timeout: 60_000, message: 'the state saved at Pause, at the record’s last iteration' },
    )
    .toBeGreaterThanOrEqual(1);
  return stored(page);
}
