// "Check yourself" on an inspected iteration (#34): each question is answered as a student would,
// by hand from the numbers it shows, and judged right; a slip is judged wrong and the right number
// and the worked formula are shown; the clip question's sides follow from ρ, Â and ε read off the
// page. In English and Chinese, with no serious or critical axe violation.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, skipWarmUp as skipWarmUpIn, test } from './fixtures.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import type { CapturedTrace } from '../src/store/inspection.ts';
import { fixtureTrace } from './inspectorFixture.ts';
import { metricMessages, send } from './trainerMessages.ts';
import { readFileSync } from 'node:fs';

test.use({ warmUp: false });
test.describe.configure({ timeout: 150_000 });

async function openQuestions(page: Page, captured: CapturedTrace, lang = 'en') {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`/?lang=${lang}`);
  await page.getByRole('tab', { name: lang === 'en' ? 'Inspect' : '检查器' }).click();
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(captured));
  await page.getByTestId('check-toggle').click();
  await expect(page.getByTestId('check-yourself')).toBeVisible();
}

/** The numbers a question shows, by symbol. */
async function givens(page: Page): Promise<Map<string, number>> {
  const raw = await page.getByTestId('check-given').getAttribute('data-given');
  return new Map(JSON.parse(raw!) as [string, number][]);
}

/** Each question answered by hand from what it shows; right, then one answer off by 0.05 is wrong. */
async function answerEveryNumberQuestion(page: Page, words: { right: string; wrong: string; next: string }) {
  const kinds: string[] = [];
  for (;;) {
    const q = page.getByTestId('check-question');
    const kind = (await q.getAttribute('data-kind'))!;
    kinds.push(kind);
    if (kind !== 'clip') {
      const g = await givens(page);
      const by = (prefix: string) => [...g].find(([k]) => k.startsWith(prefix))![1];
      let hand: number;
      if (kind === 'gae') hand = by('\\delta') + g.get('\\gamma')! * g.get('\\lambda')! * [...g].filter(([k]) => k.startsWith('A_'))[0][1];
      else if (kind === 'kl') hand = -g.get('\\beta')! * (by('\\log\\pi_{\\text{old}}') - by('\\log\\pi_{\\text{ref}}'));
      else if (kind === 'whiten') hand = (by('A_') - g.get('\\mu')!) / Math.sqrt(g.get('\\sigma')! ** 2 + 1e-8);
      else {
        const scores = [...g.values()];
        const own = [...g].find(([k]) => k.includes('\\star'))![1];
        const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
        const std = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / (scores.length - 1));
        hand = (own - mean) / (std + 1e-9);
      }
      const input = page.getByTestId('check-input');
      await input.fill((hand + 0.05 + 0.01 * Math.abs(hand)).toFixed(4));
      await input.press('Enter');
      await expect(page.getByTestId('check-verdict')).toContainText(words.wrong);
      await expect(page.getByTestId('check-worked')).toBeVisible();
      await input.fill(hand.toFixed(4).replace('-', '\u2212'));
      await input.press('Enter');
      await expect(page.getByTestId('check-verdict'), `${kind}: ${hand}`).toContainText(words.right);
    }
    const next = page.getByTestId('check-yourself').getByRole('button', { name: words.next, exact: true });
    if (await next.isDisabled()) break;
    await next.click();
  }
  return kinds;
}

test('every question of a GAE iteration is judged right when worked out by hand, and wrong after a slip', async ({ page }) => {
  await openQuestions(page, fixtureTrace());
  await expect(page.getByTestId('check-yourself')).toContainText('within ±(0.005 + 0.5 % of the answer)');
  // A typo is named, not judged.
  await page.getByTestId('check-input').fill('1,2.3');
  await page.getByTestId('check-input').press('Enter');
  await expect(page.getByRole('alert')).toContainText('“1,2.3” is not a number');
  await expect(page.getByTestId('check-verdict')).toHaveCount(0);
  const kinds = await answerEveryNumberQuestion(page, { right: 'Right: the number is', wrong: 'Not quite', next: 'Next →' });
  expect(kinds).toEqual(['gae', 'kl', 'whiten', 'clip']);

  // The clip: the sides by hand from ρ, Â and ε as the table shows them.
  const [clipLow, clipHigh, dual] = JSON.parse((await page.getByTestId('check-given').getAttribute('data-given'))!) as [number, number, number | null];
  const rows = page.getByTestId('check-clip-row');
  const n = await rows.count();
  expect(n).toBeGreaterThan(0);
  const handSides: string[] = [];
  for (let i = 0; i < n; i++) {
    const [ratio, adv] = (await rows.nth(i).locator('td.num').allTextContents()).map((x) => Number(x.replace('\u2212', '-').replace(/,/g, '')));
    const side =
      adv < 0 && dual !== null && ratio > dual ? 'dual clip' : adv > 0 && ratio > 1 + clipHigh ? 'clipped above' : adv < 0 && ratio < 1 - clipLow ? 'clipped below' : 'not clipped';
    handSides.push(side);
  }
  expect(handSides.some((s) => s !== 'not clipped')).toBe(true);
  const choose = async (sides: string[]) => {
    for (let i = 0; i < n; i++) {
      const select = rows.nth(i).getByRole('combobox');
      const label = (await select.locator('option').allTextContents()).find((o) => o.startsWith(sides[i]))!;
      await select.selectOption({ label });
    }
    await page.getByTestId('check-question').getByRole('button', { name: 'Check' }).click();
  };
  await choose(handSides.map((s) => (s === 'not clipped' ? 'clipped above' : 'not clipped')));
  await expect(page.getByTestId('check-verdict')).toContainText(`0 of ${n} right`);
  await expect(page.getByTestId('check-clip-mark').first()).toContainText('✗');
  await choose(handSides);
  await expect(page.getByTestId('check-verdict')).toHaveText(`Right: all ${n} tokens.`);
  await expect(page.getByTestId('check-score')).toHaveText('4 right of 4 answered (4 questions)');

  const axe = await new AxeBuilder({ page }).include('[data-testid="check-yourself"]').analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  await page.getByTestId('check-yourself').screenshot({ path: test.info().outputPath('check-yourself-clip.png') });
});

test('GRPO: the response’s advantage from its group’s scores, in Chinese', async ({ page }) => {
  await openQuestions(page, fixtureTrace(11, 0.3, { advantageEstimator: 'group_norm', klInReward: false, useKlLoss: true }), 'zh-CN');
  await expect(page.getByTestId('check-question')).toHaveAttribute('data-kind', 'group');
  await expect(page.getByTestId('check-question')).toContainText('所在的组得到这些分数');
  const kinds = await answerEveryNumberQuestion(page, { right: '正确：这个数是', wrong: '不对', next: '下一步 →' });
  expect(kinds).toEqual(['group', 'clip']);
  // On a phone the panel fits its width: nothing in it runs past the screen or scrolls sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  const panel = page.getByTestId('check-yourself');
  await expect
    .poll(() => panel.evaluate((el) => Math.max(el.scrollWidth - el.clientWidth, Math.ceil(el.getBoundingClientRect().right) - window.innerWidth)))
    .toBeLessThanOrEqual(0);
  await panel.screenshot({ path: test.info().outputPath('check-yourself-zh-390.png') });
});

test('a teacher saves the run with the questions on screen; a student who opens the file gets those questions', async ({ page, browser }) => {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.goto('/');
  await send(page, metricMessages(5));
  await page.getByRole('tab', { name: 'Inspect' }).click();
  await page.waitForFunction(() => typeof (window.ppoPlayground as unknown as { runIds?: unknown } | undefined)?.runIds === 'function');
  const runId = await page.evaluate(() => (window.ppoPlayground as unknown as { runIds(): string[] }).runIds()[0]);
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson({ ...fixtureTrace(), runId }));
  await page.getByTestId('check-toggle').click();
  // Two draws on, the teacher settles on the set on screen.
  const panel = page.getByTestId('check-yourself');
  for (let i = 0; i < 2; i++) await panel.getByRole('button', { name: 'New questions' }).click();
  const chosen = await page.getByTestId('check-given').getAttribute('data-given');
  const [download] = await Promise.all([page.waitForEvent('download'), panel.getByTestId('check-save-class').click()]);
  const text = readFileSync((await download.path())!, 'utf8');
  expect((JSON.parse(text) as { questions: unknown }).questions).toEqual([{ iter: fixtureTrace().trace.iter, draw: 2 }]);
  await expect(page.getByTestId('check-class')).toHaveCount(0); // the teacher is not told their own choice is the teacher's

  const context = await browser.newContext({ viewport: page.viewportSize()!, serviceWorkers: 'block' });
  await skipWarmUpIn(context);
  const student = await context.newPage();
  await student.goto('/');
  try {
    await student.getByTestId('open-run-input').setInputFiles({ name: 'lesson.json', mimeType: 'application/json', buffer: Buffer.from(text) });
    await expect(student.getByTestId('notice')).toContainText('Opened');
    await student.getByRole('tab', { name: 'Inspect' }).click();
    // Waited for by an expectation (not the click's own wait), so a failure reaches the catch below.
    await expect(student.getByTestId('check-toggle')).toBeVisible();
    await student.getByTestId('check-toggle').click();
    await expect(student.getByTestId('check-class')).toHaveText('Your teacher chose these questions for this iteration.');
    await expect(student.getByTestId('check-given')).toHaveAttribute('data-given', chosen!);
    // Other questions are a click away; the teacher's set is named only while it is on screen.
    await student.getByTestId('check-yourself').getByRole('button', { name: 'New questions' }).click();
    await expect(student.getByTestId('check-class')).toHaveCount(0);
  } catch (e) {
    // Playwright keeps the first page's snapshot only: what the student saw is kept beside it.
    await student.screenshot({ path: test.info().outputPath('student-on-failure.png'), fullPage: true }).catch(() => undefined);
    throw e;
  } finally {
    await context.close();
  }
});
