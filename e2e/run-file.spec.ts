// A run is a file (#34): saved with its run's ⤓, it opens on a page without WebGPU and without the
// network (a laptop that opened the page once), marked recorded, and draws the same chart lines
// and the same inspector numbers as the page it was saved on; a damaged file or another kind of
// file is refused by name, the runs untouched; a card's recorded runs open there too, and so does
// a run of a model of your own (under "Your own model").
import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { drawn } from './drawnRun.ts';
import { precached } from './serviceWorker.ts';
import { fixtureTrace } from './inspectorFixture.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { hfRunFileText } from '../src/store/hfRunFile.ts';
import { Rng } from '../src/util/rng.ts';
import { hfRecordedRun } from '../tests/helpers/hfRunFixture.ts';
import { evalMessages, metricMessages, ratioMessage, SAMPLE_MESSAGE, send } from './trainerMessages.ts';

test.use({ warmUp: false });
test.describe.configure({ timeout: 120_000 });

type Hook = { pushTrace(j: unknown): void; runIds(): string[] };

async function open(page: Page, withoutWebGpu = false) {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  if (withoutWebGpu) await page.addInitScript(() => Object.defineProperty(navigator, 'gpu', { value: undefined }));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
}

test('a saved run opens offline without WebGPU, recorded, with the same chart lines and inspector numbers', async ({ page, browser }) => {
  await open(page);
  await expect(page.locator('[data-testid="gpu-status"].ok')).toBeVisible({ timeout: 45_000 });
  await send(page, [...metricMessages(40), ...evalMessages(40, 10), ratioMessage(40), SAMPLE_MESSAGE]);
  const [runId] = await page.evaluate(() => (window.ppoPlayground as unknown as Hook).runIds());
  await page.evaluate((json) => (window.ppoPlayground as unknown as Hook).pushTrace(json), traceToJson({ ...fixtureTrace(), runId }));
  const live = await drawn(page);
  expect(live.heldOut.length).toBeGreaterThan(0);
  expect(live.table).toMatch(/\d\.\d{3}/);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Save .* as a run file$/ }).click()]);
  expect(download.suggestedFilename()).toMatch(/^ppo-run-[\w-]+\.json$/);
  const text = readFileSync((await download.path())!, 'utf8');
  await expect(page.getByTestId('notice')).toContainText(`as ${download.suggestedFilename()}`);
  await expect(page.getByTestId('notice')).toContainText('40 iterations, 1 inspected');

  // Another machine: no WebGPU, nothing stored; it opened the page once, and now the network is
  // gone. The guide offers the file first-hand.
  const context = await browser.newContext({ viewport: page.viewportSize()!, serviceWorkers: 'allow' });
  const other = await context.newPage();
  await open(other, true);
  expect((await precached(other)).active).toBe('activated');
  await context.setOffline(true);
  await other.reload();
  expect(await other.evaluate(() => navigator.onLine)).toBe(false);
  await expect(other.getByTestId('no-webgpu')).toBeVisible();
  await other.getByTestId('no-webgpu-open-run-input').setInputFiles({ name: 'class-run.json', mimeType: 'application/json', buffer: Buffer.from(text) });
  const chip = other.getByTestId('run-list').getByRole('listitem');
  await expect(chip).toHaveCount(1);
  await expect(chip.getByTestId('recorded-badge')).toHaveText('recorded');
  await expect(other.getByTestId('notice')).toContainText('Opened');
  const recorded = await drawn(other);
  expect(recorded).toEqual(live);
  await other.getByTestId('run-list').screenshot({ path: test.info().outputPath('recorded-run-1366.png') });
  await other.setViewportSize({ width: 390, height: 844 });
  await other.getByTestId('run-list').screenshot({ path: test.info().outputPath('recorded-run-390.png') });
  // Charts follow a resize a few frames late (ResizeObserver): asked until the layout settles.
  await expect.poll(() => other.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await other.setViewportSize(page.viewportSize()!);

  // A damaged file and a metrics export are refused by name; the recorded run stays as it was.
  const input = other.getByTestId('open-run-input');
  const damaged = text.replace('"reward_mean":', '"reward_mean":"high","x":');
  await input.setInputFiles({ name: 'damaged.json', mimeType: 'application/json', buffer: Buffer.from(damaged) });
  await expect(other.getByTestId('notice')).toContainText('“damaged.json” not opened: it is damaged at run.metrics[0].values.reward_mean');
  await input.setInputFiles({ name: 'metrics.json', mimeType: 'application/json', buffer: Buffer.from('{"runs": []}') });
  await expect(other.getByTestId('notice')).toContainText('“metrics.json” not opened: it is not a run file');
  const v9 = text.replace('"version":1', '"version":9');
  await input.setInputFiles({ name: 'future.json', mimeType: 'application/json', buffer: Buffer.from(v9) });
  await expect(other.getByTestId('notice')).toContainText('written in run-file version 9; this page reads version 1');
  await expect(chip).toHaveCount(1);
  expect((await drawn(other)).reward).toEqual(live.reward);

  // A reload keeps the recorded run with its file: the guide offers it first, and its chart lines
  // and inspected iteration come back as they were (the inspector's traces live in memory).
  await expect.poll(() => keptCounts(other)).toEqual({ runs: 1, recorded: 1 });
  await other.reload();
  await other.getByTestId('no-webgpu-show-kept').click();
  await expect(chip.getByTestId('recorded-badge')).toHaveText('recorded');
  expect(await drawn(other)).toEqual(live);

  // A card's recorded runs come from the precache, offline.
  const card = other.getByTestId('preset-card-tight-vs-loose-clipping');
  await card.getByRole('button', { name: 'Tight vs loose clipping', exact: true }).click();
  await card.getByTestId('preset-show-result').click();
  await expect(chip.getByTestId('recorded-badge')).toHaveCount(2);
  await expect(other.getByTestId('notice')).toContainText('The recorded runs of “Tight vs loose clipping” are on the charts');
  await context.close();
});

/** Records in the page's database: saved runs, and the files kept with recorded runs. */
function keptCounts(page: Page): Promise<{ runs: number; recorded: number }> {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('ppo-playground');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction(['runs', 'recorded'], 'readonly');
          const runs = tx.objectStore('runs').count();
          const recorded = tx.objectStore('recorded').count();
          tx.oncomplete = () => {
            open.result.close();
            resolve({ runs: runs.result, recorded: recorded.result });
          };
        };
      }),
  );
}

test('the no-WebGPU guide says why a file is refused, and stays', async ({ page }) => {
  await open(page, true);
  await page.getByTestId('no-webgpu-open-run-input').setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('not json') });
  await expect(page.getByTestId('no-webgpu-open-run-error')).toContainText('“notes.json” not opened: it is not JSON');
  await expect(page.getByTestId('no-webgpu')).toBeVisible();
});

test('without WebGPU the guide opens a run of a model of your own under “Your own model”, as recorded', async ({ page }) => {
  await open(page, true);
  const run = hfRecordedRun(new Rng(11), 3);
  await page.getByTestId('no-webgpu-open-run-input').setInputFiles({ name: 'tiny-run-3.json', mimeType: 'application/json', buffer: Buffer.from(hfRunFileText(run)) });
  const recorded = page.getByTestId('hf-recorded');
  await expect(recorded).toContainText('Recorded run: tiny-run-3.json', { timeout: 30_000 });
  await expect(recorded).toBeInViewport();
  await expect(page.getByTestId('notice')).toContainText('Opened tiny-run-3.json under “1 · SFT” → “Your own model”');
  await expect(recorded.getByTestId('hf-train-table').locator('tbody tr')).toHaveCount(3);
  await expect(recorded.getByTestId('hf-train-tokens').getByRole('listitem')).toHaveCount(run.rows[2].responses[0].tokens.length);
});
