// Two tabs of the page in one browser (same origin, one IndexedDB): the first owns the saved runs
// and keeps training; the second says it is read-only for runs, holds Start, and writes nothing,
// so the first tab's run and resume state stay as that tab wrote them. "Take over" moves the runs:
// the first tab pauses and the second reads the runs back from the database. A full disk: resume.spec.ts.
import { expect, test, type Page } from '@playwright/test';

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';
const READ_ONLY = 'Training is open in another tab of this page; this tab is read-only for runs until you close it or take over.';

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

interface Stored {
  runs: { id: string; iters: number }[];
  state: { runId: string; iter: number } | null;
}

function stored(page: Page): Promise<Stored> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('ppo-playground');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const tx = db.transaction(['runs', 'states'], 'readonly');
    const req = <T>(r: IDBRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
    const runs = (await req(tx.objectStore('runs').getAll())) as { id: string; metrics: unknown[] }[];
    const st = (await req(tx.objectStore('states').get('latest'))) as { runId: string; iter: number } | undefined;
    db.close();
    return { runs: runs.map((r) => ({ id: r.id, iters: r.metrics.length })), state: st ? { runId: st.runId, iter: st.iter } : null };
  });
}

test('a second tab is read-only for runs; the first keeps training and its saved state is intact', async ({ context }) => {
  test.setTimeout(240_000);
  const first = await context.newPage();
  await first.goto(`/${SMALL}`);
  await expect(first.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await first.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(first.getByTestId('run-state')).toHaveText('Training');
  await expect.poll(() => iterations(first), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  // The first tab has written its run.
  await expect.poll(async () => (await stored(first)).runs.length, { timeout: 10_000 }).toBe(1);

  const second = await context.newPage();
  await second.goto(`/${SMALL}`);
  await expect(second.getByTestId('start-blocked')).toContainText(READ_ONLY);
  await expect(second.getByRole('button', { name: 'Start', exact: true })).toBeDisabled();
  await expect(second.getByRole('button', { name: 'Step', exact: true })).toBeDisabled();
  // The keyboard's Start is held too.
  await second.locator('body').press('Space');
  await expect(second.getByTestId('run-state')).toHaveText('Idle');
  await expect(first.getByTestId('start-blocked')).toHaveCount(0);

  // The first tab trains on, and what the database holds is its run, growing.
  const before = await iterations(first);
  await expect.poll(() => iterations(first), { timeout: 60_000 }).toBeGreaterThan(before);
  await first.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(first.getByTestId('run-state')).toHaveText('Paused');
  const runId = (await stored(first)).runs[0]!.id;
  // The iteration in flight at Pause still lands (and is saved): compare with the first tab's
  // count as it stands at each poll, not as it stood at the click.
  await expect
    .poll(
      async () => {
        const s = await stored(second);
        const shown = await iterations(first);
        return { runs: s.runs.length, id: s.runs[0]?.id, state: s.state?.runId, savedAllShown: (s.runs[0]?.iters ?? 0) === shown };
      },
      { timeout: 20_000 },
    )
    .toEqual({ runs: 1, id: runId, state: runId, savedAllShown: true });

  // Take over: the second tab owns the runs (read back from the database), the first is read-only.
  await second.getByTestId('take-over').click();
  await expect(second.getByTestId('start-blocked')).toHaveCount(0);
  await expect(second.getByRole('button', { name: 'Start', exact: true })).toBeEnabled();
  await expect(second.getByTestId('run-list').getByRole('listitem')).toHaveCount(1);
  await expect(first.getByTestId('start-blocked')).toContainText(READ_ONLY);
  await expect(first.getByRole('button', { name: 'Start', exact: true })).toBeDisabled();

  // Closing the owner hands the runs back to the first tab by itself.
  await second.close();
  await expect(first.getByTestId('start-blocked')).toHaveCount(0, { timeout: 10_000 });
  await expect(first.getByRole('button', { name: 'Start', exact: true })).toBeEnabled();
  const after = await stored(first);
  expect(after.runs.map((r) => r.id)).toEqual([runId]);
  expect(after.state?.runId).toBe(runId);
});
