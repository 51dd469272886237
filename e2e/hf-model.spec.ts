// "Your own model…" in the SFT card, as a visitor meets it: a fresh synthetic Qwen3 folder
// (random weights, written by the project's generator to a temp folder) is picked through the
// folder input, read and uploaded in the worker, sampled from with its BPE tokens shown; a reload
// offers it again from the browser's own copy; Forget deletes it. The bad folders (T5, a truncated
// weights file, no tokenizer) are refused by name and the page keeps working: the PPO run steps.
// A trained run is saved as one file and opened again: without its model as recorded (the same
// rows and tokens), then on its model with its adapter and training state put back. The shipped
// chat model trains, and comes back after the GPU device is lost mid-run (the test hook destroys
// it): opened again from the browser's copy with the run's last checkpoint.
// axe on the panel; screenshots of it at 1366×900 and 390×844 under test-results/hf-model/.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page, test } from '@playwright/test';
import { type BadFolder, writeSynthetic } from '../src/model/hf/synthetic.ts';
import { nodeFolderSink } from '../src/node/hfFolder.ts';
import { HF_RUN_FILE_VERSION } from '../src/store/hfRunFile.ts';
import { RUN_COLORS } from '../src/store/runs.ts';

const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';
const GOOD = 'tiny-qwen3';
const BAD: [BadFolder, RegExp][] = [
  ['t5', /config\.json: T5ForConditionalGeneration is an encoder-decoder/],
  ['truncated', /model\.safetensors: tensor \S+ ends at byte \d+ but the file has \d+ bytes/],
  ['no-tokenizer', /tokenizer\.json is missing from/],
];

let root = '';
test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hf-e2e-'));
  const seed = Math.floor(Math.random() * 2 ** 31);
  console.log(`hf-model.spec: synthetic seed ${seed}`);
  await writeSynthetic({ family: 'qwen3', dtype: 'BF16', shards: 1, seed }, await nodeFolderSink(join(root, GOOD)));
  for (const [bad] of BAD) await writeSynthetic({ family: 'qwen3', dtype: 'F32', shards: 1, seed: seed + 1, bad }, await nodeFolderSink(join(root, `bad-${bad}`)));
});

test.afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

async function open(page: Page) {
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
}

/**
 * The own-model panel open. The page opens it by itself once it has read a kept model, so the
 * button is pressed only while it says the panel is closed, and again if that raced the page's own.
 */
async function showHfPanel(page: Page) {
  const show = page.getByTestId('hf-show');
  await expect(async () => {
    if ((await show.getAttribute('aria-expanded')) !== 'true') await show.click();
    await expect(page.getByTestId('hf-panel')).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
}

async function pick(page: Page, folder: string) {
  await showHfPanel(page);
  await page.getByTestId('hf-folder').setInputFiles(join(root, folder));
}

async function generate(page: Page) {
  await page.getByTestId('hf-prompt').fill('12+7=');
  await page.getByTestId('hf-generate').click();
  const tokens = page.getByTestId('hf-tokens').getByRole('listitem');
  await expect(tokens.first()).toBeVisible({ timeout: 120_000 });
  const n = await tokens.count();
  expect(n).toBeGreaterThanOrEqual(1);
  expect(n).toBeLessThanOrEqual(Number(await page.getByTestId('hf-maxNewTokens').inputValue()));
  // each token shows an id of the vocabulary
  for (const id of await page.locator('.hf-token-id').allTextContents()) expect(Number(id)).toBeGreaterThanOrEqual(0);
  // sampled (the folder's generation_config.json says do_sample): each token's log-prob, ≤ 0
  await expect(page.getByTestId('hf-greedy')).not.toBeChecked();
  for (const lp of await page.locator('.hf-token-lp').allTextContents()) expect(Number(lp)).toBeLessThanOrEqual(0);
  expect(await page.locator('.hf-token-lp').allTextContents()).not.toContain('');
  await expect(page.getByTestId('hf-sample')).toContainText(`${n} tokens after`);
}

async function axe(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).include('[data-testid="hf-panel"]').withTags(['wcag2a', 'wcag2aa']).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

test('a picked folder is read in the tab, sampled with its tokens, kept across a reload, and forgotten', async ({ page }) => {
  test.setTimeout(420_000);
  await open(page);
  await pick(page, GOOD);
  const model = page.getByTestId('hf-model');
  await expect(model).toContainText(`${GOOD}: Qwen3ForCausalLM`, { timeout: 180_000 });
  await expect(model).toContainText('on the GPU in f16');
  await expect(page.getByTestId('hf-kept')).toContainText(`Kept in this browser: ${GOOD}`, { timeout: 30_000 });
  // the chat template is on: the tokenizer has one; defaults from the folder's generation_config.json
  await expect(page.getByTestId('hf-chat')).toBeChecked();
  await expect(page.getByTestId('hf-sampler')).toContainText('Defaults from generation_config.json');
  await generate(page);
  // a setting out of range is named with its range, and Generate waits for it
  await page.getByTestId('hf-maxNewTokens').fill('0');
  await expect(page.getByTestId('hf-sampler')).toContainText('Max new tokens must be in 1 … 127');
  await expect(page.getByTestId('hf-generate')).toBeDisabled();
  await page.getByTestId('hf-maxNewTokens').fill('16');
  await expect(page.getByTestId('hf-generate')).toBeEnabled();
  expect(await axe(page)).toEqual([]);
  for (const [w, h] of [
    [1366, 900],
    [390, 844],
  ]) {
    await page.setViewportSize({ width: w, height: h });
    await page.getByTestId('hf-panel').scrollIntoViewIfNeeded();
    await page.screenshot({ path: test.info().outputPath(`hf-panel-${w}x${h}.png`), fullPage: false });
    await page.getByTestId('hf-panel').screenshot({ path: test.info().outputPath(`hf-panel-element-${w}x${h}.png`) });
  }
  await page.setViewportSize({ width: 1360, height: 900 });

  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  const again = page.getByTestId('hf-open-kept');
  await expect(again).toHaveText(`Open ${GOOD} again`);
  await again.click();
  await expect(model).toContainText(`${GOOD}: Qwen3ForCausalLM`, { timeout: 180_000 });
  await generate(page);

  await page.getByTestId('hf-forget').click();
  await expect(page.getByTestId('hf-kept')).toHaveCount(0);
  await expect(model).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.getByTestId('hf-show')).toBeVisible();
  await expect(page.getByTestId('hf-open-kept')).toHaveCount(0);
});

test('bad folders are refused by name, and the page keeps working: PPO steps, a good folder opens', async ({ page }) => {
  test.setTimeout(420_000);
  await open(page);
  const problem = page.getByTestId('hf-problem');
  for (const [bad, message] of BAD) {
    await pick(page, `bad-${bad}`);
    await expect(problem).toContainText(`bad-${bad} was not opened:`, { timeout: 60_000 });
    await expect(problem).toContainText(message);
    await expect(page.getByTestId('hf-model')).toHaveCount(0);
  }
  // Files dropped on the drop zone (loose files here: a synthetic drop carries no folder entry).
  const config = readFileSync(join(root, 'bad-t5', 'config.json'), 'utf8');
  const drop = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'config.json', { type: 'application/json' }));
    return dt;
  }, config);
  await page.getByTestId('hf-drop').dispatchEvent('drop', { dataTransfer: drop });
  await expect(problem).toContainText('the dropped files was not opened: config.json: T5ForConditionalGeneration');
  expect(await axe(page)).toEqual([]);
  await page.getByTestId('hf-panel').screenshot({ path: test.info().outputPath('hf-panel-refused.png') });
  await expect(page.getByTestId('hf-kept')).toHaveCount(0); // a refused folder is not kept

  const runs = page.getByTestId('run-list').getByRole('listitem');
  const before = await runs.count();
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await expect.poll(() => runs.count(), { timeout: 120_000, message: 'a PPO step after the refusals' }).toBeGreaterThan(before);

  await pick(page, GOOD);
  await expect(page.getByTestId('hf-model')).toContainText(`${GOOD}: Qwen3ForCausalLM`, { timeout: 180_000 });
  await expect(problem).toHaveCount(0);
  await page.getByTestId('hf-forget').click();
});

test('the open model trains with GRPO-LoRA in the tab: a row per iteration, Stop, a bad setting named, the adapter downloaded as PEFT files, the run saved and opened again, its last iteration in Inspect', async ({
  page,
}) => {
  test.setTimeout(600_000);
  await open(page);
  await pick(page, GOOD);
  await expect(page.getByTestId('hf-model')).toContainText(`${GOOD}: Qwen3ForCausalLM`, { timeout: 180_000 });
  const trainer = page.getByTestId('hf-trainer');
  await expect(trainer).toContainText('Train it with LoRA');
  // the page's reward function on typed prompts, a small run
  await page.getByTestId('hf-train-reward').selectOption('function');
  await page.getByTestId('hf-train-prompts').fill('hello there\nthe cat sat');
  for (const [name, value] of [
    ['loraRank', '2'],
    ['iterations', '2'],
    ['promptsPerBatch', '2'],
    ['samplesPerPrompt', '2'],
    ['maxNewTokens', '4'],
  ] as const)
    await page.getByTestId(`hf-train-${name}`).fill(value);
  // a bad setting is named with its range, and Train waits for it
  await page.getByTestId('hf-train-loraRank').fill('0');
  await expect(trainer).toContainText('LoRA rank r: an integer from 1 to 64');
  await expect(page.getByTestId('hf-train-start')).toBeDisabled();
  await page.getByTestId('hf-train-loraRank').fill('2');
  await expect(page.getByTestId('hf-train-download')).toBeDisabled(); // nothing trained yet
  await page.getByTestId('hf-train-start').click();
  await expect(page.getByTestId('hf-train-status')).toContainText('Trained 2 iterations', { timeout: 300_000 });
  const rows = page.getByTestId('hf-train-table').locator('tbody tr');
  await expect(rows).toHaveCount(2);
  // the curves of the run, drawn by the playground's charts from the same rows: no critic, no value loss
  for (const name of ['reward_mean', 'policy_loss', 'clipfrac', 'kl', 'response_length_mean'])
    await expect(page.getByTestId(`hf-train-chart-${name}`).locator('path.recharts-line-curve')).toHaveCount(1);
  await expect(page.getByTestId('hf-train-chart-value_loss')).toHaveCount(0);
  // each with the playground's help: what the number is, healthy and sick
  await page.getByTestId('hf-train-chart-help-clipfrac').click();
  await expect(page.getByTestId('hf-train-chart-help-panel-clipfrac')).toContainText('share of response tokens');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('hf-train-chart-help-panel-clipfrac')).toHaveCount(0);
  // the KL's help names the estimator the own-model run uses, which its panel does not offer to change
  await page.getByTestId('hf-train-chart-help-kl').click();
  await expect(page.getByTestId('hf-train-chart-help-note-kl')).toContainText('the estimator is always k1');
  await page.keyboard.press('Escape');
  // the CSV holds the table's numbers, row for row
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('hf-train-export-csv').click()]);
  const csvLines = readFileSync((await csv.path())!, 'utf8')
    .trim()
    .split('\n');
  const header = csvLines[0].split(',');
  expect(header.slice(0, 3)).toEqual(['run_id', 'run_name', 'iter']);
  // the run's name is the one text cell (quoted: it holds commas); the cells after it are numbers
  const cell = (line: string, name: string) => line.split(',').slice(2 - header.length)[header.indexOf(name) - 2];
  expect(csvLines.slice(1).map((l) => cell(l, 'iter'))).toEqual(['1', '2']);
  const tableReward = await rows.locator('td:nth-child(2)').allTextContents();
  expect(csvLines.slice(1).map((l) => Number(cell(l, 'reward_mean')).toFixed(3))).toEqual(tableReward);
  for (const cell of await rows.locator('td').allTextContents()) expect(cell === '–' || Number.isFinite(Number(cell))).toBe(true);
  await expect(page.getByTestId('hf-train-sample')).toContainText('Iteration 2, response 1 to');
  // its BPE tokens in the last epoch's update, each with its ratio and advantage
  const tokens = page.getByTestId('hf-train-tokens').getByRole('listitem');
  expect(await tokens.count()).toBeGreaterThanOrEqual(1);
  for (const text of await tokens.allTextContents()) expect(text).toMatch(/r \d+\.\d{3}A -?\d+\.\d{2}/);
  await expect(page.getByTestId('hf-train-tokens-box')).toContainText(/\d+ of \d+ tokens clipped/);
  expect(await axe(page)).toEqual([]);
  await trainer.screenshot({ path: test.info().outputPath('hf-trainer.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await trainer.screenshot({ path: test.info().outputPath('hf-trainer-390.png') });
  // nothing of the panel runs past a phone's width (the table scrolls inside its own box)
  expect(await trainer.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
  await page.setViewportSize({ width: 1366, height: 900 });

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('hf-train-download').click()]);
  expect(download.suggestedFilename()).toBe(`${GOOD}-lora.zip`);
  const zip = readFileSync(await download.path());
  // a zip's local file headers name both PEFT files inside the folder
  const text = zip.toString('latin1');
  expect(text).toContain(`${GOOD}-lora/adapter_config.json`);
  expect(text).toContain(`${GOOD}-lora/adapter_model.safetensors`);

  // A reload offers the adapter kept in this browser once the model is open again; put back, the
  // run's rows return and Continue trains on from iteration 2.
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.getByTestId('hf-open-kept').click();
  await expect(page.getByTestId('hf-model')).toContainText(`${GOOD}: Qwen3ForCausalLM`, { timeout: 180_000 });
  await expect(page.getByTestId('hf-train-kept')).toContainText('trained 2 iterations on this model is kept in this browser', { timeout: 30_000 });
  // beside PEFT's files, the run's training state: the actor's moments and step count, F32 from the GPU
  const state = await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('hf-adapter');
    const bytes = new Uint8Array(await (await (await dir.getFileHandle('training_state.safetensors')).getFile()).arrayBuffer());
    const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  });
  expect(state.__metadata__).toMatchObject({ format: 'ppo-playground-lora-training-state', actor_steps: expect.stringMatching(/^[1-9]\d*$/), critic_steps: '' });
  for (const part of ['params', 'm', 'v']) expect(state[`actor.${part}`].dtype).toBe('F32');
  await page.getByTestId('hf-train-continue-kept').click();
  await expect(page.getByTestId('hf-train-adapter')).toContainText('kept in this browser: r 2, α 4', { timeout: 60_000 });
  await expect(rows).toHaveCount(2);
  await expect(page.getByTestId('hf-train-inspect')).toBeVisible(); // the last iteration's trace came back with it
  await page.getByTestId('hf-train-iterations').fill('1');
  await page.getByTestId('hf-train-continue').click();
  await expect(page.getByTestId('hf-train-status')).toContainText('Trained 1 iteration.', { timeout: 300_000 });
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(2).locator('th')).toHaveText('3');

  // Save the run: one file with the model's name and shape, the rows, and the adapter with its state.
  const live = { rows: await rows.allTextContents(), tokens: await page.getByTestId('hf-train-tokens').allTextContents() };
  const [saved] = await Promise.all([page.waitForEvent('download'), page.getByTestId('hf-train-save-run').click()]);
  expect(saved.suggestedFilename()).toBe(`${GOOD}-run-3.json`);
  const runPath = await saved.path();
  const doc = JSON.parse(readFileSync(runPath, 'utf8'));
  expect(doc).toMatchObject({ format: 'ppo-playground-lora-run', version: HF_RUN_FILE_VERSION, iterations: 3, model: { label: GOOD, architecture: 'Qwen3ForCausalLM' } });
  expect(doc.rows.map((r: { iter: number }) => r.iter)).toEqual([1, 2, 3]);
  expect(typeof doc.adapter.state).toBe('string');
  expect(doc.lastTrace.trace.iter).toBe(3);
  await expect(page.getByTestId('hf-run-file-notice')).toContainText(`Saved the run as ${GOOD}-run-3.json`);
  // Without the model the file shows the run as recorded: the same rows and tokens.
  await page.getByTestId('hf-forget').click();
  await page.getByTestId('hf-run-open').setInputFiles({ name: 'damaged.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ ...doc, iterations: 4 })) });
  await expect(page.getByTestId('hf-run-file-notice')).toContainText('“damaged.json” not opened: it is damaged at iterations (iterations: 4, but the last row is iteration 3)');
  const runFile = { name: saved.suggestedFilename(), mimeType: 'application/json', buffer: readFileSync(runPath) };
  await page.getByTestId('hf-run-open').setInputFiles(runFile);
  const recorded = page.getByTestId('hf-recorded');
  await expect(recorded.getByRole('heading', { level: 4 })).toContainText(`Recorded run: ${GOOD}-run-3.json`);
  await expect(recorded).toContainText(`Trained on “${GOOD}” (Qwen3ForCausalLM, 2 layers)`);
  await expect(recorded).toContainText('Open that model folder to continue training it');
  expect(await recorded.getByTestId('hf-train-table').locator('tbody tr').allTextContents()).toEqual(live.rows);
  expect(await recorded.getByTestId('hf-train-tokens').allTextContents()).toEqual(live.tokens);
  expect(await axe(page)).toEqual([]);
  await recorded.screenshot({ path: test.info().outputPath('hf-recorded.png') });
  // its last iteration opens in Inspect from the file alone
  await recorded.getByTestId('hf-train-inspect').click();
  await expect(page.locator('#inspect-iteration option:checked')).toHaveText(`${GOOD}-run-3.json, recorded (${GOOD}) · iteration 3`);
  await expect(page.locator('table.inspect-table tbody tr[data-t]').first()).toBeVisible();
  // Its model opened: the adapter and training state go back on it, and Continue goes on from 3.
  await pick(page, GOOD);
  await expect(page.getByTestId('hf-train-adapter')).toContainText('from a saved run: r 2, α 4', { timeout: 180_000 });
  await expect(page.getByTestId('hf-train-recorded')).toHaveText('recorded');
  await expect(page.getByTestId('hf-train-adapter')).toContainText(`Recorded in ${GOOD}-run-3.json`);
  await expect(page.getByTestId('hf-train-adapter')).toContainText('as if the run had not stopped');
  await expect(recorded).toHaveCount(0);
  expect(await rows.allTextContents()).toEqual(live.rows);
  await trainer.screenshot({ path: test.info().outputPath('hf-trainer-recorded.png') });

  // The downloaded zip loads back
  await page.getByTestId('hf-train-load').setInputFiles(await download.path());
  await expect(page.getByTestId('hf-train-adapter')).toContainText('loaded from a file: r 2, α 4', { timeout: 60_000 });
  // a file that is not an adapter is refused by name
  await page.getByTestId('hf-train-load').setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('{}') });
  await expect(page.getByTestId('hf-train-load-problem')).toContainText('adapter_config.json and adapter_model.safetensors are missing');

  // Stop ends a longer run after the iteration in flight
  await page.getByTestId('hf-train-iterations').fill('1000');
  await page.getByTestId('hf-train-start').click();
  await expect.poll(() => rows.count(), { timeout: 300_000, intervals: [100] }).toBeGreaterThan(0);
  await page.getByTestId('hf-train-stop').click();
  await expect(page.getByTestId('hf-train-status')).toContainText(/Stopped after \d+ iterations/, { timeout: 300_000 });
  expect(await rows.count()).toBeLessThan(1000);

  // Run both: the two presets one after the other, two iterations each, their curves drawn together;
  // the stopped run before them stays beside them until cleared. A reload in the first arm does not
  // end it: the kept checkpoint goes on to the arm's end, then the second arm runs.
  await page.getByTestId('hf-train-iterations').fill('');
  await expect(page.getByTestId('hf-train-run-both')).toHaveText('Run both presets'); // no count while the field has none
  await expect(page.getByTestId('hf-train-run-both')).toBeDisabled();
  await page.getByTestId('hf-train-iterations').fill('2');
  await expect(page.getByTestId('hf-train-run-both')).toHaveText('Run both presets, 2 iterations each');
  await page.getByTestId('hf-train-run-both').click();
  await expect(page.getByTestId('hf-train-run-both-status')).toContainText('Run both: arm 1 of 2, GRPO on your own model.');
  const keptRecord = () =>
    page.evaluate(async () => {
      try {
        const file = await (await (await navigator.storage.getDirectory()).getFileHandle('hf-adapter.json')).getFile();
        const r = JSON.parse(await file.text());
        return { iterations: r.iterations as number, arm: (r.runBoth?.arm ?? null) as number | null };
      } catch {
        return null;
      }
    });
  // the first arm's checkpoint kept (after its first iteration, or its second)
  await expect.poll(async () => (await keptRecord())?.arm, { timeout: 300_000, intervals: [50] }).toBe(0);
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.getByTestId('hf-open-kept').click();
  await expect(page.getByTestId('hf-train-kept')).toContainText(
    /It was arm 1 of 2 of Run both \(GRPO on your own model\), 1 iteration short of its end|It is arm 1 of 2 of Run both/,
    {
      timeout: 180_000,
    },
  );
  expect(await axe(page)).toEqual([]);
  await trainer.screenshot({ path: test.info().outputPath('hf-trainer-run-both-kept.png') });
  await page.getByTestId('hf-train-continue-run-both').click();
  await expect(page.getByTestId('hf-train-run-both-status')).toContainText('arm 2 of 2, PPO with a critic on your own model', { timeout: 300_000 });
  await expect(page.getByTestId('hf-train-status')).toContainText('Trained 2 iterations.', { timeout: 300_000 });
  await expect(page.getByTestId('hf-train-run-both-status')).toHaveCount(0);
  await expect(page.getByTestId('hf-train-estimator')).toHaveValue('gae');
  // the runs before (this test's earlier ones, three kept at most, back from the kept record), then the two arms, the second the current run
  const legend = (await page.getByTestId('hf-train-legend').getByRole('listitem').allTextContents()).map((x) => x.trim());
  expect(legend.length).toBeGreaterThanOrEqual(3);
  expect(legend.length).toBeLessThanOrEqual(4);
  expect(legend.slice(-2)).toEqual(['GRPO on your own model 2 iterations', 'PPO with a critic on your own model (this run) 2 iterations']);
  // each run a line; value loss only for the runs with a critic (PPO's arm; the GRPO runs before it have none)
  for (const name of ['reward_mean', 'kl']) await expect(page.getByTestId(`hf-train-chart-${name}`).locator('g.recharts-line')).toHaveCount(legend.length);
  await expect(page.getByTestId('hf-train-chart-value_loss').locator(`.recharts-line-dots circle[fill="${RUN_COLORS[0]}"]`)).toHaveCount(2);
  // the earlier runs dashed, in each chart's own legend too
  await expect(page.getByTestId('hf-train-chart-kl').locator('.chart-legend .line-swatch.dashed')).toHaveCount(legend.length - 1);
  expect(await axe(page)).toEqual([]);
  await trainer.screenshot({ path: test.info().outputPath('hf-trainer-run-both.png') });
  await page.getByTestId('hf-train-clear-compared').click();
  await expect(page.getByTestId('hf-train-legend')).toHaveCount(0);
  await expect(page.getByTestId('hf-train-chart-kl').locator('g.recharts-line')).toHaveCount(1);
  await page.getByTestId('hf-forget').click();
});

test('the playground’s character model opens as the GPT-2 it is: one token a character, its answer ending in <eos>, a character it lacks named; it trains on its own task', async ({
  page,
}) => {
  await open(page);
  await showHfPanel(page);
  await page.getByTestId('hf-open-playground').click();
  await expect(page.getByTestId('hf-model')).toContainText('arithmetic-sft-gpt2: GPT2LMHeadModel, 2 layers, width 64, 2 heads (2 key/value)', { timeout: 120_000 });
  await page.getByTestId('hf-prompt').fill('12+34=');
  await page.getByTestId('hf-greedy').check();
  await page.getByTestId('hf-generate').click();
  await expect(page.getByTestId('hf-tokens').getByRole('listitem').first()).toBeVisible({ timeout: 120_000 });
  const texts = await page.locator('[data-testid="hf-tokens"] .hf-token-text').allTextContents();
  expect(texts.length).toBeGreaterThanOrEqual(2);
  for (const x of texts.slice(0, -1)) expect([...x]).toHaveLength(1);
  expect(texts[texts.length - 1]).toBe('<eos>');
  await expect(page.getByTestId('hf-response')).toHaveText(texts.slice(0, -1).join(''));
  await expect(page.getByTestId('hf-unknown-chars')).toHaveCount(0);
  // a character outside its alphabet has no token: named above the answer, which is the rest's
  await page.getByTestId('hf-prompt').fill('12+34=?');
  await page.getByTestId('hf-generate').click();
  await expect(page.getByTestId('hf-unknown-chars')).toHaveText('The model has no token for “?”: the prompt it read leaves it out.', { timeout: 120_000 });
  await expect(page.getByTestId('hf-response')).toHaveText(texts.slice(0, -1).join(''));
  await page.getByTestId('hf-panel').screenshot({ path: test.info().outputPath('playground-model-as-gpt2.png') });

  // GRPO-LoRA on its own task (offered once the model opened): the task's prompts and rule, no chat template asked for
  await expect(page.getByTestId('hf-train-reward')).toHaveValue('arithmetic');
  await expect(page.getByTestId('hf-train-task-help')).toContainText("The arithmetic task's own prompts");
  for (const [name, value] of [
    ['iterations', '1'],
    ['promptsPerBatch', '2'],
    ['samplesPerPrompt', '2'],
    ['maxNewTokens', '5'],
    ['miniBatches', '1'],
  ] as const)
    await page.getByTestId(`hf-train-${name}`).fill(value);
  await page.getByTestId('hf-train-start').click();
  await expect(page.getByTestId('hf-train-status')).toContainText('Trained 1 iteration', { timeout: 180_000 });
  await expect(page.getByTestId('hf-train-eval-before')).toContainText('on 16 held-out problems');
  // each response of the batch with the task rule's score (1 exact, partial credit near it, else 0)
  const responses = await page.getByTestId('hf-train-response').locator('option').allTextContents();
  expect(responses).toHaveLength(4);
  for (const r of responses) expect(r).toMatch(/^\d: “-?\d*”, score [01]\.\d{3}, \d+ clipped$/);
  expect(await axe(page)).toEqual([]);
});

test('the shipped chat model opens with one click, answers in its BPE digits, trains with GRPO-LoRA on the chat arithmetic task with a clipped token shown in the panel and the Inspect tab, and comes back after a lost GPU device', async ({
  page,
}) => {
  test.setTimeout(600_000);
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1')); // the device's destroy hook
  await open(page);
  await showHfPanel(page);
  await expect(page.getByTestId('hf-panel')).toContainText('a 500.6 KiB Qwen3-architecture model');
  await page.getByTestId('hf-open-shipped').click();
  await expect(page.getByTestId('hf-model')).toContainText('chat-arithmetic: Qwen3ForCausalLM, 2 layers, width 96, 4 heads (2 key/value), vocabulary 320', { timeout: 180_000 });
  // asked through its chat template, greedy, it answers with digit tokens and its end of turn
  await page.getByTestId('hf-prompt').fill('What is 12 + 7? Answer with the number.');
  await page.getByTestId('hf-greedy').check();
  await page.getByTestId('hf-generate').click();
  const sampled = page.getByTestId('hf-tokens').getByRole('listitem');
  await expect(sampled.first()).toBeVisible({ timeout: 120_000 });
  const texts = await page.locator('[data-testid="hf-tokens"] .hf-token-text').allTextContents();
  expect(texts.length).toBeGreaterThanOrEqual(2);
  for (const x of texts.slice(0, -1)) expect(x).toMatch(/^\d$/);
  expect(texts[texts.length - 1]).toBe('<|im_end|>');

  // a preset sets every setting and says what it does
  await page.getByTestId('hf-train-preset-ppoCritic').click();
  await expect(page.getByTestId('hf-train-estimator')).toHaveValue('gae');
  await page.getByTestId('hf-train-preset-grpo').click();
  await expect(page.getByTestId('hf-train-estimator')).toHaveValue('group_norm');
  await expect(page.getByTestId('hf-train-iterations')).toHaveValue('120');
  await expect(page.getByTestId('hf-train-preset-about')).toContainText('GRPO with LoRA r 8');
  // GRPO-LoRA on the task (the panel's default reward), a run short enough for SwiftShader
  for (const [name, value] of [
    ['iterations', '2'],
    ['promptsPerBatch', '4'],
    ['samplesPerPrompt', '4'],
    ['maxNewTokens', '6'],
    ['lr', '0.005'],
    ['seed', '3'],
  ] as const)
    await page.getByTestId(`hf-train-${name}`).fill(value);
  await page.getByTestId('hf-train-start').click();
  await expect(page.getByTestId('hf-train-status')).toContainText('Trained 2 iterations', { timeout: 300_000 });
  // every response of the last batch can be shown; the page finds one with a token the clip stopped
  await expect(page.getByTestId('hf-train-response').locator('option')).toHaveCount(16);
  await expect(page.getByTestId('hf-train-batch-clipped')).toContainText(/^[1-9]\d* of the batch's 16 responses have a token the clip stopped/);
  if ((await page.getByTestId('hf-train-show-clipped').count()) > 0) await page.getByTestId('hf-train-show-clipped').click();
  const tokens = page.getByTestId('hf-train-tokens').getByRole('listitem');
  expect(await tokens.count()).toBeGreaterThanOrEqual(2);
  // its BPE tokens: digits, then the end of the turn
  const trained = await page.locator('[data-testid="hf-train-tokens"] .hf-token-text').allTextContents();
  for (const x of trained.slice(0, -1)) expect(x).toMatch(/^\d$/);
  const clippedTokens = page.getByTestId('hf-train-tokens').locator('li[data-clip]');
  expect(await clippedTokens.count()).toBeGreaterThanOrEqual(1);
  await expect(page.getByTestId('hf-train-tokens-box')).toContainText(/[1-9]\d* of \d+ tokens clipped/);
  // The same response in the Inspect tab, from the trainer's own numbers: its BPE tokens, the clip
  // badge on a token the update clipped, and the step-through of the formulas.
  await page.getByTestId('hf-train-inspect').click();
  await expect(page.locator('#tab-inspect')).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('#inspect-iteration option:checked')).toHaveText('Your own model (chat-arithmetic) · iteration 2');
  const inspected = page.locator('table.inspect-table tbody tr[data-t] .token-text');
  expect((await inspected.allTextContents()).slice(0, trained.length)).toEqual(trained);
  expect(await page.locator('table.inspect-table tbody [data-col="clip"] .clip-badge:not(.clip-none)').count()).toBeGreaterThanOrEqual(1);
  await page.getByRole('button', { name: 'Walk through this iteration' }).click();
  await expect(page.locator('.walk-region')).toBeVisible();
  expect(await axe(page)).toEqual([]);
  await page.locator('.inspector').screenshot({ path: test.info().outputPath('hf-shipped-inspector.png') });
  await page.getByRole('button', { name: 'End walk-through' }).click();
  expect(await axe(page)).toEqual([]);
  // The other teaching views show the same iteration (no playground run has a batch): the Samples
  // tab its rows of the last update step in BPE tokens, the Clipping tab its ratios with the run's ε.
  await page.locator('#tab-samples').click();
  const samplesView = page.getByTestId('view-samples');
  await expect(page.getByTestId('batch-run-own')).toContainText('The views below show Your own model (chat-arithmetic) — iteration 2');
  await expect(samplesView).toContainText('iteration 2');
  const miniBatches = Number(await page.getByTestId('hf-train-miniBatches').inputValue());
  await expect(samplesView.locator('.sample')).toHaveCount(Math.min(6, 16 / miniBatches)); // the last step's rows, six at most
  await expect(samplesView.locator('.sample-prompt').first()).toContainText('What is');
  const sampleTokens = await samplesView.locator('.sample').first().locator('.tok').allTextContents();
  expect(sampleTokens.length).toBeGreaterThanOrEqual(1);
  for (const x of sampleTokens) expect(x).toMatch(/^(\d|<\|im_end\|>)$/);
  expect(await axe(page)).toEqual([]);
  await samplesView.screenshot({ path: test.info().outputPath('hf-shipped-samples.png') });
  // KL shaping: its answers are a few tokens, said so, with no playground preset offered for a run of this model
  await page.locator('#tab-kl').click();
  await expect(page.getByTestId('view-kl')).toContainText('What is');
  if (sampleTokens.length <= 4) {
    await expect(page.getByTestId('kl-short-hint')).toContainText('only a few tokens long');
    await expect(page.getByTestId('kl-short-hint').getByRole('button')).toHaveCount(0);
  } else await expect(page.getByTestId('kl-short-hint')).toHaveCount(0);
  await page.locator('#tab-clipping').click();
  await expect(page.getByTestId('clip-trained')).toContainText('iteration 2');
  await expect(page.getByTestId('clip-what-if')).toHaveCount(0);
  await page.getByTestId('view-clipping').screenshot({ path: test.info().outputPath('hf-shipped-clipping.png') });
  await page.getByTestId('hf-trainer').screenshot({ path: test.info().outputPath('hf-shipped-trainer.png') });
  for (const [width, height] of [
    [1280, 720],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.getByTestId('hf-trainer').screenshot({ path: test.info().outputPath(`hf-shipped-trainer-${width}.png`) });
    // the list of responses and the token boxes stay inside the panel
    expect(await page.getByTestId('hf-trainer').evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
  }
  await page.setViewportSize({ width: 1366, height: 900 });

  // The GPU device lost mid-run: the model opens again on a new one from this browser's copy, with
  // the checkpoint kept after the last iteration that got one (2 or 3) and the rows up to it.
  const rows = page.getByTestId('hf-trainer').getByTestId('hf-train-table').locator('tbody tr');
  await page.getByTestId('hf-train-iterations').fill('3');
  await page.getByTestId('hf-train-continue').click();
  await expect(rows).toHaveCount(3, { timeout: 300_000 });
  await page.evaluate(() => window.ppoPlayground!.debug!.destroyDevice());
  const recovered = page.getByTestId('hf-recovered');
  await expect(recovered).toContainText('The GPU device was lost, and chat-arithmetic with it', { timeout: 180_000 });
  const kept = Number(/after iteration (\d+)/.exec((await recovered.textContent()) ?? '')?.[1]);
  expect([2, 3]).toContain(kept);
  await expect(page.getByTestId('hf-model')).toContainText('chat-arithmetic: Qwen3ForCausalLM');
  await expect(rows).toHaveCount(kept);
  await expect(page.getByTestId('hf-train-adapter')).toContainText('as if the run had not stopped');
  await page.getByTestId('hf-train-iterations').fill('1');
  await page.getByTestId('hf-train-continue').click();
  await expect(page.getByTestId('hf-train-status')).toContainText('Trained 1 iteration.', { timeout: 300_000 });
  await expect(rows.last().locator('th')).toHaveText(String(kept + 1));
  expect(await axe(page)).toEqual([]);

  // A preset's recorded run (npm run record-runs): the model holds the recovered adapter, so the run
  // is shown as recorded and goes on the model when asked, its 120 rows shown.
  await page.getByTestId('hf-preset-result-grpo').click();
  await expect(page.getByTestId('hf-recorded')).toContainText(`it holds another adapter (${kept + 1} iterations)`);
  // its last iteration, recorded with it, opens in Inspect while it is shown as recorded
  await page.getByTestId('hf-recorded').getByTestId('hf-train-inspect').click();
  await expect(page.locator('#inspect-iteration option:checked')).toHaveText('own-model-grpo.json, recorded (chat-arithmetic) · iteration 120');
  // and in the other views, picked beside the live run's last iteration
  await page.locator('#tab-samples').click();
  await expect(page.getByTestId('batch-run').locator('option')).toHaveText([
    `Your own model (chat-arithmetic) — iteration ${kept + 1}`,
    'own-model-grpo.json, recorded (chat-arithmetic) — iteration 120',
  ]);
  await page.getByTestId('batch-run').selectOption({ label: 'own-model-grpo.json, recorded (chat-arithmetic) — iteration 120' });
  await expect(page.getByTestId('view-samples')).toContainText('iteration 120');
  await page.getByTestId('hf-recorded-put').click();
  await expect(page.getByTestId('hf-train-adapter')).toContainText('from a saved run: r 8', { timeout: 60_000 });
  await expect(page.getByTestId('hf-train-adapter')).toContainText('Recorded in own-model-grpo.json');
  await expect(rows).toHaveCount(120);
  // The other one, while the model holds that adapter: shown as recorded, put on only when asked.
  await page.getByTestId('hf-preset-result-ppoCritic').click();
  await expect(page.getByTestId('hf-recorded')).toContainText('it holds another adapter (120 iterations)');
  await expect(page.getByTestId('hf-recorded').getByTestId('hf-train-table').locator('td').nth(4)).not.toHaveText('–'); // GAE: a value loss
  expect(await axe(page)).toEqual([]);
  await page.getByTestId('hf-recorded-put').click();
  await expect(page.getByTestId('hf-train-adapter')).toContainText('Recorded in own-model-ppoCritic.json', { timeout: 60_000 });
  await expect(page.getByTestId('hf-recorded')).toHaveCount(0);
  // Without a model open, a result is shown as recorded.
  await page.getByTestId('hf-forget').click();
  await page.getByTestId('hf-preset-result-grpo').click();
  await expect(page.getByTestId('hf-recorded')).toContainText('Trained on “chat-arithmetic” (Qwen3ForCausalLM, 2 layers)');
  await expect(page.getByTestId('hf-recorded').getByTestId('hf-train-table').locator('tbody tr')).toHaveCount(120);
});
