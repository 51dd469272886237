// SFT in the tab, as a visitor meets it: model width 128 and 4 heads do not fit the shipped model,
// so the page says so before Start and offers SFT at that size; SFT runs with a live loss curve
// (a reduced run: localStorage['ppo-sft-phase-steps'] caps each phase, the test-only setting),
// then PPO trains that model: the header and the exported checkpoint's metadata say 2 × 4 × 128,
// and a reload keeps it. "Download as GPT-2" zips the model as a GPT2LMHeadModel folder.
import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';
import { unzipSync } from 'fflate';

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';

/** The `config` JSON in a safetensors file's metadata. */
function checkpointConfig(bytes: Buffer): { nLayer: number; nHead: number; dModel: number } {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  return JSON.parse(header.__metadata__.config);
}

/** "Download as GPT-2": the zip's one folder and its files, and its config.json. */
async function gpt2Download(page: Page): Promise<Record<string, unknown>> {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.getByTestId('sft-download-gpt2').click()]);
  expect(download.suggestedFilename()).toBe('arithmetic-sft-gpt2.zip');
  const files = unzipSync(new Uint8Array(await readFile((await download.path())!)));
  expect(Object.keys(files).sort()).toEqual(
    ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map((f) => `arithmetic-sft-gpt2/${f}`),
  );
  return JSON.parse(new TextDecoder().decode(files['arithmetic-sft-gpt2/config.json'])) as Record<string, unknown>;
}

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

test('width 128 and 4 heads: the page offers SFT, trains it with a live curve, PPO trains that model, a reload keeps it', async ({ page }) => {
  test.setTimeout(300_000);
  await page.addInitScript(() => localStorage.setItem('ppo-sft-phase-steps', '3'));
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  const header = page.locator('header').getByTestId('model-size');
  await expect(header).toHaveText('shipped 2 × 2 × 64');
  await expect(page.getByTestId('model-mismatch')).toHaveCount(0);

  await page.getByLabel('Model width', { exact: true }).fill('128');
  await page.getByLabel('Attention heads', { exact: true }).fill('4');
  await page.getByLabel('Attention heads', { exact: true }).press('Tab');
  const mismatch = page.getByTestId('model-mismatch');
  await expect(mismatch).toContainText('Start would train the shipped SFT model, 2 × 2 × 64');
  await expect(mismatch).toContainText('Attention heads 4 (model: 2), Model width 128 (model: 64)');
  // The offer carries a time measured on this device.
  await expect(page.getByTestId('offer-sft')).toContainText(/about \d+( min)?( \d+ s| s| min)? on this GPU/, { timeout: 90_000 });

  await page.getByTestId('offer-sft').click();
  await expect(page.getByTestId('sft-run')).toHaveAttribute('data-status', 'running');
  await expect(page.getByTestId('sft-busy')).toBeVisible();
  await expect(page.getByTestId('sft-loss')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('sft-run')).toHaveAttribute('data-status', 'done', { timeout: 180_000 });
  await expect(page.getByTestId('sft-evals').getByRole('listitem')).toHaveCount(2);
  await expect(header).toHaveText('model 2 × 4 × 128, SFT in this tab');
  await expect(mismatch).toHaveCount(0);
  // the model just trained, as the GPT-2 folder it is
  expect(await gpt2Download(page)).toMatchObject({ n_layer: 2, n_head: 4, n_embd: 128 });

  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect.poll(() => iterations(page), { timeout: 120_000, message: 'PPO iterations on the SFT model' }).toBeGreaterThanOrEqual(1);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.getByRole('button', { name: 'Export actor' }).click()]);
  expect(checkpointConfig(await readFile((await download.path())!))).toMatchObject({ nLayer: 2, nHead: 4, dModel: 128 });

  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await expect(page.locator('header').getByTestId('model-size')).toHaveText('model 2 × 4 × 128, SFT in this tab');
  await expect(page.getByTestId('model-mismatch')).toHaveCount(0);
  // The worker got the kept model back: the weights an iteration trains are 2 × 4 × 128.
  const runs = page.getByTestId('run-list').getByRole('listitem');
  const before = await runs.count();
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await expect.poll(() => runs.count(), { timeout: 120_000, message: 'a run trained after the reload' }).toBeGreaterThan(before);
  const [again] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.getByRole('button', { name: 'Export actor' }).click()]);
  expect(checkpointConfig(await readFile((await again.path())!))).toMatchObject({ nLayer: 2, nHead: 4, dModel: 128 });
});

test('a file that is not a model is refused inline, naming why, and the model stays', async ({ page }) => {
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByTestId('sft-file').setInputFiles({ name: 'notes.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from('not a model at all') });
  await expect(page.getByTestId('sft-problem')).toContainText('notes.safetensors was not loaded:');
  await expect(page.getByTestId('sft-problem')).toContainText('The current model is unchanged.');
  await expect(page.locator('header').getByTestId('model-size')).toHaveText('shipped 2 × 2 × 64');
  // the shipped model, as the GPT-2 folder it is
  expect(await gpt2Download(page)).toMatchObject({ architectures: ['GPT2LMHeadModel'], n_layer: 2, n_head: 2, n_embd: 64 });
});
