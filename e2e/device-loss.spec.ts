// Faults in the real page (Chromium, SwiftShader WebGPU), driven by the test hooks (on only with
// localStorage 'ppo-test-hooks' = '1', never from a link):
//  - device.destroy() during an update: the page says the device was lost and replaced and how many
//    iterations are replayed, training goes on, and the stored run stays one contiguous series;
//  - no device comes back: the page offers the CPU backend and continues the same run from its
//    saved state, and the run record says CPU from that iteration on;
//  - an absurd learning rate: the NaN is named with its iteration and stage, training pauses, the
//    learning rate is suggested, and nothing charted is lost.
import { expect, test, type Page } from '@playwright/test';

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

/** The stored run records' metric iterations and the saved state's iteration. */
function stored(
  page: Page,
): Promise<{ runs: { iters: number[]; finite: boolean; backend: string; backends?: { fromIter: number; backend: string }[] }[]; stateIter: number | null }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('ppo-playground');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    if (!Array.from(db.objectStoreNames).includes('states')) {
      db.close();
      return { runs: [], stateIter: null };
    }
    const tx = db.transaction(['runs', 'states'], 'readonly');
    const req = <T>(r: IDBRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
    const runs = (await req(tx.objectStore('runs').getAll())) as {
      metrics: { iter: number; values: Record<string, number> }[];
      backend: string;
      backends?: { fromIter: number; backend: string }[];
    }[];
    const st = (await req(tx.objectStore('states').get('latest'))) as { iter: number } | undefined;
    db.close();
    return {
      runs: runs.map((r) => ({
        iters: r.metrics.map((m) => m.iter),
        finite: r.metrics.every((m) => Object.values(m.values).every(Number.isFinite)),
        backend: r.backend,
        backends: r.backends,
      })),
      stateIter: st?.iter ?? null,
    };
  });
}

const contiguous = (xs: number[]) => xs.every((x, i) => x === i);

async function startWithHooks(page: Page, query = SMALL): Promise<void> {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.goto(`/${query}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Training');
}

/** Waits until the trainer is in its update stage after at least `n` iterations, then runs `act`. */
async function duringUpdate(page: Page, n: number): Promise<void> {
  await expect.poll(() => iterations(page), { timeout: 90_000 }).toBeGreaterThanOrEqual(n);
  await expect(page.getByTestId('stage-update')).toHaveAttribute('aria-current', 'step', { timeout: 30_000 });
}

test('device.destroy() during an update: lost, replaced, iterations replayed, training goes on in the same run', async ({ page }) => {
  test.setTimeout(240_000);
  await startWithHooks(page);
  await expect.poll(async () => (await stored(page)).stateIter ?? 0, { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
  await duringUpdate(page, 3);
  await page.evaluate(() => window.ppoPlayground!.debug!.destroyDevice());
  const notice = page.getByTestId('notice');
  await expect(notice).toContainText(
    /The GPU device was lost and replaced .*; the trainer was rebuilt from its last saved state\. \d+ iterations? (is|are) replayed \(lost at \d+, restarted from the state saved at \d+\)\./,
    { timeout: 60_000 },
  );
  const text = (await notice.textContent())!;
  const [, replayed, lostAt, from] = /(\d+) iterations? (?:is|are) replayed \(lost at (\d+), restarted from the state saved at (\d+)\)/.exec(text)!.map(Number);
  expect(replayed).toBe(lostAt - from);
  expect(lostAt).toBeGreaterThanOrEqual(3);
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  // training goes on past the loss, and the stored record is one contiguous series
  await expect.poll(() => iterations(page), { timeout: 90_000 }).toBeGreaterThan(lostAt + 1);
  await expect
    .poll(
      async () => {
        const s = await stored(page);
        return s.runs.length === 1 && contiguous(s.runs[0].iters) ? s.runs[0].iters.length : -1;
      },
      { timeout: 30_000 },
    )
    .toBeGreaterThan(lostAt + 1);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});

test('no device comes back: the page offers the CPU backend and the run continues there from its saved state', async ({ page }) => {
  test.setTimeout(240_000);
  await startWithHooks(page);
  await expect.poll(async () => (await stored(page)).stateIter ?? 0, { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
  await duringUpdate(page, 2);
  await page.evaluate(() => window.ppoPlayground!.debug!.destroyDevice(true));
  const offer = page.getByTestId('cpu-offer');
  await expect(offer).toBeVisible({ timeout: 60_000 });
  await expect(page.locator('[data-testid="notice"].error')).toContainText('no new one came back');
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  const k = (await stored(page)).stateIter!;
  await offer.getByRole('button', { name: `Continue on the CPU backend from iteration ${k}` }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Training', { timeout: 30_000 });
  await expect(page.getByText('CPU reference', { exact: false }).first()).toBeVisible();
  await expect.poll(() => iterations(page), { timeout: 120_000 }).toBeGreaterThan(k);
  await expect
    .poll(
      async () => {
        const s = await stored(page);
        // Iterations past k may still be the WebGPU ones from before the loss until the record
        // saved after the switch arrives: wait for that save, then for CPU iterations past k.
        return s.runs.length === 1 && s.runs[0].backend === 'cpu' && contiguous(s.runs[0].iters) ? s.runs[0].iters.length : -1;
      },
      { timeout: 60_000 },
    )
    .toBeGreaterThan(k);
  // The run record says CPU from iteration k on (it started on WebGPU), in the store and the run list.
  const rec = (await stored(page)).runs[0];
  expect(rec.backend).toBe('cpu');
  expect(rec.backends).toEqual([
    { fromIter: 0, backend: 'webgpu' },
    { fromIter: k, backend: 'cpu' },
  ]);
  await expect(page.getByTestId('run-list').getByRole('listitem').first()).toContainText(`CPU from ${k}`);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
});

test('an absurd learning rate: the NaN is named by iteration and stage, training pauses, the learning rate is suggested, nothing charted is lost', async ({ page }) => {
  test.setTimeout(180_000);
  await startWithHooks(page);
  await expect.poll(() => iterations(page), { timeout: 90_000 }).toBeGreaterThanOrEqual(2);
  // Past validateConfig's range (actorLr ≤ 1): only the test hook can set it.
  await page.evaluate(() => window.ppoPlayground!.debug!.setActorLr(1e30));
  const notice = page.getByTestId('notice');
  await expect(notice).toContainText(/Paused: iteration (\d+) produced a non-finite \w+ \((NaN|-?Infinity)\) in the (rollout|experience|update) stage\./, { timeout: 90_000 });
  await expect(notice).toContainText('The state from before it was restored and nothing charted is lost.');
  await expect(notice).toContainText('Suggested fix: most likely the actor learning rate: actorLr = 1e+30');
  await expect(notice).toContainText('try actorLr = 0.0001');
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  const failed = Number(/iteration (\d+) produced/.exec((await notice.textContent())!)![1]);
  // every iteration before the failed one is charted and stored, and nothing after it
  await expect.poll(() => iterations(page), { timeout: 10_000 }).toBe(failed);
  await page.waitForTimeout(2_000);
  expect(await iterations(page)).toBe(failed);
  await expect
    .poll(
      async () => {
        const s = await stored(page);
        return s.runs.length === 1 && s.runs[0].finite && contiguous(s.runs[0].iters) ? s.runs[0].iters.length : -1;
      },
      { timeout: 30_000 },
    )
    .toBe(failed);
  const line = page.getByTestId('chart-reward_mean').locator('path.recharts-line-curve').first();
  await expect(line).toHaveAttribute('d', /L/);
});
