// The real trainer in the browser: Start on the default task with a small config (from the URL)
// trains in the Web Worker on SwiftShader WebGPU; the five core charts get points and keep
// updating; Pause stops updates; Step advances exactly one iteration.
import { expect, test, type Page } from '@playwright/test';

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';
const CHARTS = ['policy_loss', 'value_loss', 'reward_mean', 'clipfrac', 'kl'] as const;

/** Iterations recorded in the active run (the run list shows "N it"). */
async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

/** Vertices of a chart's first line (0 when it has none yet). */
async function vertices(page: Page, metric: string): Promise<number> {
  const line = page.getByTestId(`chart-${metric}`).locator('path.recharts-line-curve').first();
  if ((await line.count()) === 0) return 0;
  return ((await line.getAttribute('d')) ?? '').match(/[LMC]/g)?.length ?? 0;
}

test('Start trains the default task, Pause stops updates, Step adds exactly one iteration', async ({ page }) => {
  test.setTimeout(150_000);
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });

  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  await expect.poll(() => iterations(page), { timeout: 45_000, message: 'iterations while training' }).toBeGreaterThanOrEqual(2);
  for (const m of CHARTS) await expect.poll(() => vertices(page, m), { message: `${m} chart points` }).toBeGreaterThanOrEqual(2);
  // ...and it keeps going.
  const seen = await iterations(page);
  const policyPoints = await vertices(page, 'policy_loss');
  const t0 = Date.now();
  await expect.poll(() => iterations(page), { timeout: 20_000 }).toBeGreaterThan(seen);
  // At most one iteration's time (plus polling) passed: the in-flight iteration after Pause
  // lands within about that long, however loaded the machine is.
  const iterationMs = Date.now() - t0;
  await expect.poll(() => vertices(page, 'policy_loss'), { timeout: 5_000 }).toBeGreaterThan(policyPoints);

  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  // The iteration in flight may still land; after that nothing more arrives. The quiet window
  // is longer than an iteration, so a slow in-flight iteration cannot pass for a stop.
  const quietMs = Math.min(15_000, Math.max(1_500, 2 * iterationMs));
  let settled = await iterations(page);
  await expect
    .poll(
      async () => {
        const before = settled;
        await page.waitForTimeout(quietMs);
        settled = await iterations(page);
        return settled === before;
      },
      { timeout: 20_000 + 3 * quietMs, message: 'updates stop after Pause' },
    )
    .toBe(true);

  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await expect.poll(() => iterations(page), { timeout: 20_000 }).toBe(settled + 1);
  await page.waitForTimeout(2_000);
  expect(await iterations(page)).toBe(settled + 1);
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});
