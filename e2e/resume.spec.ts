// Resume after a reload, in the real page: the full trainer state is saved to IndexedDB while a run
// trains (every 10 s and on Pause); after a reload the page offers "Resume from iteration k", and
// resuming goes on from k in the SAME run record: its stored metrics stay one contiguous series
// 0, 1, 2, … and keep growing past what they held before the reload. A state that cannot be loaded
// (another format version) and a storage quota error are reported by name; the run's charts stay.
import { expect, test } from '@playwright/test';
import { contiguous, iterations, pausedStateSaved, SMALL, stored, trainUntilStateAt } from './storedState.ts';

test('reload mid-run, "Resume from iteration k": the counter goes on from k and the same stored run record keeps growing', async ({ page }) => {
  test.setTimeout(240_000);
  const before = await trainUntilStateAt(page, 2);
  expect(before.runs).toHaveLength(1);
  const runId = before.runs[0].id;
  expect(before.state!.runId).toBe(runId);
  expect(before.state!.bytes).toBeGreaterThan(100_000);

  await page.reload();
  const offer = page.getByTestId('resume-offer');
  await expect(offer).toBeVisible({ timeout: 30_000 });
  const button = offer.getByRole('button', { name: /^Resume from iteration \d+$/ });
  const k = Number(/(\d+)$/.exec((await button.textContent()) ?? '')![1]);
  const atReload = await stored(page);
  expect(atReload.state).toMatchObject({ runId, iter: k });
  // the record never lags the state: it holds every iteration before k (usually a few more)
  const record = atReload.runs.find((r) => r.id === runId)!;
  expect(contiguous(record.iters)).toBe(true);
  expect(record.iters.length).toBeGreaterThanOrEqual(k);
  const preCount = record.iters.length;
  await expect(page.getByTestId('run-state')).toHaveText('Idle');

  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await button.click();
  await expect(page.getByTestId('run-state')).toHaveText('Training', { timeout: 30_000 });
  await expect(offer).toHaveCount(0);
  await expect(page.getByTestId('notice')).toContainText(`Resumed`);
  // the run list shows one run whose count went back to k and then climbs past what was stored
  await expect.poll(() => iterations(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(k);
  await expect
    .poll(
      async () => {
        const now = await stored(page);
        const r = now.runs.find((x) => x.id === runId);
        return now.runs.length === 1 && r !== undefined && contiguous(r.iters) ? r.iters.length : -1;
      },
      { timeout: 120_000, message: 'the same stored run record, contiguous, growing past its pre-reload length' },
    )
    .toBeGreaterThan(Math.max(preCount, k + 1));
  // and the state saved after the resume belongs to the same run
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect.poll(async () => (await stored(page)).state?.iter ?? 0, { timeout: 60_000 }).toBeGreaterThan(k);
  const after = await stored(page);
  expect(after.state!.runId).toBe(runId);
  expect(after.runs.map((r) => r.id)).toEqual([runId]);
  expect(contiguous(after.runs[0].iters)).toBe(true);
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});

test('a saved state from another format version is refused by name; the run and its charts are kept', async ({ page }) => {
  test.setTimeout(180_000);
  await trainUntilStateAt(page, 1);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  await pausedStateSaved(page);
  // Rewrite the stored file's header: format_version "1" → "9" (same length, so offsets stay valid).
  await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('ppo-playground');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const tx = db.transaction('states', 'readwrite');
    const store = tx.objectStore('states');
    const get = store.get('latest');
    await new Promise((r) => (get.onsuccess = r));
    const rec = get.result as { bytes: ArrayBuffer };
    const u8 = new Uint8Array(rec.bytes);
    const n = Number(new DataView(rec.bytes).getBigUint64(0, true));
    const header = new TextDecoder().decode(u8.subarray(8, 8 + n)).replace('"format_version":"1"', '"format_version":"9"');
    u8.set(new TextEncoder().encode(header), 8);
    store.put(rec);
    await new Promise((r) => (tx.oncomplete = r));
    db.close();
  });
  const itBefore = await iterations(page);
  expect(itBefore).toBeGreaterThanOrEqual(1);
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page
    .getByTestId('resume-offer')
    .getByRole('button', { name: /^Resume from iteration/ })
    .click();
  const notice = page.locator('[data-testid="notice"].error');
  await expect(notice).toContainText('saved by another version of the page', { timeout: 30_000 });
  await expect(notice).toContainText('format_version 9 is not supported');
  await expect(notice).toContainText('charts are kept');
  await expect(page.getByTestId('run-state')).not.toHaveText('Training');
  // The run list draws the kept run once the stored runs are read back after the reload.
  await expect.poll(() => iterations(page), { timeout: 20_000 }).toBe(itBefore);
  const line = page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve').first();
  await expect(line).toHaveAttribute('d', /L/);
});

test('a storage quota error while saving the state names what is saved and what is not; training and the run record go on', async ({ page }) => {
  test.setTimeout(150_000);
  await page.addInitScript(() => {
    const put = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
      if (this.name === 'states') throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.apply(this, args);
    };
  });
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  // The run record was written before the state (resume.ts), so its metrics up to then are saved.
  await expect(page.getByTestId('notice')).toContainText(
    /^Storage is full: the run's metrics up to iteration \d+ are saved; its trainer state for resume is not\. Free space or delete old runs/,
    { timeout: 60_000 },
  );
  await expect(page.getByTestId('notice')).toContainText('the charts in this tab are kept');
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  const n = await iterations(page);
  await expect.poll(() => iterations(page), { timeout: 60_000 }).toBeGreaterThan(n);
  await expect.poll(async () => (await stored(page)).runs[0]?.iters.length ?? 0, { timeout: 30_000 }).toBeGreaterThan(n);
  expect((await stored(page)).state).toBeNull();
});
