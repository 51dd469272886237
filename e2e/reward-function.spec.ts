// A reward function you write, in the built page: a broken one is named inline with the sample
// that broke it and Start waits with the reason, while the run in progress keeps its iterations;
// one that fails only in training pauses the run with its sample and applies nothing; the fixed
// one trains on in the same run. A function that arrives in a link runs only once accepted.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';

const SMALL = 'promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1&evalEvery=0';
const FN = `${SMALL}&task=sentiment&rewardSource=function`;

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

async function setFunction(page: Page, source: string): Promise<void> {
  const box = page.getByTestId('reward-function').getByRole('textbox', { name: 'Reward function', exact: true });
  await box.fill(source);
}

test('a broken reward function is named inline with its sample; the run stays intact and trains on once fixed', async ({ page }) => {
  test.setTimeout(180_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/?${FN}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await expect(page.getByTestId('reward-function-ok')).toContainText('Checked on a sample: score', { timeout: 30_000 });
  await expect(page.getByTestId('reward-function-size')).toContainText('/ 8192 bytes');

  const start = page.getByRole('button', { name: 'Start', exact: true });
  await start.click();
  await expect.poll(() => iterations(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');

  // Refused on its check: the problem, the sample, and Start waits with the reason.
  await setFunction(page, '(prompt, response) => response.length > 100 ? 1 : "many"');
  const problem = page.getByTestId('reward-function-problem');
  await expect(problem).toContainText('Checked on a sample and refused: the call returned "many"; allowed: a finite number');
  await expect(problem).toContainText('prompt');
  await expect(problem).toContainText('response');
  await expect(start).toBeDisabled();
  await expect(page.getByTestId('start-blocked')).toContainText('The reward function was refused on a sample');
  await setFunction(page, '(prompt, response) => fetch("/")');
  await expect(problem).toContainText("ReferenceError: 'fetch' is not defined");

  // Passes its one-sample check, fails on the second call of a batch: the run pauses with that sample.
  await setFunction(page, '(() => { let calls = 0; return (prompt, response) => { calls += 1; if (calls > 1) throw new Error("second call"); return 0 } })()');
  await expect(page.getByTestId('reward-function-ok')).toBeVisible();
  await start.click();
  const failure = page.getByTestId('reward-function-failure');
  await expect(failure).toContainText(/Refused in iteration \d+: the call threw Error: second call/, { timeout: 60_000 });
  await expect(failure.locator('dd').first()).toContainText('the ');
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  await expect(page.getByTestId('notice')).toContainText('That iteration was not applied (no weights changed)');
  // The refused iteration is the one after the last charted; nothing of it is charted, later or now.
  const refused = Number(/Refused in iteration (\d+)/.exec((await failure.textContent()) ?? '')?.[1]);
  const done = await iterations(page);
  expect(refused).toBe(done + 1);
  await page.waitForTimeout(1000);
  expect(await iterations(page)).toBe(done);
  await expect(page.getByTestId('run-list').getByRole('listitem')).toHaveCount(1);

  // Fixed: the same run trains on.
  await setFunction(page, '(prompt, response) => response.split("o").length');
  await expect(failure).toHaveCount(0);
  await expect(start).toBeEnabled();
  await start.click();
  await expect.poll(() => iterations(page), { timeout: 60_000 }).toBeGreaterThan(done);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-list').getByRole('listitem')).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('a reward function that arrives in a link is shown and runs only after the visitor accepts it', async ({ page }) => {
  const foreign = '(prompt, response) => response.length / 10';
  await page.goto(`/?${FN}&rewardFunction=${encodeURIComponent(foreign)}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  const review = page.getByTestId('reward-function-review');
  await expect(review).toContainText('Run this reward function?');
  await expect(review.getByRole('textbox')).toHaveValue(foreign);
  await expect(review.getByRole('textbox')).toHaveAttribute('readonly', '');
  const start = page.getByRole('button', { name: 'Start', exact: true });
  await expect(start).toBeDisabled();
  await expect(page.getByTestId('start-blocked')).toContainText('A reward function came with the link');
  // Not yet in force: the editor still holds the page's own function, and the link keeps the foreign one.
  await expect(page.getByTestId('reward-function').getByRole('textbox', { name: 'Reward function', exact: true })).not.toHaveValue(foreign);
  expect(decodeURIComponent(page.url())).toContain(foreign.replaceAll(' ', '+'));

  await review.getByRole('button', { name: 'Run this reward function' }).click();
  await expect(review).toHaveCount(0);
  await expect(page.getByTestId('reward-function').getByRole('textbox', { name: 'Reward function', exact: true })).toHaveValue(foreign);
  await expect(page.getByTestId('reward-function-ok')).toBeVisible({ timeout: 30_000 });
  await expect(start).toBeEnabled();
  await expect(page.getByTestId('start-blocked')).toHaveCount(0);
});

// It never trains: its page skips the trainer warm-up (fixtures.ts).
test.describe(() => {
  test.use({ warmUp: false });
  test('Reward source = model on a task without a learned reward model is refused where it is set', async ({ page }) => {
    await page.goto(`/?${SMALL}&task=sentiment&rewardSource=model`);
    await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
    await page.getByRole('combobox', { name: 'Task' }).selectOption('arithmetic');
    const field = page.locator('.field', { has: page.getByRole('combobox', { name: 'Task' }) });
    await expect(field.getByRole('alert')).toContainText('Not applied: Reward source = "model": task arithmetic has no learned reward model; allowed with it: "rule", "function"');
    await expect(page.getByRole('combobox', { name: 'Task' })).toHaveValue('sentiment');
    await expect(page.getByRole('button', { name: 'Start', exact: true })).toBeEnabled();
  });
});
