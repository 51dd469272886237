// The settings' problems worded by the page from their structure: in English exactly the
// validator's and the link parser's own messages (the panel's with labels), in Chinese with each
// setting's Chinese label beside its key and the allowed range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { switchLocale } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG, describeRange, NUMERIC_RULES, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import { parseQuery } from '../../src/store/urlConfig.ts';
import { withLabels } from '../../src/ui/fieldProblems.ts';
import { knobLabel, problemText, rangeText } from '../../src/ui/settingsText.ts';

const problemsOf = (c: Record<string, unknown>) => validateConfig({ ...DEFAULT_CONFIG, ...c } as PpoConfig & Record<string, unknown>);

/** One of every kind the validator and the link parser report. */
const PROBLEMS = [
  ...problemsOf({ topK: 300, topP: 0, seed: 1.5, klCoef: Number.NaN, dualClip: 1, klEstimator: 'k9', dynamicSampling: 'yes', rewardFunction: 3, bogus: 1 }),
  ...problemsOf({ rewardFunction: 'x'.repeat(20_000) }),
  ...problemsOf({ rewardSource: 'model', task: 'arithmetic' }),
  ...problemsOf({ nHead: 3 }),
  ...problemsOf({ miniBatches: 3 }),
  ...problemsOf({ advantageEstimator: 'rloo', samplesPerPrompt: 1, gamma: 0.9 }),
  ...problemsOf({ dynamicSampling: true, samplesPerPrompt: 1 }),
  ...problemsOf({ overlongBuffer: 8 }),
  ...problemsOf({ klInReward: false, useKlLoss: false, klController: 'adaptive' }),
  ...parseQuery('?present=maybe&lang=fr&budget=0&hide=nope&topK=abc&lossMode=x&zzz=1&nHead=3').linkProblems,
];

describe('settings problems in the page', () => {
  it('covers every kind', () => {
    // all but notInUrl, which no key of the config reaches
    expect(new Set(PROBLEMS.map((p) => p.detail.kind)).size).toBe(17);
  });

  it('English: the messages, byte for byte; in the panel with labels', () => {
    for (const p of PROBLEMS) {
      expect(problemText(p)).toBe(p.message);
      expect(problemText(p, true)).toBe(withLabels(p.message));
    }
    for (const r of Object.values(NUMERIC_RULES)) expect(rangeText(r)).toBe(describeRange(r));
  });

  describe('in Chinese', () => {
    beforeAll(() => switchLocale('zh-CN'));
    afterAll(() => switchLocale('en'));

    it('names the setting by its Chinese label and its key, with the allowed range', () => {
      const topK = PROBLEMS.find((p) => p.field === 'topK' && p.detail.kind === 'number')!;
      expect(knobLabel('nHead')).toBe('注意力头数');
      expect(problemText(topK)).toBe('top_k（topK） = 300：太大；允许：0 到 256 的整数');
      const heads = PROBLEMS.find((p) => p.detail.kind === 'headsDivide')!;
      expect(problemText(heads, true)).toBe('注意力头数（nHead） = 3：必须整除 模型宽度（dModel） = 64');
      const topP = PROBLEMS.find((p) => p.field === 'topP')!;
      expect(problemText(topP)).toContain('允许：0（不含） 到 1 的数');
      for (const p of PROBLEMS) expect(problemText(p)).not.toMatch(/allowed|must|unknown setting/);
    });
  });
});
