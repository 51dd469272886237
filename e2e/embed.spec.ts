// Runs you can hand out (#34): a run file served with the page opens from a link (`?run=`),
// recorded, even without WebGPU, and once however often the link is opened; `?embed=` shows one
// teaching view or one metric's chart alone in an 800×450 frame, an iframe in a slide, with the
// recorded run's numbers or live ones. A bad value is named and the full page shown.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { fixtureTrace } from './inspectorFixture.ts';
import { readFileSync } from 'node:fs';
import { readHfRunFile } from '../src/store/hfRunFile.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { formatValue } from '../src/ui/charts/chartSummary.ts';
import { evalMessages, metricMessages, ratioMessage, SAMPLE_MESSAGE, send } from './trainerMessages.ts';

test.use({ warmUp: false });
test.describe.configure({ timeout: 120_000 });

type Hook = { pushTrace(j: unknown): void; runIds(): string[] };
const RUN = 'runs/lesson.json';

async function prepare(page: Page, { withoutWebGpu = false, file = null as string | null } = {}) {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  if (withoutWebGpu) await page.addInitScript(() => Object.defineProperty(navigator, 'gpu', { value: undefined }));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  // The site serves the file as a static host would (and nothing else under runs/).
  await page.route('**/runs/*.json', (route) =>
    file !== null && new URL(route.request().url()).pathname.endsWith(`/${RUN}`)
      ? route.fulfill({ status: 200, contentType: 'application/json', body: file })
      : route.fulfill({ status: 404, body: 'not found' }),
  );
}

/** A run recorded on a page: synthetic trainer messages, an inspected iteration, saved with ⤓. */
async function recordRun(page: Page): Promise<string> {
  await prepare(page);
  // Trained with a tight clip, not the page's default ε = 0.2.
  await page.goto('/?clipLow=0.1&clipHigh=0.1');
  await send(page, [...metricMessages(40), ...evalMessages(40, 10), ratioMessage(40), SAMPLE_MESSAGE]);
  // The inspector's hook arrives with its lazily loaded chunk.
  await page.waitForFunction(() => typeof (window.ppoPlayground as unknown as Partial<Hook> | undefined)?.runIds === 'function');
  const [runId] = await page.evaluate(() => (window.ppoPlayground as unknown as Hook).runIds());
  await page.evaluate((json) => (window.ppoPlayground as unknown as Hook).pushTrace(json), traceToJson({ ...fixtureTrace(), runId }));
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Save .* as a run file$/ }).click()]);
  const path = await download.path();
  return (await import('node:fs')).readFileSync(path!, 'utf8');
}

/** The reward chart's screen-reader summary (its raw last value and trend) and the inspector's token table. */
async function numbers(page: Page) {
  const summary = await page.getByTestId('chart-summary-reward_mean').textContent();
  await page.getByRole('tab', { name: 'Inspect' }).click();
  const table = page.locator('table.inspect-table');
  await expect(table).toBeVisible();
  return { summary, table: await table.textContent() };
}

test('?run= opens a served run file, recorded, without WebGPU; a reload shows it once, inspector included; a missing one is named', async ({ page, browser }) => {
  const file = await recordRun(page);
  const live = await numbers(page);
  expect(live.table).toMatch(/\d\.\d{3}/);

  const context = await browser.newContext({ viewport: page.viewportSize()!, serviceWorkers: 'block' });
  const other = await context.newPage();
  await prepare(other, { withoutWebGpu: true, file });
  await other.goto(`/?run=${RUN}`);
  const chip = other.getByTestId('run-list').getByRole('listitem');
  await expect(chip).toHaveCount(1);
  await expect(chip.getByTestId('recorded-badge')).toHaveText('recorded');
  await expect(other.getByTestId('notice')).toContainText(`Opened “${(JSON.parse(file) as { run: { name: string } }).run.name}” from ${RUN}`);
  expect(await numbers(other)).toEqual(live);
  // The link stays in the address bar, beside the settings the page writes there.
  expect(new URL(other.url()).searchParams.get('run')).toBe(RUN);
  await other.reload();
  await expect(chip).toHaveCount(1);
  expect(await numbers(other)).toEqual(live);

  // Without WebGPU the page is the guide until a run file opens; it names a missing one.
  await other.goto('/?run=runs/missing.json');
  await expect(other.getByTestId('no-webgpu-open-run-error')).toContainText('“runs/missing.json” not opened: the page could not load it from its own site (HTTP 404)');
  await expect(other.getByTestId('no-webgpu')).toBeVisible();
  await context.close();
  // A link to another site is a link problem, named on the page; nothing is fetched.
  await page.goto('/?run=https://elsewhere.example/run.json');
  await expect(page.getByTestId('url-problems')).toContainText('run = "https://elsewhere.example/run.json": allowed: the path of a run file served with the page');
});

/** How far the document reaches past the frame, across and down. */
const overflow = (frame: Page) =>
  frame.evaluate(() => ({ x: document.documentElement.scrollWidth - window.innerWidth, y: document.documentElement.scrollHeight - window.innerHeight }));

test('every embedded view fits an 800×450 frame, with the recorded run’s numbers', async ({ page, browser }) => {
  const file = await recordRun(page);
  const live = await numbers(page);
  const context = await browser.newContext({ viewport: { width: 800, height: 450 }, serviceWorkers: 'block' });
  const frame = await context.newPage();
  await prepare(frame, { file });
  for (const [view, title] of [
    ['clipping', 'Clipping'],
    ['kl', 'KL shaping'],
    ['samples', 'Samples'],
    ['policies', 'Three policies'],
    ['inspect', 'Inspect'],
    ['chart:reward_mean', 'Reward'],
    ['chart:clipfrac', 'Clip fraction'],
  ]) {
    await frame.goto(`/?run=${RUN}&embed=${view}`);
    const embed = frame.getByTestId('embed');
    await expect(embed).toHaveAttribute('data-embed', view);
    await expect(embed.locator('.embed-title')).toHaveText(title);
    await expect(frame.getByTestId('embed-run').locator('.recorded-badge')).toHaveText('recorded');
    // No header, settings or other views: the one view.
    await expect(frame.locator('.app-header, .sidebar, [role="tablist"][aria-label="Teaching views"]')).toHaveCount(0);
    expect(await overflow(frame), view).toEqual({ x: 0, y: 0 });
    if (view.startsWith('chart:')) {
      const fig = frame.getByTestId(`chart-${view.slice(6)}`);
      await expect(fig.locator('path.recharts-line-curve')).toHaveCount(1);
      const box = (await fig.boundingBox())!;
      expect(box.y + box.height, view).toBeLessThanOrEqual(450);
      expect(box.height, view).toBeGreaterThan(300); // the plot takes the frame
    } else {
      // The frame's width, never wider; what is below its height scrolls inside it, by keyboard too.
      const body = frame.getByTestId('embed-body');
      expect(await body.evaluate((el) => el.scrollWidth - el.clientWidth), view).toBeLessThanOrEqual(0);
      await expect(body).toHaveAttribute('tabindex', '0');
      if (view === 'clipping') {
        // The frame takes the recorded run's settings: no "what if" against settings it does not show.
        await expect(body).toContainText('A > 0');
        await expect(body.getByText(/what if/)).toHaveCount(0);
        // The view's point, its two objective plots with the ratios, is above the fold.
        const plots = body.locator('svg');
        for (const i of [0, 1]) {
          const box = (await plots.nth(i).boundingBox())!;
          expect(box.y + box.height, `clipping plot ${i}`).toBeLessThanOrEqual(450);
        }
      }
    }
    await frame.screenshot({ path: test.info().outputPath(`embed-${view.replace(':', '-')}-800x450.png`) });
  }
  // The recorded numbers, as the full page showed them live.
  await frame.goto(`/?run=${RUN}&embed=chart:reward_mean`);
  await expect(frame.getByTestId('chart-summary-reward_mean')).toHaveText(live.summary!);
  await frame.goto(`/?run=${RUN}&embed=inspect`);
  await expect(frame.locator('table.inspect-table')).toHaveText(live.table!);
  // The way out: the full page on the same run, without ?embed=.
  const full = new URL((await frame.getByTestId('embed-full-page').getAttribute('href'))!, frame.url());
  expect(full.searchParams.get('run')).toBe(RUN);
  expect(full.searchParams.has('embed')).toBe(false);
  // In Chinese.
  await frame.goto(`/?run=${RUN}&embed=kl&lang=zh-CN`);
  await expect(frame.getByTestId('embed').locator('.embed-title')).toHaveText('KL 奖励塑形');
  await expect(frame.getByTestId('embed-run').locator('.recorded-badge')).toHaveText('已记录');
  // A run of a model of your own: a chart's frame draws the file's rows, named as the model's recorded
  // run, its last value the file's, with no Start (the settings panel does not train it).
  const ownRows = readHfRunFile(readFileSync('public/runs/presets/own-model-grpo.json', 'utf8')).rows;
  await frame.goto('/?run=runs/presets/own-model-grpo.json&embed=chart:reward_mean');
  await expect(frame.getByTestId('embed-run')).toHaveText('Your own model (chat-arithmetic)recorded', { timeout: 30_000 });
  await expect(frame.getByTestId('chart-summary-reward_mean')).toContainText(
    `Your own model (chat-arithmetic) last ${formatValue(ownRows.at(-1)!.reward_mean)} at iteration ${ownRows.length}`,
  );
  await expect(frame.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(1);
  await expect(frame.getByTestId('embed-notice')).toHaveCount(0);
  await expect(frame.getByTestId('embed').getByRole('button', { name: /Start/ })).toHaveCount(0);
  const chartAudit = await new AxeBuilder({ page: frame }).include('[data-testid="embed"]').withTags(['wcag2a', 'wcag2aa']).analyze();
  expect(chartAudit.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  await frame.screenshot({ path: test.info().outputPath('embed-own-model-chart.png') });
  // a chart its rows do not carry (GRPO trains no critic: no value loss) says which they do and where the full page shows it
  await frame.goto('/?run=runs/presets/own-model-grpo.json&embed=chart:value_loss');
  await expect(frame.getByTestId('embed-notice')).toContainText('own-model-grpo.json is a run of a model of your own', { timeout: 30_000 });
  await expect(frame.getByTestId('embed-notice')).toContainText('its charts are reward, policy loss, value loss (with a critic)');
  await expect(frame.getByTestId('embed-notice')).toContainText('“1 · SFT” → “Your own model”');
  // The inspector shows its last iteration, which the file keeps, with the model's tokens.
  await frame.goto('/?run=runs/presets/own-model-grpo.json&embed=inspect');
  await expect(frame.locator('#inspect-iteration option:checked')).toHaveText('own-model-grpo.json, recorded (chat-arithmetic) · iteration 120', { timeout: 30_000 });
  await expect(frame.locator('table.inspect-table tbody tr[data-t]').first()).toBeVisible();
  await expect(frame.getByTestId('embed-notice')).toHaveCount(0);
  const audit = await new AxeBuilder({ page: frame }).include('[data-testid="embed"]').withTags(['wcag2a', 'wcag2aa']).analyze();
  expect(audit.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  await frame.screenshot({ path: test.info().outputPath('embed-own-model-inspect.png') });
  // The other teaching views show it too: the Samples view its rows in the model's BPE tokens, named
  // as the own model's recorded run, with no Start (the settings panel does not train it).
  await frame.goto('/?run=runs/presets/own-model-grpo.json&embed=samples');
  await expect(frame.getByTestId('view-samples')).toContainText('iteration 120', { timeout: 30_000 });
  await expect(frame.getByTestId('embed-run')).toHaveText('Your own model (chat-arithmetic)recorded');
  await expect(frame.getByTestId('view-samples').locator('.sample-prompt').first()).toContainText('Answer with the number.');
  await expect(frame.getByTestId('embed-notice')).toHaveCount(0);
  await expect(frame.getByTestId('embed').getByRole('button', { name: /Start/ })).toHaveCount(0);
  await frame.screenshot({ path: test.info().outputPath('embed-own-model-samples.png') });
  await context.close();
});

test('in an iframe, a live embedded chart follows the trainer; a bad ?embed= shows the full page and names it', async ({ page }) => {
  await prepare(page);
  await page.goto('/?embed=nope');
  await expect(page.getByTestId('url-problems')).toContainText('embed = "nope": allowed: clipping, kl, samples, policies, inspect, chart:<metric> (e.g. chart:reward_mean)');
  await expect(page.getByTestId('playground')).toBeVisible();

  // A slide: a frame of 800×450 on another document, the page in it.
  await page.setContent('<h1>Lecture 7</h1><iframe id="slide" src="about:blank" width="800" height="450" style="border:0"></iframe>');
  const url = new URL('/?embed=chart:reward_mean', test.info().project.use.baseURL!).toString();
  await page.locator('#slide').evaluate((el, src) => ((el as HTMLIFrameElement).src = src), url);
  const slide = page.frameLocator('#slide');
  await expect(slide.getByTestId('embed')).toHaveAttribute('data-embed', 'chart:reward_mean');
  await expect(slide.getByRole('button', { name: 'Start' })).toBeVisible();
  // The test hooks are on in the frame too (an init script runs in every frame).
  const frame = page.frames().find((f) => f.url().includes('embed='))!;
  await frame.waitForFunction(() => typeof window.ppoPlayground?.receive === 'function');
  await frame.evaluate((msgs) => {
    for (const m of msgs) window.ppoPlayground!.receive(m);
  }, metricMessages(30));
  await expect(slide.getByTestId('chart-reward_mean').locator('path.recharts-line-curve')).toHaveCount(1);
  await expect(slide.getByTestId('chart-summary-reward_mean')).toContainText('at iteration 29');
  const size = await frame.evaluate(() => ({ w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight }));
  expect(size).toEqual({ w: 800, h: 450 });
});
