// The page on a tablet (iPad, 820×1180) and a phone (390×844): nothing reaches past the screen's
// right edge (idle, and with each teaching view open), Start and the first experiment are on the
// first screen or two, the charts come before the settings and stack one per row, plot labels stay
// at least 10 px, and the teaching tabs scroll within their strip. Screenshot baselines of the
// first screen at both sizes, stabilised as in visual.spec.ts (fixed viewport, reduced motion,
// the GPU badge masked). Regenerate with
// `npx playwright test e2e/mobile.spec.ts --update-snapshots` after an intended layout change.
import { expect, type Page, test } from '@playwright/test';
import { ratioMessage, SAMPLE_MESSAGE, send } from './trainerMessages.ts';

const SIZES = [
  { name: 'tablet', width: 820, height: 1180 },
  { name: 'phone', width: 390, height: 844 },
] as const;

async function openPage(page: Page) {
  await page.goto('/');
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  await expect(page.locator('section.charts')).toBeVisible();
  await expect(page.locator('section.teaching')).toBeVisible();
  await page.evaluate(() => document.fonts.ready);
}

/** The page's scroll width, and every visible element whose right edge (clipped by its scrolling ancestors) passes the screen's. */
function overflow(page: Page) {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const past: string[] = [];
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      let right = box.right;
      for (let a = el.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') right = Math.min(right, a.getBoundingClientRect().right);
      }
      if (right > width + 0.5) past.push(`${el.tagName.toLowerCase()}.${String((el as HTMLElement).className)} right=${Math.round(right)}`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, width, past: past.slice(0, 10) };
  });
}

async function expectNoSidewaysOverflow(page: Page) {
  const o = await overflow(page);
  expect(o.past, 'elements past the right edge').toEqual([]);
  expect(o.scrollWidth).toBeLessThanOrEqual(o.width);
}

// One page per size, shared by its five tests in the order below: every page load compiles the
// trainer's kernels and evaluates the SFT model on SwiftShader (docs/testing.md), and none of
// these tests needs a page of its own. The first
// two read the untouched first screen (the screenshot, then positions before anything scrolls);
// the last two feed trainer messages and open the teaching views. A failed test restarts the
// worker, and the tests after it get a fresh page.
for (const size of SIZES) {
  test.describe(`${size.name} ${size.width}×${size.height}`, () => {
    let page: Page;
    test.beforeAll(async ({ browser }, testInfo) => {
      const context = await browser.newContext({
        baseURL: testInfo.project.use.baseURL,
        viewport: { width: size.width, height: size.height },
        deviceScaleFactor: 1,
        colorScheme: 'light',
        reducedMotion: 'reduce',
      });
      page = await context.newPage();
      await openPage(page);
    });
    test.afterAll(async () => {
      await page?.context().close();
    });

    test('first screen screenshot', async () => {
      await expect(page).toHaveScreenshot(`first-screen-${size.name}.png`, { mask: [page.getByTestId('gpu-status')] });
    });

    test('Start and the first experiment near the top; charts before settings, one per row', async () => {
      const top = async (selector: string) => {
        const box = await page.locator(selector).first().boundingBox();
        if (!box) throw new Error(`${selector} has no box`);
        return box;
      };
      const start = await top('.controls button:has-text("Start")');
      const preset = await top('.preset-card .preset-name');
      expect(start.y + start.height).toBeLessThanOrEqual(size.height);
      expect(preset.y + preset.height).toBeLessThanOrEqual(2 * size.height);
      const charts = await top('section.charts');
      const settings = await top('section.config-panel');
      const checkpoints = await top('section.checkpoints');
      expect(charts.y).toBeLessThan(settings.y);
      expect(charts.y).toBeLessThan(checkpoints.y);
      expect(charts.y).toBeLessThan(2 * size.height);
      expect((await top('section.teaching')).y).toBeLessThan(settings.y);
      // One chart per row: every chart card starts at the same x.
      const xs = await page.locator('section.charts figure.chart-card').evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().left)));
      expect(xs.length).toBeGreaterThan(3);
      expect(new Set(xs).size).toBe(1);
    });

    test('the teaching tabs scroll within their strip, no label clipped', async () => {
      const tablist = page.locator('section.teaching [role="tablist"]');
      const strip = await tablist.evaluate((el) => ({ overflowX: getComputedStyle(el).overflowX, wrap: getComputedStyle(el).flexWrap }));
      expect(strip.overflowX).toBe('auto');
      expect(strip.wrap).toBe('nowrap');
      const tabs = tablist.locator('[role="tab"]');
      for (let i = 0; i < (await tabs.count()); i++) {
        // Each label fits its button (nothing cut inside it) and can be scrolled fully into view.
        const fits = await tabs.nth(i).evaluate((el) => el.scrollWidth <= el.clientWidth);
        expect(fits).toBe(true);
        await tabs.nth(i).scrollIntoViewIfNeeded();
        const [tab, list] = await Promise.all([tabs.nth(i).boundingBox(), tablist.boundingBox()]);
        if (!tab || !list) throw new Error('no box');
        expect(tab.x).toBeGreaterThanOrEqual(list.x - 0.5);
        expect(tab.x + tab.width).toBeLessThanOrEqual(list.x + list.width + 0.5);
      }
    });

    test('no sideways overflow, idle and with every teaching view open', async () => {
      await expectNoSidewaysOverflow(page);
      await send(page, [SAMPLE_MESSAGE, ratioMessage(400)]);
      const tabs = page.locator('section.teaching [role="tab"]');
      const n = await tabs.count();
      expect(n).toBeGreaterThan(3);
      for (let i = 0; i < n; i++) {
        await tabs.nth(i).click();
        await expect(tabs.nth(i)).toHaveAttribute('aria-selected', 'true');
        await expectNoSidewaysOverflow(page);
      }
    });

    test('plot labels at least 10 px on screen', async () => {
      // The clipping view, as on a fresh page (the test before leaves the last tab open).
      await page.getByRole('tab', { name: 'Clipping' }).click();
      await send(page, [ratioMessage(400)]);
      await expect(page.getByTestId('view-clipping')).toContainText('ratios of iteration 42');
      // Rendered size = the text's font size × how much its SVG's viewBox is scaled.
      const sizes = await page.locator('section.charts svg text, section.teaching svg text').evaluateAll((els) =>
        els
          .filter((t) => t.getBoundingClientRect().height > 0)
          .map((t) => {
            const svg = (t as SVGTextElement).ownerSVGElement as SVGSVGElement;
            const vb = svg.viewBox.baseVal;
            const scale = vb && vb.width > 0 ? svg.getBoundingClientRect().width / vb.width : 1;
            return Number.parseFloat(getComputedStyle(t).fontSize) * scale;
          }),
      );
      expect(sizes.length).toBeGreaterThan(5);
      expect(Math.min(...sizes)).toBeGreaterThanOrEqual(10);
    });
  });
}
