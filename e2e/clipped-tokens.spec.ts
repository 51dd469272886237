// A clipped token is one click away: after a real iteration the clipping view lists its clipped
// tokens, and one of them opens the Inspect tab on that response with the token selected and its
// clip badge in view beside the fixed token column. The actions a student takes from the clipping
// view are counted (at most 3). In the inspector each response shows its clipped tokens by side,
// "next clipped token" visits them and the table can show only them.
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { clipCountsByRow, clippedCells, defaultToken, nextClipped, recomputeTrace } from '../src/rl/inspect/index.ts';
import { traceToJson } from '../src/store/traceJson.ts';
import { fixtureTrace } from './inspectorFixture.ts';

test.describe.configure({ timeout: 300_000 });

// A tight clip and a fast learning rate: from the second epoch on most tokens clip.
const CLIPPY = '?promptsPerBatch=2&samplesPerPrompt=4&maxResponseLength=4&ppoEpochs=3&miniBatches=1&clipLow=0.001&clipHigh=0.001&actorLr=0.003';

/** Whether `inner`'s box lies inside the visible part of `box` (both on screen). */
async function visibleWithin(inner: Locator, box: Locator): Promise<boolean> {
  const [a, b] = [await inner.boundingBox(), await box.boundingBox()];
  if (!a || !b) return false;
  const view = inner.page().viewportSize()!;
  return a.x >= b.x - 1 && a.x + a.width <= b.x + b.width + 1 && a.y >= Math.max(0, b.y) - 1 && a.y + a.height <= Math.min(view.height, b.y + b.height) + 1;
}

test('from the clipping view to a clipped token in the inspector, counted in actions', async ({ page }) => {
  await page.goto(`/${CLIPPY}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 45_000 });
  // The clipping view is the tab the page opens on; one iteration trains with it open.
  await expect(page.getByRole('tab', { name: 'Clipping' })).toHaveAttribute('aria-selected', 'true');
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  const links = page.locator('[data-testid^="clip-links-"]');
  await expect(links.first()).toBeVisible({ timeout: 90_000 });

  let actions = 0;
  // Each action by keyboard (focus, Enter): the charts above still grow as the step's last messages
  // arrive, and a click at a position read a frame earlier could land beside the link.
  const act = async (l: Locator) => {
    actions++;
    await l.focus();
    await page.keyboard.press('Enter');
  };
  const link = links.first().locator('button.clip-link').first();
  const label = (await link.getAttribute('aria-label')) ?? '';
  const [, n, t] = /response (\d+), token (\d+)/.exec(label) ?? [];
  expect(n, label).toBeDefined();
  await act(link);

  await expect(page.getByRole('tab', { name: 'Inspect' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByRole('listbox').getByRole('option', { selected: true }).locator('.resp-n')).toHaveText(n);
  const row = page.locator(`table.inspect-table tbody tr[data-t="${t}"]`);
  await expect(row).toHaveClass(/selected/);
  const wrap = page.locator('.inspect-table-wrap');
  // Its clip badge in some update step is on screen inside the table's box, the token column beside it.
  const badges = row.locator('[data-col="clip"] .clip-badge:not(.clip-none)');
  await expect(badges.first()).toBeVisible();
  await expect
    .poll(async () => {
      for (const b of await badges.all()) if (await visibleWithin(b, wrap)) return true;
      return false;
    })
    .toBe(true);
  expect(await visibleWithin(row.locator('th.sticky-col'), wrap)).toBe(true);
  expect(actions).toBeLessThanOrEqual(3);
});

async function openFixture(page: Page) {
  await page.addInitScript(() => localStorage.setItem('ppo-test-hooks', '1'));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  await page.getByRole('tab', { name: 'Inspect' }).click();
  await expect(page.getByText('No iteration captured yet.')).toBeVisible();
  await page.evaluate((json) => (window.ppoPlayground as unknown as { pushTrace(j: unknown): void }).pushTrace(json), traceToJson(captured));
  await expect(page.locator('table.inspect-table')).toBeVisible();
}

const captured = fixtureTrace(11, 0.3);
const cells = clippedCells(recomputeTrace(captured.trace));

// On a fixture trace, it never trains: its page skips the trainer warm-up (fixtures.ts).
test.describe(() => {
  test.use({ warmUp: false });
  test('each response shows its clipped tokens by side; "next clipped token" visits them in order; the table shows only them', async ({ page }) => {
    await openFixture(page);
    const counts = clipCountsByRow(cells, captured.trace.B);
    expect(cells.length).toBeGreaterThan(2);
    const options = page.getByRole('listbox').getByRole('option');
    for (let b = 0; b < captured.trace.B; b++) {
      const c = counts[b];
      const opt = options.nth(b);
      if (c.low) await expect(opt.locator('.clip-badge.clip-low')).toHaveText(`${c.low} low`);
      if (c.high) await expect(opt.locator('.clip-badge.clip-high')).toHaveText(`${c.high} high`);
      if (c.low + c.high + c.dual === 0) await expect(opt).toContainText('none clipped');
    }
    // "Next" from the first response's last action token (selected on opening), three times: the clipped tokens in order.
    let at = { row: 0, t: defaultToken(captured.trace, 0) };
    const list = page.getByRole('listbox');
    for (let i = 0; i < 3; i++) {
      await page.getByTestId('next-clipped').click();
      const want = nextClipped(cells, at)!.cell;
      await expect(list.getByRole('option', { selected: true }).locator('.resp-n')).toHaveText(String(want.row + 1));
      await expect(page.locator(`table.inspect-table tbody tr[data-t="${want.t}"]`)).toHaveClass(/selected/);
      at = { row: want.row, t: want.t };
    }
    // Only clipped tokens: the rows left are exactly this response's clipped positions.
    await page.getByLabel('Only clipped tokens').check();
    const row = Number(((await list.getByRole('option', { selected: true }).locator('.resp-n').textContent()) ?? '1').trim()) - 1;
    const want = [...new Set(cells.filter((c) => c.row === row).map((c) => c.t))].sort((a, b) => a - b);
    await expect(page.locator('table.inspect-table tbody tr[data-t]')).toHaveCount(want.length);
    expect(await page.locator('table.inspect-table tbody tr[data-t]').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-t'))))).toEqual(want);
    // Scrolled sideways, the token column stays where it was.
    const wrap = page.locator('.inspect-table-wrap');
    const sticky = page.locator('table.inspect-table tbody tr[data-t] th.sticky-col').first();
    const before = await sticky.boundingBox();
    await wrap.evaluate((el) => {
      el.scrollLeft = el.scrollWidth;
    });
    expect(await wrap.evaluate((el) => el.scrollLeft)).toBeGreaterThan(500);
    expect((await sticky.boundingBox())!.x).toBeCloseTo(before!.x, 0);
    expect(await visibleWithin(page.locator('table.inspect-table thead th.sticky-col'), wrap)).toBe(true);
  });
});
