// "Scale it up" in the real browser: the export code arrives on demand, and "Download … job"
// builds a zip in the page whose files read back (Parquet rows, reward.py, the launch script)
// for the settings on screen. A GPU count the batch cannot split over is refused with its reason.
import { readFile } from 'node:fs/promises';
import { expect, test } from './fixtures.ts';
import { unzipSync } from 'fflate';
import { parquetReadObjects } from 'hyparquet';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
});

test('the export code is not part of the first load', async ({ page }) => {
  const scripts = await page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e.name)
      .filter((n) => n.endsWith('.js')),
  );
  // The panel's chunk loads after the first paint; the job writer (Parquet, zip) only on a download.
  expect(scripts.some((n) => /\/assets\/job-[^/]*\.js$/.test(n))).toBe(false);
  expect(scripts.some((n) => /\/assets\/zip-[^/]*\.js$/.test(n))).toBe(false);
  await expect(page.getByTestId('scale-up-command')).toContainText('python3 -m verl.trainer.main_ppo');
});

test('Download verl job and Download OpenRLHF job build the job for the settings on screen', async ({ page }) => {
  await page.getByLabel('Clip ε', { exact: true }).fill('0.3');
  await expect(page.getByTestId('scale-up-command')).toContainText('actor_rollout_ref.actor.clip_ratio_low=0.3');

  for (const [button, script, expected] of [
    ['Download verl job', 'run_verl.sh', 'actor_rollout_ref.actor.clip_ratio_low=0.3'],
    ['Download OpenRLHF job', 'run_openrlhf.sh', '--actor.eps_clip_low_high 0.3 0.2'],
  ] as const) {
    const downloadPromise = page.waitForEvent('download');
    await page.getByRole('button', { name: button }).click();
    const download = await downloadPromise;
    const engine = script === 'run_verl.sh' ? 'verl' : 'openrlhf';
    expect(download.suggestedFilename()).toBe(`ppo-playground-arithmetic-${engine}.zip`);
    const files = unzipSync(new Uint8Array(await readFile((await download.path())!)));
    const folder = `ppo-playground-arithmetic-${engine}`;
    expect(Object.keys(files).sort()).toEqual(['README.md', 'reward.py', script, 'test.parquet', 'train.parquet'].map((f) => `${folder}/${f}`).sort());
    expect(new TextDecoder().decode(files[`${folder}/${script}`])).toContain(expected);
    expect(new TextDecoder().decode(files[`${folder}/reward.py`])).toContain('def compute_score(data_source, solution_str, ground_truth, extra_info=None)');
    const test_ = files[`${folder}/test.parquet`];
    const rows = (await parquetReadObjects({ file: test_.buffer.slice(test_.byteOffset, test_.byteOffset + test_.byteLength) as ArrayBuffer })) as {
      reward_model: { style: string; ground_truth: string };
      extra_info: { playground_prompt: string };
    }[];
    expect(rows).toHaveLength(231); // every held-out pair once (the arithmetic task's hash hold-out)
    for (const r of rows) {
      const [a, b] = r.extra_info.playground_prompt.slice(0, -1).split('+').map(Number);
      expect(r.reward_model).toEqual({ style: 'rule', ground_truth: String(a + b).padStart(2, '0') }); // zero-padded, as the rule wants
    }
  }
});

test('a GPU count the minibatch cannot split over is refused with the allowed counts', async ({ page }) => {
  await page.getByLabel('GPUs on the node').fill('3');
  await expect(page.getByTestId('scale-up-problem')).toContainText('gpus = 3: a minibatch of 16 sequences must split evenly over the GPUs; allowed: 1, 2, 4, 8, 16');
  await expect(page.getByRole('button', { name: 'Download verl job' })).toBeDisabled();
  await page.getByLabel('GPUs on the node').fill('4');
  await expect(page.getByTestId('scale-up-command')).toContainText('trainer.n_gpus_per_node=4');
});
