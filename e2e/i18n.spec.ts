// The page in Simplified Chinese: every visible text node and every shown attribute of the main
// page, each teaching view, the inspector, the tour, a chart's help and an inline error is checked
// for English left untranslated (kept terms of src/i18n/glossary.zh-CN.json, identifiers, numbers
// and content marked translate="no" — model samples, tokens, code — aside). The choice of language
// survives the switch, a reload and a shared link; <html lang> follows; nothing overflows.
import type { Page } from '@playwright/test';
import { expect, skipWarmUp, test } from './fixtures.ts';
import { englishLeftIn } from '../tests/helpers/i18nText.ts';
import { fixtureTrace } from './inspectorFixture.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { evalMessages, metricMessages, ratioMessage, SAMPLE_MESSAGE, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.describe.configure({ timeout: 180_000 });

async function open(page: Page, query = '?lang=zh-CN') {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`/${query}`);
  await expect(page.locator('[data-testid="gpu-status"].ok')).toBeVisible({ timeout: 45_000 });
  await expect(page.getByTestId('chart-reward_mean')).toBeVisible();
}

/** Visible text and shown attributes, outside content that is not the page's own words. */
async function shownTexts(page: Page): Promise<{ text: string; where: string }[]> {
  return page.evaluate(() => {
    const SKIP = 'script, style, noscript, code, pre, kbd, samp, textarea, [translate="no"], .visually-hidden-math, .katex-mathml';
    const visible = (el: Element) => {
      if (el.closest(SKIP)) return false;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') return false;
      // Screen-reader-only text is read aloud: it counts even at 1 px.
      return el.getClientRects().length > 0 || el.closest('.visually-hidden') !== null;
    };
    const where = (el: Element) => {
      const parts: string[] = [];
      for (let e: Element | null = el; e && parts.length < 4; e = e.parentElement) {
        parts.unshift(e.tagName.toLowerCase() + (e.getAttribute('data-testid') ? `[data-testid=${e.getAttribute('data-testid')}]` : e.classList[0] ? `.${e.classList[0]}` : ''));
      }
      return parts.join(' > ');
    };
    const out: { text: string; where: string }[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent?.trim() ?? '';
      if (el && text && visible(el)) out.push({ text, where: where(el) });
    }
    for (const el of document.querySelectorAll('[aria-label], [title], [placeholder], [alt], [aria-description], [aria-roledescription], [aria-valuetext]')) {
      if (!visible(el) && !el.closest('[role="img"], svg')) continue;
      if (el.closest(SKIP)) continue;
      for (const a of ['aria-label', 'title', 'placeholder', 'alt', 'aria-description', 'aria-roledescription', 'aria-valuetext']) {
        const v = el.getAttribute(a)?.trim();
        if (v) out.push({ text: v, where: `${where(el)} @${a}` });
      }
    }
    out.push({ text: document.title, where: 'title' });
    return out;
  });
}

async function expectAllChinese(page: Page, view: string) {
  const english = (await shownTexts(page)).flatMap(({ text, where }) => {
    const words = englishLeftIn(text);
    return words.length > 0 ? [`${where}: ${JSON.stringify(text.slice(0, 100))} (${words.join(', ')})`] : [];
  });
  expect(english, `English left in the ${view}`).toEqual([]);
}

/** No element wider than the viewport, no text cut by its own box (scrollWidth past clientWidth). */
async function expectNothingOverflows(page: Page, view: string) {
  // Charts follow a resize a few frames late (ResizeObserver): asked again until the layout settles.
  await expect.poll(() => overflows(page), { message: `overflow in the ${view}`, timeout: 5_000 }).toEqual([]);
}

async function overflows(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw + 1) out.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${vw}`);
    for (const el of document.querySelectorAll<HTMLElement>('button, .btn, .tab, label, h1, h2, h3, summary, .preset-card, .field, th')) {
      const s = getComputedStyle(el);
      if (s.display === 'none' || el.getClientRects().length === 0 || el.closest('[translate="no"]')) continue;
      if (s.overflowX === 'visible' && el.scrollWidth > el.clientWidth + 2 && s.whiteSpace === 'nowrap')
        out.push(`${el.tagName.toLowerCase()}.${el.className}: "${el.textContent?.trim().slice(0, 40)}" is ${el.scrollWidth} px in ${el.clientWidth}`);
      if ((s.overflowX === 'hidden' || s.overflowX === 'clip') && s.textOverflow !== 'ellipsis' && el.scrollWidth > el.clientWidth + 2)
        out.push(`${el.tagName.toLowerCase()}.${el.className}: "${el.textContent?.trim().slice(0, 40)}" is cut (${el.scrollWidth} px in ${el.clientWidth})`);
    }
    return out;
  });
}

/** The two screens the page must fit in both languages: a laptop and a classroom projector. */
const DESKTOPS = [
  { width: 1366, height: 900 },
  { width: 1280, height: 720 },
] as const;

/** The six teaching views' tabs; the views load lazily, so callers wait for them with toHaveCount. */
const TEACHING_TAB_COUNT = 6;
const teachingTabs = (page: Page) => page.getByRole('tablist').first().getByRole('tab');

test('?lang=zh-CN: the main page and every teaching view are in Chinese, with nothing overflowing', async ({ page }) => {
  await page.setViewportSize({ width: 1366, height: 900 });
  await open(page);
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await send(page, [...metricMessages(30), ...evalMessages(30, 10), ratioMessage(30), SAMPLE_MESSAGE]);
  await expectAllChinese(page, 'main page');
  for (const size of DESKTOPS) {
    await page.setViewportSize(size);
    await expectNothingOverflows(page, `main page at ${size.width}×${size.height}`);
  }
  const tabs = teachingTabs(page);
  await expect(tabs).toHaveCount(TEACHING_TAB_COUNT);
  const n = TEACHING_TAB_COUNT;
  for (let i = 0; i < n; i++) {
    const tab = tabs.nth(i);
    await tab.click();
    await expect(tab).toHaveAttribute('aria-selected', 'true');
    await page.waitForTimeout(300);
    const name = (await tab.textContent()) ?? `tab ${i}`;
    await expectAllChinese(page, `teaching view “${name}”`);
    for (const size of DESKTOPS) {
      await page.setViewportSize(size);
      await expectNothingOverflows(page, `teaching view “${name}” at ${size.width}×${size.height}`);
    }
  }
});

test('English too: nothing overflows on the main page or in a teaching view at 1366×900 and 1280×720', async ({ page }) => {
  await open(page, '?lang=en');
  await send(page, [...metricMessages(30), ...evalMessages(30, 10), ratioMessage(30), SAMPLE_MESSAGE]);
  const tabs = teachingTabs(page);
  await expect(tabs).toHaveCount(TEACHING_TAB_COUNT);
  for (const size of DESKTOPS) {
    await page.setViewportSize(size);
    await expectNothingOverflows(page, `English main page at ${size.width}×${size.height}`);
    for (let i = 0; i < (await tabs.count()); i++) {
      await tabs.nth(i).click();
      await expect(tabs.nth(i)).toHaveAttribute('aria-selected', 'true');
      await expectNothingOverflows(page, `English teaching view ${i + 1} at ${size.width}×${size.height}`);
    }
  }
});

test('the inspector, a chart’s help and an inline error read in Chinese', async ({ page }) => {
  await open(page);
  // The inspector on a captured iteration (the same fixture as e2e/inspector.spec.ts).
  await page.locator('#tab-inspect').click();
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(fixtureTrace()));
  await expect(page.locator('table.inspect-table')).toBeVisible();
  await expectAllChinese(page, 'inspector');
  // An inline error: a clip ε below its range names the field and the range, in Chinese.
  const clip = page.locator('input[name="clipLow"]');
  await clip.fill('-1');
  const error = page.locator('.field', { has: clip }).getByRole('alert');
  await expect(error).toBeVisible();
  // Named by the field's own (Chinese) label, with the allowed range.
  const label = (await page.locator(`label[for="${await clip.getAttribute('id')}"]`).textContent())?.trim();
  expect(label).toMatch(/[\u4e00-\u9fff]/);
  await expect(error).toContainText(label!);
  await expect(error).toContainText(/0.*不含.*1.*不含/);
  expect(englishLeftIn((await error.textContent()) ?? '')).toEqual([]);
  await expectAllChinese(page, 'settings with an inline error');
  // A chart's help, opened.
  await page.getByTestId('chart-reward_mean').getByRole('button').first().click();
  await expectAllChinese(page, 'chart help');
});

test('the tour reads in Chinese at every step', async ({ page }) => {
  await open(page);
  await page.getByTestId('tour-button').click();
  const popover = page.getByTestId('tour-popover');
  for (let step = 0; step < 30; step++) {
    await expect(popover).toBeVisible({ timeout: 60_000 });
    await expect(popover).toHaveAttribute('data-settled', /.+/, { timeout: 90_000 });
    await expectAllChinese(page, `tour step ${step + 1}`);
    const settled = await popover.getAttribute('data-settled');
    await page.keyboard.press('ArrowRight');
    const next = await Promise.race([
      expect(popover)
        .not.toHaveAttribute('data-settled', settled!, { timeout: 90_000 })
        .then(() => 'moved'),
      expect(popover)
        .toBeHidden({ timeout: 90_000 })
        .then(() => 'done'),
    ]).catch(() => 'stuck');
    if (next === 'done') return;
    expect(next).toBe('moved');
  }
  throw new Error('the tour did not end within 30 steps');
});

test('the switch, a reload and a shared link keep the language', async ({ page, context }) => {
  await open(page, '');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  const heading = page.getByRole('heading', { level: 2 }).first();
  const english = await heading.textContent();
  await page.getByTestId('language-switch').selectOption('zh-CN');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(heading).not.toHaveText(english!);
  await expect(page).toHaveURL(/[?&]lang=zh-CN(&|$)/);
  const chinese = await heading.textContent();
  // A reload keeps it (the saved choice), and so does the link in another browser profile.
  await page.reload();
  await expect(page.locator('[data-testid="gpu-status"].ok')).toBeVisible({ timeout: 45_000 });
  await expect(heading).toHaveText(chinese!);
  const link = page.url();
  const other = await context.browser()!.newContext({ locale: 'en-US' });
  await skipWarmUp(other);
  const visitor = await other.newPage();
  await visitor.goto(link);
  await expect(visitor.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(visitor.getByRole('heading', { level: 2 }).first()).toHaveText(chinese!);
  await other.close();
  // And back to English, by the switch.
  await page.getByTestId('language-switch').selectOption('en');
  await expect(heading).toHaveText(english!);
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
});

test('a browser that prefers Chinese gets Chinese without ?lang=', async ({ browser }) => {
  const context = await browser.newContext({ locale: 'zh-CN' });
  await skipWarmUp(context);
  const page = await context.newPage();
  await page.goto('/');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN', { timeout: 45_000 });
  await expect(page.getByTestId('language-switch')).toHaveValue('zh-CN');
  await context.close();
});
