// What the page accepts cannot run script or reach the network: during a whole training run every
// request (page and workers) goes to the page's own origin and the Content-Security-Policy reports
// no violation; hostile links (script tags, javascript: URLs, 10 kB values, repeated keys) and a
// hostile checkpoint file give named messages, shown as text, and a canary stays unset.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';

const SMALL = 'promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1';
const PWN = 'window.__pwned=1';

/** Collects CSP violations inside the page (and its workers' reports surface on the document). */
async function watchCsp(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}

const cspViolations = (page: Page) => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned);

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

test('a training run makes requests to its own origin only, and the CSP blocks nothing it needs', async ({ page, context, baseURL }) => {
  test.setTimeout(120_000);
  const origin = new URL(baseURL!).origin;
  const requests: string[] = [];
  // The context sees the page's requests and its workers' (checkpoint fetches happen in the worker).
  context.on('request', (r) => requests.push(r.url()));
  await watchCsp(page);
  await page.goto(`/?${SMALL}`);
  await expect(page.locator('meta[http-equiv="Content-Security-Policy"]')).toHaveAttribute('content', /connect-src 'self'/);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect.poll(() => iterations(page), { timeout: 60_000, message: 'iterations while training' }).toBeGreaterThanOrEqual(3);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(page.getByTestId('run-state')).toHaveText('Paused');

  expect(requests.length).toBeGreaterThan(3); // the page, its script, its workers, the checkpoint
  expect(requests.some((u) => u.includes('/checkpoints/'))).toBe(true);
  const foreign = requests.filter((u) => {
    const url = new URL(u);
    if (url.protocol === 'data:') return false;
    // blob: URLs carry their creator's origin: blob:http://localhost:4173/<uuid>
    if (url.protocol === 'blob:') return new URL(url.pathname).origin !== origin;
    return url.origin !== origin;
  });
  expect(foreign, `requests outside ${origin}`).toEqual([]);
  expect(await cspViolations(page), 'CSP violations during training').toEqual([]);
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
});

test('a written reward function trains under the same CSP: its sandbox loads from the page origin, nothing is blocked', async ({ page, context, baseURL }) => {
  test.setTimeout(120_000);
  const origin = new URL(baseURL!).origin;
  const requests: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  await watchCsp(page);
  await page.goto(`/?${SMALL}&task=sentiment&rewardSource=function`);
  // The page's policy is as strict as before: no eval of any kind for the page itself.
  const csp = (await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')) ?? '';
  expect(csp).toContain("script-src 'self';");
  expect(csp).not.toContain('unsafe-eval'); // nor 'wasm-unsafe-eval'
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  // The sandbox (QuickJS in WebAssembly) runs in the trainer worker: the check of the function comes back.
  await expect(page.getByTestId('reward-function-ok')).toBeVisible({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await expect.poll(() => iterations(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  expect(requests.some((u) => u.endsWith('.wasm'))).toBe(true);
  expect(requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin)).toEqual([]);
  expect(await cspViolations(page), 'CSP violations while a written reward trains').toEqual([]);
  // The page itself still cannot compile WebAssembly: only the worker, outside the page's policy, runs the sandbox.
  const pageWasm = await page.evaluate(() =>
    WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(
      () => 'compiled',
      (e: Error) => e.name,
    ),
  );
  expect(pageWasm).toBe('CompileError');
});

const HOSTILE: { query: string; names: string }[] = [
  { query: `seed=${encodeURIComponent(`<script>${PWN}</script>`)}`, names: 'seed' },
  { query: `seed=${encodeURIComponent(`"><img src=x onerror="${PWN}">`)}`, names: 'seed' },
  { query: `task=${encodeURIComponent(`javascript:${PWN}`)}`, names: 'task' },
  { query: `klCoef=${'9'.repeat(10_240)}`, names: 'klCoef' },
  { query: `dModel=${'a'.repeat(10_240)}`, names: 'dModel' },
  { query: `seed=1&seed=2&seed=${encodeURIComponent(`<svg onload=${PWN}>`)}`, names: 'seed' },
  { query: `hide=${encodeURIComponent(`<img src=x onerror=${PWN}>`)}`, names: 'hide' },
  { query: `${encodeURIComponent(`<img src=x onerror=${PWN}>`)}=1`, names: 'unknown setting' },
  { query: 'toString=1&constructor=2&__proto__=3', names: 'unknown setting' },
];

// Nothing in this block trains: its pages skip the trainer warm-up (fixtures.ts).
test.describe(() => {
  test.use({ warmUp: false });
  for (const { query, names } of HOSTILE) {
    test(`hostile link ?${query.slice(0, 50)}: a named message, shown as text, no script runs`, async ({ page }) => {
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await watchCsp(page);
      await page.goto(`/?${query}#<img src=x onerror="${PWN}">`);
      const box = page.getByTestId('url-problems');
      await expect(box).toBeVisible({ timeout: 20_000 });
      await expect(box).toContainText(names);
      // Shown as text: the markup appears literally, never as elements; long values are cut.
      expect(await page.locator('img[src="x"], svg[onload], script:not([src])').count()).toBe(0);
      expect(((await box.textContent()) ?? '').length).toBeLessThan(1_000);
      expect(await pwned(page)).toBeUndefined();
      expect(errors).toEqual([]);
      // The page still works: the rest of the link applied, the trainer is ready.
      await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
      expect(await pwned(page)).toBeUndefined();
    });
  }

  test('a hostile checkpoint file is refused with a message shown as text', async ({ page }) => {
    await page.goto(`/?${SMALL}`);
    await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
    // A well-formed safetensors file whose metadata carries markup, under a name that is markup too.
    const header = JSON.stringify({ __metadata__: { config: '{}', alphabet: `<img src=x onerror="${PWN}">`, task: `<script>${PWN}</script>`, format_version: '1' } });
    const json = new TextEncoder().encode(header.padEnd(Math.ceil(header.length / 8) * 8, ' '));
    const bytes = new Uint8Array(8 + json.length);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
    bytes.set(json, 8);
    await page.getByTestId('checkpoint-file').setInputFiles({ name: `<img src=x onerror="${PWN}">.safetensors`, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
    const notice = page.getByTestId('notice');
    await expect(notice).toContainText('not loaded');
    await expect(notice).toContainText('<img src=x');
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
  });

  test('the CSP is in force: inline script and a request to another origin are blocked', async ({ page, baseURL }) => {
    await watchCsp(page);
    await page.goto(`/?${SMALL}`);
    await expect(page.getByTestId('playground')).toBeVisible();
    const other = new URL(baseURL!);
    other.hostname = other.hostname === '127.0.0.1' ? 'localhost' : '127.0.0.1'; // the same server, another origin
    const result = await page.evaluate(async (url) => {
      const s = document.createElement('script');
      s.textContent = 'window.__inline = 1';
      document.head.append(s);
      let fetched = 'blocked';
      try {
        await fetch(url);
        fetched = 'reached';
      } catch {
        /* refused by connect-src */
      }
      return { inline: (window as unknown as { __inline?: unknown }).__inline, fetched };
    }, other.href);
    expect(result).toEqual({ inline: undefined, fetched: 'blocked' });
    await expect.poll(() => cspViolations(page)).toEqual(expect.arrayContaining([expect.stringMatching(/^script-src/), expect.stringMatching(/^connect-src/)]));
  });
});
