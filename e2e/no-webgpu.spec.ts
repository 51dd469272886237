import { chromium, expect, test, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../src/node/chromium.ts';

async function expectGuide(page: Page) {
  const guide = page.getByTestId('no-webgpu');
  await expect(guide).toBeVisible({ timeout: 45_000 });
  await expect(guide).toContainText('chrome://flags/#enable-unsafe-webgpu');
  await expect(guide).toContainText('chrome://gpu');
  await expect(guide).toContainText('graphics acceleration');
  await expect(page.getByTestId('no-webgpu-reason')).not.toBeEmpty();
  await expect(page.getByTestId('playground')).toHaveCount(0);
  // Chromium's steps come first, named as the student's browser; Firefox's and Safari's wait in a
  // closed disclosure that opens from the keyboard.
  const guidance = page.getByTestId('browser-guidance');
  await expect(guidance).toHaveAttribute('data-browser', 'chromium');
  const sections = guidance.locator('section.browser-guide');
  await expect(sections.first()).toHaveAttribute('data-testid', 'guide-chromium');
  await expect(page.getByRole('heading', { name: 'Your browser: Chrome, Edge and other Chromium browsers' })).toBeVisible();
  await expect(page.getByTestId('guide-firefox')).toBeHidden();
  await expect(page.getByTestId('guide-safari')).toBeHidden();
  const other = guidance.locator('details.other-browsers > summary');
  await other.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('guide-firefox')).toContainText('dom.webgpu.enabled');
  await expect(page.getByTestId('guide-firefox')).toContainText('141');
  await expect(page.getByTestId('guide-safari')).toContainText('Safari 26');
  await expect(page.getByTestId('guide-safari')).toContainText('Feature Flags');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('guide-firefox')).toBeHidden();
}

test('with navigator.gpu removed the page explains how to enable WebGPU and offers the CPU backend', async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });
  });
  await page.goto('/');
  await expectGuide(page);
  await expect(page.getByRole('heading', { name: 'This browser does not offer WebGPU' })).toBeVisible();
  const cpu = page.getByRole('button', { name: 'Run the small preset on the CPU reference backend (slow)' });
  await expect(cpu).toBeVisible();
  await cpu.click();
  await expect(page.getByTestId('playground')).toBeVisible();
  await expect(page.getByTestId('gpu-status')).toContainText('CPU reference backend');
  // The fallback trains the small preset, and the link says so.
  await expect(page.getByLabel('Model width')).toHaveValue('32');
  await expect(page).toHaveURL(/dModel=32/);
});

test('a browser launched without --enable-unsafe-webgpu gets the guide, not a blank page', async ({ baseURL }) => {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS.filter((a) => a !== '--enable-unsafe-webgpu'),
    headless: true,
  });
  try {
    const page = await browser.newPage();
    await page.goto(baseURL!);
    await expectGuide(page);
  } finally {
    await browser.close();
  }
});
