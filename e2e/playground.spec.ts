// The page's extra panels in the real browser: "Scale it up" commands follow the settings and
// copy; checkpoint files are refused with a reason (the run untouched) or loaded and exported
// back byte for byte; the human-feedback view turns clicks and keys into labelled pairs.
import { readFile } from 'node:fs/promises';
import { expect, test } from './fixtures.ts';
import { encodeSafetensors } from '../src/model/safetensors.ts';
import { getTask } from '../src/tasks/index.ts';
import type { WorkerToPage } from '../src/worker/protocol.ts';
import { metricMessages, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
});

test('scale it up: the verl and OpenRLHF commands follow the settings and copy to the clipboard', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const cmd = page.getByTestId('scale-up-command');
  await expect(cmd).toContainText('python3 -m verl.trainer.main_ppo');
  await expect(cmd).toContainText('actor_rollout_ref.actor.clip_ratio_low=0.2');
  await page.getByLabel('Clip ε', { exact: true }).fill('0.3');
  await expect(cmd).toContainText('actor_rollout_ref.actor.clip_ratio_low=0.3');
  await page.getByRole('radio', { name: 'OpenRLHF' }).click();
  await expect(cmd).toContainText('python3 -m openrlhf.cli.train_ppo_ray');
  await expect(cmd).toContainText('--actor.eps_clip_low_high 0.3 0.2');
  await page.getByRole('button', { name: 'Copy the OpenRLHF command' }).click();
  await expect(page.getByRole('button', { name: 'Copy the OpenRLHF command' })).toHaveText('Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(await cmd.textContent());
});

const arithmetic = getTask('arithmetic');
function actorFile(task: string, alphabet: string): Buffer {
  const config = JSON.stringify({ vocabSize: 3 + alphabet.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 32, head: 'lm' });
  const bytes = encodeSafetensors([{ name: 'wte', dtype: 'F32', shape: [3], data: new Float32Array([0.25, -1, 2]) }], {
    config,
    alphabet,
    task,
    format_version: '1',
  });
  return Buffer.from(bytes);
}

test('a wrong checkpoint is refused with its reason and the run is untouched', async ({ page }) => {
  await send(page, metricMessages(20));
  await expect(page.getByTestId('run-list').getByRole('listitem')).toHaveCount(1);
  const input = page.getByTestId('checkpoint-file');
  await input.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('definitely not safetensors') });
  const notice = page.getByTestId('notice');
  await expect(notice).toContainText('Checkpoint "notes.txt" not loaded');
  await expect(notice).toContainText('The current run is untouched');
  await input.setInputFiles({ name: 'sentiment.safetensors', mimeType: 'application/octet-stream', buffer: actorFile('sentiment', getTask('sentiment').alphabet) });
  await expect(notice).toContainText('whose characters differ from task "arithmetic"');
  // Still the same run, still active: more metrics extend it rather than starting a new one.
  await send(
    page,
    metricMessages(5).map((m) => ({ ...m, iter: (m as { iter: number }).iter + 20 }) as WorkerToPage),
  );
  await expect(page.getByTestId('run-list').getByRole('listitem')).toHaveCount(1);
  await expect(page.getByTestId('run-list')).toContainText('25 it');
});

test('a loaded actor comes back byte for byte from Export actor', async ({ page }) => {
  const file = actorFile('arithmetic', arithmetic.alphabet);
  await page.getByTestId('checkpoint-file').setInputFiles({ name: 'mine.safetensors', mimeType: 'application/octet-stream', buffer: file });
  await expect(page.getByTestId('notice')).toContainText('Loaded the actor from "mine.safetensors"');
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.getByRole('button', { name: 'Export actor' }).click()]);
  expect(download.suggestedFilename()).toBe('ppo-actor-arithmetic-iter0.safetensors');
  expect(Buffer.compare(await readFile((await download.path())!), file)).toBe(0);
});

const FEEDBACK_SAMPLES: WorkerToPage = {
  type: 'samples',
  iter: 7,
  rows: [
    { prompt: '2+2=', response: '4', reward: 1, endedWithEos: true, tokens: [] },
    { prompt: '2+2=', response: '5', reward: -1, endedWithEos: true, tokens: [] },
    { prompt: '2+2=', response: '44', reward: -1, endedWithEos: false, tokens: [] },
    { prompt: '9-3=', response: '6', reward: 1, endedWithEos: true, tokens: [] },
  ],
};

test('human feedback: clicks and keys label pairs that train the reward model', async ({ page }) => {
  // The default (arithmetic) task is scored by a rule: the view says so before any labelling, and Train stays off.
  await page.getByRole('tab', { name: 'Human feedback' }).click();
  await expect(page.getByTestId('feedback-no-rm')).toContainText('The arithmetic task is scored by its rule and has no learned reward model');
  // Sentiment has a learned reward model: the labels train it.
  await page.goto('/?task=sentiment');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.getByRole('tab', { name: 'Human feedback' }).click();
  await expect(page.getByTestId('feedback-no-rm')).toHaveCount(0);
  const view = page.getByTestId('view-feedback');
  await expect(view).toContainText('No samples yet');
  await send(page, [FEEDBACK_SAMPLES]);
  const pair = page.getByTestId('feedback-pair');
  await expect(pair).toContainText('3 pairs to label');
  await expect(pair.getByRole('figure', { name: 'Response A' })).toContainText('4');
  await pair.getByRole('button', { name: /A is better/ }).click();
  await expect(page.getByTestId('label-count')).toHaveText('1 labelled pair');
  // Next pair is 4 vs 44: skip it with 0; then 5 vs 44, where 2 prefers B (44).
  await expect(pair).toContainText('2 pairs to label');
  await page.keyboard.press('0');
  await expect(pair).toContainText('1 pair to label');
  await page.keyboard.press('2');
  await expect(page.getByTestId('label-count')).toHaveText('2 labelled pairs');
  await expect(page.getByTestId('feedback-empty')).toContainText('Nothing left to compare');
  const list = view.getByRole('list', { name: 'Labelled pairs' });
  await expect(list.getByRole('listitem')).toHaveCount(2);
  await expect(list.getByRole('listitem').nth(0)).toContainText('✓ 4');
  await expect(list.getByRole('listitem').nth(0)).toContainText('✗ 5');
  await expect(list.getByRole('listitem').nth(1)).toContainText('✓ 44');
  await expect(list.getByRole('listitem').nth(1)).toContainText('✗ 5');

  // The reply arrives through the same handler as the worker's; it is fed before the worker
  // (which is only being started by this click) could answer.
  await view.getByRole('button', { name: 'Train reward model on my labels' }).click();
  await send(page, [{ type: 'rewardModelTrained', pairs: 2, accuracy: 1, accuracyBefore: 0.5 }]);
  await expect(page.getByTestId('rm-result')).toContainText('trained on 2 pairs: it now prefers your choice in 100% of them (before: 50%)');
  await expect(view.getByRole('button', { name: 'Train reward model on my labels' })).toBeEnabled();
});

test('settings: every knob can show its explanation and range at once; a bad link value is named as typed', async ({ page }) => {
  const fields = page.locator('.config-panel .field');
  const n = await fields.count();
  expect(n).toBeGreaterThan(30);
  await expect(page.locator('.config-panel .field-help:visible')).toHaveCount(0);
  await page.getByLabel('Show all explanations').check();
  await expect(page.locator('.config-panel .field-help:visible')).toHaveCount(n);
  // Every field but the checkboxes states its allowed values.
  const bools = await page.locator('.config-panel .field-bool').count();
  await expect(page.locator('.config-panel .field-help:visible .field-range')).toHaveCount(n - bools);
  await page.goto('/?dModel=abc');
  await expect(page.getByTestId('url-problems')).toContainText('dModel = "abc": not a number; allowed: an integer from 32 to 256');
});
