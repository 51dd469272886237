// The KL-shaping view on injected trainer messages: a reward-hacking batch (β = 0) drawn as a
// 16-character sentence with a penalty, score and return per token; a β changed in the settings
// adds a labelled what-if whose penalties are the reference recomputation's; a 3-token arithmetic
// answer says it is too short and loads the reward-hacking preset.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import type { SampleRow } from '../src/rl/samples.ts';
import { whatIfCells } from '../src/ui/teach/klShaping.ts';
import type { WorkerToPage } from '../src/worker/protocol.ts';
import { SAMPLE_MESSAGE, send } from './trainerMessages.ts';

// The pages skip the trainer warm-up unless a test below asks for it (fixtures.ts).
test.use({ warmUp: false });

test.describe.configure({ timeout: 120_000 });

const TEXT = 'the film was fun';
const SCORE = 0.8;
/** RLOO's baselined score: at β = 0 every return is this. */
const BASELINED = 0.5;

/** A β = 0 batch row: KL_t = log π_old − log π_ref (k1), reward only at the last token. */
function hackedRow(): SampleRow {
  const tokens = [...TEXT].map((ch, i) => {
    const oldLogprob = -0.4 - 0.05 * i;
    const refLogprob = -1.5 - 0.3 * (i % 5);
    return {
      text: ch,
      advantage: BASELINED,
      kl: oldLogprob - refLogprob,
      ratio: 1,
      value: 0,
      reward: i === TEXT.length - 1 ? SCORE : 0,
      return: BASELINED,
      oldLogprob,
      refLogprob,
    };
  });
  return { prompt: 'I thought ', response: TEXT, reward: SCORE, endedWithEos: false, tokens };
}

async function openPage(page: Page) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
}

const klTab = (page: Page) => page.getByRole('tab', { name: 'KL shaping' });

test('a sentence with per-token penalties, and a labelled what-if when β changes', async ({ page }) => {
  await openPage(page);
  await page.getByRole('button', { name: 'Reward hacking without KL' }).click();
  await expect(page.getByLabel('KL coefficient β')).toHaveValue('0');
  const row = hackedRow();
  const msgs: WorkerToPage[] = [
    { type: 'metrics', iter: 0, values: { beta: 0, reward_mean: SCORE } },
    { type: 'samples', iter: 0, rows: [row] },
  ];
  await send(page, msgs);
  await klTab(page).click();
  const actual = page.getByTestId('kl-actual');
  await expect(actual.getByTestId('kl-token')).toHaveCount(TEXT.length);
  await expect(actual).toContainText('This batch (iteration 0, β = 0)');
  // β = 0: no penalty anywhere; at the last token the score as it enters RLOO's advantage (the
  // baselined s̃ the returns carry, not the raw 0.8), so the r_t add up to the return.
  for (const i of [0, 7, 15]) await expect(actual.getByTestId('kl-token').nth(i)).toHaveAttribute('data-penalty', '0');
  await expect(actual.getByTestId('kl-score')).toHaveCount(1);
  await expect(actual.getByTestId('kl-score')).toHaveText(`+${BASELINED}`);
  await expect(page.getByTestId('kl-whatif')).toHaveCount(0);
  await expect(page.getByTestId('kl-short-hint')).toHaveCount(0);

  await page.getByLabel('KL coefficient β').fill('0.6');
  const whatIf = page.getByTestId('kl-whatif');
  await expect(whatIf).toContainText('What if β = 0.6 (your settings): recomputed here, not what this batch trained with');
  const expected = whatIfCells(row, 0, { klEstimator: 'k1', advantageEstimator: 'rloo' }, { beta: 0.6, gamma: 1, lam: 0.95 });
  for (const i of [0, 7, 15]) {
    const penalty = Number(await whatIf.getByTestId('kl-token').nth(i).getAttribute('data-penalty'));
    expect(penalty).toBeCloseTo(expected[i].penalty, 12);
    expect(penalty).toBeLessThan(0);
  }
  // The batch's own strip is unchanged.
  await expect(actual).toContainText('β = 0)');
  await expect(actual.getByTestId('kl-token').first()).toHaveAttribute('data-penalty', '0');
});

test('a 3-token answer is called too short and loads the reward-hacking preset', async ({ page }) => {
  await openPage(page);
  await send(page, [SAMPLE_MESSAGE]);
  await klTab(page).click();
  await expect(page.getByTestId('kl-actual').getByTestId('kl-token')).toHaveCount(3);
  const hint = page.getByTestId('kl-short-hint');
  await expect(hint).toContainText('too short');
  await hint.getByRole('button', { name: /Load “Reward hacking without KL”/ }).click();
  await expect(page.getByLabel('Task', { exact: true })).toHaveValue('sentiment');
  await expect(hint).toContainText('is loaded');
});
