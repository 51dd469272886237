// The charts in Chinese: titles, notes, help, the screen-reader summaries and the held-out caption
// follow the page's language, with large iteration counts grouped as the locale writes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, switchLocale } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { CHART_HELP, HELP_UI } from '../../src/ui/charts/chartHelpText.ts';
import { CHARTS, chartTitle } from '../../src/ui/charts/chartList.ts';
import { chartNote } from '../../src/ui/charts/chartNotes.ts';
import { chartSummary, runSummary } from '../../src/ui/charts/chartSummary.ts';
import { slug } from '../../src/ui/charts/exportPng.ts';
import { formatSeconds, heldOutCaption, heldOutTitle } from '../../src/ui/charts/heldOut.ts';
import { englishLeftIn } from '../helpers/i18nText.ts';

const line = (ys: number[], x0 = 1) => ys.map((y, i) => ({ x: x0 + i, y }));
const cfg = (c: Partial<PpoConfig>) => ({ ...DEFAULT_CONFIG, ...c }) as PpoConfig;

describe('charts in English', () => {
  beforeAll(() => loadNamespaces(['charts']));

  it('groups a large iteration count and keeps the values’ precision', () => {
    expect(runSummary('run 1', line([0.1, 0.2], 1499))).toBe('run 1 last 0.2 at iteration 1,500, rising over the last 2 iterations');
  });

  it('reads the help and titles from the locale files', () => {
    expect(chartTitle('clipfrac')).toBe('Clip fraction');
    expect(CHART_HELP.policy_loss.sick).toContain('too far from π_old.');
    expect(CHART_HELP.reward_mean.verl.note).toBe('critic/rewards/mean is the same after the KL penalty');
    expect(CHART_HELP.policy_loss.verl.note).toBeUndefined();
  });
});

describe('charts in Chinese', () => {
  beforeAll(async () => {
    await switchLocale('zh-CN');
    await loadNamespaces(['charts']);
  });
  afterAll(() => switchLocale('en'));

  it('titles every chart in Chinese, metric identifiers aside', () => {
    expect(chartTitle('reward_mean')).toBe('奖励');
    expect(chartTitle('clipfrac')).toBe('裁剪比例');
    for (const c of CHARTS) {
      expect(c.title, c.metric).not.toMatch(/^charts:/);
      expect(englishLeftIn(c.title), c.metric).toEqual([]);
    }
  });

  it('says the summaries in Chinese, with the same numbers', () => {
    expect(runSummary('run 1', line([0.1, 0.2, 0.3, 0.43], 12))).toBe('run 1 最新值 0.43（第 15 次迭代），近 4 次迭代上升');
    expect(runSummary('a', line([0.1, 0.2], 1499))).toBe('a 最新值 0.2（第 1,500 次迭代），近 2 次迭代上升');
    expect(chartSummary('奖励', [{ name: 'run 1', points: [] }])).toBe('奖励：暂无数据。');
    expect(
      chartSummary(
        '留出准确率',
        [
          { name: 'a', points: line([0.1, 0.1], 0) },
          { name: 'b', points: line([2], 0) },
        ],
        'evaluations',
      ),
    ).toBe('留出准确率：a 最新值 0.1（第 1 次迭代），近 2 次评估持平；b 最新值 2（第 0 次迭代）。');
  });

  it('words the notes, the help and the held-out caption in Chinese, keeping identifiers', () => {
    const rloo = { ...DEFAULT_CONFIG, advantageEstimator: 'rloo' as const };
    expect(chartNote('value_loss', [rloo, { ...rloo, advantageEstimator: 'group_norm' }])).toMatch(/^没有价值模型：rloo、group_norm /);
    expect(chartNote('rollout_old_kl', [DEFAULT_CONFIG])).toContain('π_old');
    expect(CHART_HELP.clipping.healthy).toContain('[1 − ε_low, 1 + ε_high]');
    expect(CHART_HELP.clipfrac.verl.name).toBe('actor/pg_clipfrac');
    expect(HELP_UI.open('奖励')).toBe('奖励是什么意思');
    expect(heldOutTitle(['arithmetic'])).toBe('留出准确率');
    const run = { name: 'x', config: cfg({ evalEvery: 10 }), evals: [{ iter: 10, values: { accuracy: 0.5 }, prompts: 38, seconds: 125 }] };
    expect(heldOutCaption([run], cfg({}), run)).toEqual({ scope: '38 个提示，每 10 次迭代评估一次', took: '上次评估（10 次迭代后）用时 2 分 05 秒' });
    expect(formatSeconds(3.24)).toBe('3.2 秒');
  });

  it('names a PNG after its Chinese title', () => {
    expect(slug('奖励')).toBe('奖励');
    expect(slug('Reward')).toBe('reward');
  });
});
