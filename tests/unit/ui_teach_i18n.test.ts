// The teaching views' text builders speak the page's language: the same counts and settings in
// English and in Chinese, with the glossary's words (裁剪, 双重裁剪) and the plurals English needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, switchLocale, t } from '../../src/i18n/index.ts';
import { formatClip } from '../../src/ui/teach/clipping.ts';
import { pairCountText } from '../../src/ui/teach/feedbackText.ts';

const row = (prompt: string, response: string) => ({ prompt, response, reward: 0, endedWithEos: true, tokens: [] });
const rows = [row('a', 'x'), row('a', 'y'), row('b', 'z'), row('b', 'w')];

describe('teaching views in both languages', () => {
  beforeAll(() => loadNamespaces(['teach']));
  afterAll(() => switchLocale('en'));

  it('English: one pair of a prompt is singular, the done pairs are named only when there are some', () => {
    expect(pairCountText([row('a', 'x'), row('a', 'y')], 1)).toBe(
      'The latest rollout has 1 prompt × 2 responses. Only two different responses to the same prompt make a pair (identical ones cannot be compared), which gives 1 pair; 1 left.',
    );
    expect(t('teach:feedback.labelCount', { count: 1 })).toBe('1 labelled pair');
    expect(t('teach:feedback.labelCount', { count: 2 })).toBe('2 labelled pairs');
  });

  it('Chinese: the same counts, the dual clip as 双重裁剪, the tabs named as the notes name them', async () => {
    await switchLocale('zh-CN');
    expect(pairCountText(rows, 1)).toBe('最新一次采样有 2 个提示 × 2 个响应。同一提示下两个不同的响应才能组成一对（相同的无法比较），因此共 2 对；已标注或跳过 1 对，还剩 1 对。');
    expect(formatClip({ clipLow: 0.2, clipHigh: 0.28, dualClip: 3 })).toBe('ε_low = 0.2, ε_high = 0.28，双重裁剪 c = 3');
    expect(['clipping', 'kl', 'feedback'].map((id) => t(`teach:tabs.${id}`))).toEqual(['裁剪', 'KL 奖励塑形', '人类反馈']);
    expect(t('teach:feedback.labelCount', { count: 1 })).toBe('已标注 1 对');
  });
});
