// A new build deployed while the page is open: the service worker fetches it in the background,
// the page says "A new version of the page is ready" and reloads only when Reload is pressed — a
// running training is never interrupted by a deploy. The two builds are the built dist/ served
// from a copy, and the same copy with a changed service worker (a byte-different sw.js is what a
// browser treats as a new version; the one added line also answers which build it is).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../src/node/chromium.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
};

// A browser of its own (a worker-scoped option starts a fresh worker): closing pages that train
// while their service worker changes leaves Chromium's GPU process rasterising text a pixel apart,
// which the screenshot baselines of later specs would read as a change.
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] } });
// The config blocks service workers for the other specs (playwright.config.ts).
test.use({ serviceWorkers: 'allow' });

let root: string;
let server: Server;
let origin: string;

test.beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ppo-deploy-'));
  cpSync('dist', root, { recursive: true });
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(root, path.endsWith('/') ? `${path}index.html` : path);
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

/** Deploys "build 2": the same files, a service worker that differs by one listener. */
function deploySecondBuild() {
  const sw = join(root, 'sw.js');
  writeFileSync(sw, `${readFileSync(sw, 'utf8')}\nself.addEventListener('message', (e) => { if (e.data === 'which build?') e.source.postMessage('build 2'); });\n`);
}

/** Asks the controlling service worker which build it is ("build 2", or no answer from build 1). */
async function controllingBuild(page: Page): Promise<string> {
  return page.evaluate(
    () =>
      new Promise<string>((resolve) => {
        const sw = navigator.serviceWorker.controller;
        if (!sw) return resolve('none');
        navigator.serviceWorker.addEventListener('message', (e) => resolve(String(e.data)), { once: true });
        sw.postMessage('which build?');
        setTimeout(() => resolve('build 1'), 2_000);
      }),
  );
}

test('a new build waits for Reload, even while training, and Reload brings it in', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(`${origin}/?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  // The first visit installs build 1 and takes control only from the next load.
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  expect(await controllingBuild(page)).toBe('build 1');
  await expect(page.getByTestId('update-prompt')).toHaveCount(0);

  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  // A marker that a reload would wipe: the page must not reload by itself.
  await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }));

  deploySecondBuild();
  await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.getRegistration();
    await reg?.update();
  });
  const prompt = page.getByTestId('update-prompt');
  await expect(prompt).toContainText('A new version of the page is ready.', { timeout: 60_000 });
  await expect(prompt).toContainText('training is running, and reloading stops it');
  await page.waitForTimeout(3_000);
  expect(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage)).toBe(true);
  await expect(page.getByTestId('run-state')).toHaveText('Training');
  expect(await controllingBuild(page)).toBe('build 1');

  // Later hides it and keeps the page; Pause then Reload brings in build 2.
  await prompt.getByRole('button', { name: 'Later' }).click();
  await expect(prompt).toHaveCount(0);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');
  await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.getRegistration();
    await reg?.update();
  });
  // The waiting worker is still there: a new check shows the prompt again, now without the warning.
  await page.reload();
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(prompt).toContainText('Reload to use it; saved runs are kept.', { timeout: 60_000 });
  // Reload is pressed once the page has loaded its parts, as a person reading the notice does.
  // Requests to the old worker just after Reload can keep the new one waiting past this test's
  // minute (Chromium activates it once the old one is idle): pressed during the ~2 s of lazy chunks
  // after "load" it stayed waiting in ~1 load in 12, with 20 fetches after the press in 4 of 6, and
  // after network idle in 0 of 24.
  await page.waitForLoadState('networkidle');
  await Promise.all([page.waitForEvent('load', { timeout: 60_000 }), prompt.getByRole('button', { name: 'Reload' }).click()]);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect.poll(() => controllingBuild(page), { timeout: 30_000 }).toBe('build 2');
  await expect(page.getByTestId('update-prompt')).toHaveCount(0);
});
