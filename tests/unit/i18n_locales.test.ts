// The two locales say the same things: the same keys in every namespace, the same variables in
// every string, Chinese with no English left in it (kept terms aside) and with the glossary's terms.
import { describe, expect, it } from 'vitest';
import { chooseLocale, localeOf } from '../../src/i18n/locales.ts';
import { configToQuery, parseQuery } from '../../src/store/urlConfig.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { englishLeftIn, flatStrings, GLOSSARY_TERMS, namespaces, pluralBase, variables } from '../helpers/i18nText.ts';

const NS = namespaces('en');

describe('locale files', () => {
  it('both locales have the same namespaces', () => {
    expect(namespaces('zh-CN')).toEqual(NS);
  });

  it.each(NS)('%s: the same keys (plural forms aside) and the same variables in both', (ns) => {
    const en = flatStrings('en', ns);
    const zh = flatStrings('zh-CN', ns);
    const bases = (m: Map<string, string>) => [...new Set([...m.keys()].map(pluralBase))].sort();
    expect(bases(zh)).toEqual(bases(en));
    const mismatched: string[] = [];
    for (const [key, text] of zh) {
      const enText = en.get(key) ?? en.get(`${pluralBase(key)}_other`) ?? en.get(pluralBase(key));
      if (enText === undefined) continue;
      const want = variables(enText).filter((v) => v !== 'count' || !/_other$/.test(key));
      const have = variables(text).filter((v) => v !== 'count' || !/_other$/.test(key));
      if (JSON.stringify(want) !== JSON.stringify(have)) mismatched.push(`${key}: en ${want.join(',')} / zh ${have.join(',')}`);
    }
    expect(mismatched).toEqual([]);
    for (const [key, text] of [...en, ...zh]) expect(text.trim(), `${ns}:${key} is empty`).not.toBe('');
  });

  it.each(NS)('%s: the Chinese text has no English left in it', (ns) => {
    const left = [...flatStrings('zh-CN', ns)].flatMap(([key, text]) => englishLeftIn(text).map((w) => `${key}: ${w}`));
    expect(left).toEqual([]);
  });

  it.each(NS)('%s: the Chinese text uses the glossary’s terms, not the ones it avoids', (ns) => {
    const avoided = [...flatStrings('zh-CN', ns)].flatMap(([key, text]) =>
      GLOSSARY_TERMS.flatMap((term) => (term.avoid ?? []).filter((bad) => text.includes(bad)).map((bad) => `${key}: ${bad} (glossary: ${term.en} = ${term.zh})`)),
    );
    expect(avoided).toEqual([]);
  });

  it('the English-word finder flags prose and passes identifiers, kept terms and code', () => {
    expect(englishLeftIn('按 Start 开始训练')).toEqual(['Start']);
    expect(englishLeftIn('PPO 的 pg_clipfrac 与 klCoef、`seq-mean-token-sum`、{{value}} 和 token')).toEqual([]);
    expect(englishLeftIn('概率比 r = π_new / π_old，log π 与 max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high))')).toEqual([]);
    expect(englishLeftIn('这是 the 最新 rollout of 样本')).toEqual(['the']);
    expect(englishLeftIn('critic/rewards/mean 是扣除 KL 惩罚后的同一指标')).toEqual([]);
  });
});

describe('choosing the language', () => {
  it('reads any Chinese tag as zh-CN and English tags as en', () => {
    expect(['zh', 'zh-CN', 'zh-Hans', 'zh_TW', 'ZH-sg'].map(localeOf)).toEqual(Array(5).fill('zh-CN'));
    expect(['en', 'en-GB', 'EN-us'].map(localeOf)).toEqual(['en', 'en', 'en']);
    expect([null, '', 'fr', 'de-DE'].map(localeOf)).toEqual([null, null, null, null]);
  });

  it('the link first, then the saved choice, then the browser, then English', () => {
    expect(chooseLocale({ query: 'zh-CN', saved: 'en', browser: ['en-US'] })).toEqual({ locale: 'zh-CN', from: 'query', badQuery: null });
    expect(chooseLocale({ query: null, saved: 'zh-CN', browser: ['en-US'] })).toEqual({ locale: 'zh-CN', from: 'saved', badQuery: null });
    expect(chooseLocale({ query: null, saved: null, browser: ['fr-FR', 'zh-CN', 'en'] })).toEqual({ locale: 'zh-CN', from: 'browser', badQuery: null });
    expect(chooseLocale({ query: null, saved: null, browser: ['fr-FR'] })).toEqual({ locale: 'en', from: 'default', badQuery: null });
    expect(chooseLocale({ query: 'klingon', saved: 'zh-CN', browser: [] })).toEqual({ locale: 'zh-CN', from: 'saved', badQuery: 'klingon' });
  });

  it('?lang= is kept in the links the page writes and a bad value is named with the allowed ones', () => {
    expect(new URLSearchParams(configToQuery(DEFAULT_CONFIG, [], null, false, 'zh-CN')).get('lang')).toBe('zh-CN');
    expect(new URLSearchParams(configToQuery(DEFAULT_CONFIG)).has('lang')).toBe(false);
    expect(parseQuery('?lang=zh-CN').problems).toEqual([]);
    expect(parseQuery('?lang=xx').problems).toEqual(['lang = "xx": allowed: en, zh-CN']);
  });
});
