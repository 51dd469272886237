import { expect, test } from './fixtures.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
});

test('required buttons and labelled settings exist, each with help and range', async ({ page }) => {
  for (const name of ['Start', 'Pause', 'Step', 'Reset']) {
    await expect(page.getByRole('button', { name, exact: true })).toBeVisible();
  }
  for (const label of ['Clip ε', 'Clip ε (high)', 'KL coefficient β', 'Learning rate', 'Critic learning rate', 'Advantage estimator', 'KL estimator', 'Task', 'Seed']) {
    await expect(page.getByLabel(label, { exact: true })).toBeVisible();
  }
  for (const group of ['Task & model', 'Rollout', 'Reward & KL', 'Advantages', 'PPO update', 'Optimiser']) {
    await expect(page.locator('summary', { hasText: group })).toBeVisible();
  }
  const clip = page.getByLabel('Clip ε', { exact: true });
  await clip.focus();
  await expect(clip).toHaveAccessibleDescription(/clipped below at 1 − ε.*Allowed: a number from 0 \(exclusive\) to 1 \(exclusive\)/);
  await expect(page.getByTestId('stage-rollout')).toBeVisible();
});

test('an invalid value shows the allowed range and is not applied', async ({ page }) => {
  const clip = page.getByLabel('Clip ε', { exact: true });
  await clip.fill('-1');
  const field = page.locator('.field', { has: clip });
  await expect(field.getByRole('alert')).toContainText('from 0 (exclusive) to 1 (exclusive)');
  await expect(clip).toHaveAttribute('aria-invalid', 'true');
  // The store (mirrored into the URL) still holds the default.
  await expect(page).toHaveURL(/clipLow=0\.2(&|$)/);
  await clip.fill('0.3');
  await expect(field.getByRole('alert')).toHaveCount(0);
  await expect(page).toHaveURL(/clipLow=0\.3(&|$)/);
  // Cross-field rule: 3 heads do not divide width 64.
  await page.getByLabel('Attention heads').fill('3');
  const heads = page.locator('.field', { has: page.getByLabel('Attention heads') }).getByRole('alert');
  // Named by the panel's labels, with the values that would fit.
  await expect(heads).toContainText('Attention heads = 3: must divide Model width (64)');
  await expect(heads).toContainText('With the other settings as they are, Attention heads can be 1, 2, 4, 8.');
  await expect(page).toHaveURL(/nHead=2(&|$)/);
});

test('the config round-trips through the URL and bad URL values are reported, not applied', async ({ page }) => {
  await page.getByLabel('Seed', { exact: true }).fill('1234');
  await page.getByLabel('KL coefficient β').fill('0.2');
  await page.getByLabel('Advantage estimator').selectOption('rloo');
  await expect(page).toHaveURL(/seed=1234/);
  const url = page.url();
  const fresh = await page.context().newPage();
  await fresh.goto(url);
  await expect(fresh.getByLabel('Seed', { exact: true })).toHaveValue('1234');
  await expect(fresh.getByLabel('KL coefficient β')).toHaveValue('0.2');
  await expect(fresh.getByLabel('Advantage estimator')).toHaveValue('rloo');
  await expect(fresh.getByTestId('url-problems')).toHaveCount(0);

  await fresh.goto('/?clipLow=-1&seed=7&bogus=3&hide=klCoef,clipLow');
  await expect(fresh.getByTestId('url-problems')).toContainText('clipLow = -1');
  await expect(fresh.getByTestId('url-problems')).toContainText('bogus: unknown setting');
  await expect(fresh.getByLabel('Seed', { exact: true })).toHaveValue('7');
  // Classroom option: hidden controls are gone, the others stay.
  await expect(fresh.getByLabel('KL coefficient β')).toHaveCount(0);
  await expect(fresh.getByLabel('Clip ε', { exact: true })).toHaveCount(0);
  await expect(fresh.getByLabel('Clip ε (high)')).toBeVisible();
  await expect(fresh).toHaveURL(/clipLow=0\.2/);
});

test('a preset changes the config and explains itself', async ({ page }) => {
  await expect(page.getByLabel('KL coefficient β')).toHaveValue('0.05');
  await page.getByRole('button', { name: 'Reward hacking without KL' }).click();
  await expect(page.getByLabel('KL coefficient β')).toHaveValue('0');
  await expect(page.getByTestId('preset-explanation')).toContainText('β is set to 0');
  await expect(page.getByLabel('Task', { exact: true })).toHaveValue('sentiment');
  await expect(page.getByLabel('Reward source')).toHaveValue('model');
  await page.getByRole('button', { name: 'Learn arithmetic' }).click();
  await expect(page.getByLabel('Task', { exact: true })).toHaveValue('arithmetic');
  await expect(page.getByLabel('Advantage estimator')).toHaveValue('rloo');
  await expect(page.getByTestId('preset-explanation')).toContainText('sloppy student');
  // A paired card sets its first arm's whole recipe ("PPO (GAE)"); Run both trains every arm.
  await page.getByRole('button', { name: 'PPO vs GRPO' }).click();
  await expect(page.getByLabel('Advantage estimator')).toHaveValue('gae');
  await page.getByRole('button', { name: 'Adaptive KL' }).click();
  await expect(page.getByLabel('KL controller')).toHaveValue('adaptive');
  await page.getByRole('button', { name: 'Tight vs loose clipping' }).click();
  await expect(page.getByLabel('Clip ε', { exact: true })).toHaveValue('0.05');
  await expect(page).toHaveURL(/clipLow=0\.05/);
});

// Its S key steps the trainer: the page warms it up as a visitor’s does.
test.describe(() => {
  test.use({ warmUp: true });
  test('keyboard shortcuts act on the page but not while typing in a field', async ({ page }) => {
    const seed = page.getByLabel('Seed', { exact: true });
    await seed.fill('');
    await seed.pressSequentially('12');
    await seed.press('s');
    await seed.press('r');
    await seed.press(' ');
    await expect(page.getByTestId('notice')).toHaveCount(0);
    await expect(seed).toHaveValue('12sr ');
    await seed.fill('12');
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('s');
    // Step reached the trainer client: it either runs (trainer present) or says why it cannot.
    await expect(page.getByTestId('notice').or(page.getByTestId('run-state').filter({ hasText: /Paused|Training/ }))).toBeVisible();
  });
});
