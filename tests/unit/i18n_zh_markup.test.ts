// The Chinese page shows no markup as text and no English preset name: a zh-CN string carries
// tags (<code>, <b>) only where its English does or where the page renders it through <Trans>
// (found in the sources), no string in either language carries Markdown backticks, no zh-CN
// string names a preset in English, and the notices, the resume banner's words and the tour name
// the presets in Chinese. Where the notes write KL散度 (the KL penalty of reward shaping), the
// page says KL 散度.
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { i18n, loadNamespaces } from '../../src/i18n/index.ts';
import { DEFAULT_CHECKED } from '../../src/rl/config.ts';
import { PRESETS } from '../../src/rl/presets.ts';
import type { RunSequence } from '../../src/store/appStore.ts';
import { presetNotStarted, presetTitle, sequenceAllTrained, sequenceDone, sequenceStopped } from '../../src/store/notices.ts';
import { tourPreset } from '../../src/ui/tour/startTour.ts';
import { flatStrings, namespaces, pluralBase } from '../helpers/i18nText.ts';
import { ROOT, sourceFiles } from '../helpers/sourceFiles.ts';

const NS = namespaces('en');
const tags = (s: string) => new Set([...s.matchAll(/<\/?([A-Za-z][\w-]*)[^>]*>/g)].map((m) => m[1]));

/** Keys a function of the page builds for <Trans i18nKey={fn(…)}>, as patterns. */
const KEY_FUNCTIONS: Record<string, RegExp> = { knobHelpKey: /^knobs\.[^.]+\.help$/ };

/** Every key the page renders through <Trans> (markup becomes elements there), as exact keys or patterns. */
function transKeys(): RegExp[] {
  const out: RegExp[] = [];
  const literal = (s: string) => new RegExp(`^${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const keysOf = (e: ts.Expression): RegExp[] => {
    if (ts.isStringLiteralLike(e)) return [literal(e.text)];
    if (ts.isTemplateExpression(e)) {
      const parts = [e.head.text, ...e.templateSpans.map((s) => s.literal.text)].map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      return [new RegExp(`^${parts.join('[^.]+')}$`)];
    }
    if (ts.isConditionalExpression(e)) return [...keysOf(e.whenTrue), ...keysOf(e.whenFalse)];
    if (ts.isParenthesizedExpression(e)) return keysOf(e.expression);
    if (ts.isCallExpression(e) && KEY_FUNCTIONS[e.expression.getText()]) return [KEY_FUNCTIONS[e.expression.getText()]];
    throw new Error(`a <Trans i18nKey={${e.getText()}}> this test cannot read: add its keys to KEY_FUNCTIONS`);
  };
  for (const file of sourceFiles('src/ui', /\.tsx$/)) {
    const sf = ts.createSourceFile(file, readFileSync(`${ROOT}/${file}`, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
    const visit = (n: ts.Node): void => {
      if ((ts.isJsxSelfClosingElement(n) || ts.isJsxOpeningElement(n)) && n.tagName.getText() === 'Trans') {
        for (const a of n.attributes.properties) {
          if (!ts.isJsxAttribute(a) || a.name.getText() !== 'i18nKey' || !a.initializer) continue;
          const init = a.initializer;
          out.push(...keysOf(ts.isJsxExpression(init) ? init.expression! : (init as ts.StringLiteral)));
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

/** English names of the presets whose Chinese name differs (DAPO is DAPO in both). */
function englishPresetNames(): string[] {
  const en = flatStrings('en', 'presets');
  const zh = flatStrings('zh-CN', 'presets');
  return [...en].filter(([k]) => /^preset\.[^.]+\.name$/.test(k) && zh.get(k) !== en.get(k)).map(([, v]) => v);
}

describe('zh-CN strings', () => {
  const trans = transKeys();

  it('finds the page’s <Trans> keys', () => {
    // Sanity: the settings' help, a preset card's fields and the SFT intro are rendered with markup.
    for (const key of ['knobs.lossMode.help', 'preset.ownReward.watch', 'sft.intro'])
      expect(
        trans.some((r) => r.test(key)),
        key,
      ).toBe(true);
    expect(trans.some((r) => r.test('knobs.clipCovRatio.label'))).toBe(false);
  });

  it.each(NS)('%s: markup only where the English has it or the page renders it through <Trans>', (ns) => {
    const en = flatStrings('en', ns);
    const shownAsText: string[] = [];
    for (const [key, text] of flatStrings('zh-CN', ns)) {
      const enText = en.get(key) ?? en.get(`${pluralBase(key)}_other`) ?? en.get(`${pluralBase(key)}_one`) ?? '';
      const extra = [...tags(text)].filter((tag) => !tags(enText).has(tag));
      if (extra.length > 0 && !trans.some((r) => r.test(key))) shownAsText.push(`${key}: <${extra.join('>, <')}> in “${text.slice(0, 60)}”`);
    }
    expect(shownAsText).toEqual([]);
  });

  it.each(NS)('%s: no Markdown backticks in either language (no view renders Markdown)', (ns) => {
    const ticks = ['en', 'zh-CN'].flatMap((l) => [...flatStrings(l, ns)].filter(([, v]) => v.includes('`')).map(([k]) => `${l}:${k}`));
    expect(ticks).toEqual([]);
  });

  it.each(NS)('%s: no preset named in English', (ns) => {
    const names = englishPresetNames();
    expect(names.length).toBeGreaterThan(5);
    const found = [...flatStrings('zh-CN', ns)].flatMap(([k, v]) => names.filter((n) => v.includes(n)).map((n) => `${k}: ${n}`));
    expect(found).toEqual([]);
  });

  it.each(NS)('%s: where the English says KL penalty or KL divergence, the Chinese says KL 散度, as the notes do', (ns) => {
    const zh = flatStrings('zh-CN', ns);
    const missing = [...flatStrings('en', ns)]
      .filter(([, v]) => /KL (penalt|divergence)/i.test(v))
      .flatMap(([k]) => {
        const z = zh.get(k) ?? zh.get(`${pluralBase(k)}_other`) ?? '';
        return z.includes('KL 散度') ? [] : [`${k}: ${z.slice(0, 50)}`];
      });
    expect(missing).toEqual([]);
  });
});

describe('zh-CN page text built from preset names', () => {
  beforeAll(async () => {
    await loadNamespaces(['notices', 'presets', 'tour']);
    await i18n.changeLanguage('zh-CN');
  });
  afterAll(async () => {
    await i18n.changeLanguage('en');
  });

  const names = () => englishPresetNames();
  const clean = (text: string, where: string) => {
    for (const n of names()) expect(text, where).not.toContain(n);
    expect(text, where).not.toMatch(/<\/?[a-z]+>|`/);
  };

  it('the notices of a preset’s arms name it in Chinese', () => {
    const paired = PRESETS.filter((p) => p.arms && p.arms.length > 1);
    expect(paired.length).toBeGreaterThan(1);
    for (const preset of PRESETS) {
      // Only a paired preset runs as a sequence of arms ("Run both" / "Run all").
      const arms = (preset.arms ?? []).map((a) => ({ label: a.label, config: DEFAULT_CHECKED }));
      const seq: RunSequence = { preset: preset.name, arms, index: 0, budget: preset.iterations };
      const zhName = presetTitle(preset.name);
      const texts = [presetNotStarted(preset.name, ['y']), ...(arms.length > 1 ? [sequenceDone(seq), sequenceStopped(seq, 3, 'x'), sequenceAllTrained(seq)] : [])];
      for (const text of texts) {
        expect(text).toContain(zhName);
        clean(text, preset.name);
      }
    }
  });

  it('the tour’s words for a loaded preset carry no markup and its Chinese name', () => {
    for (const preset of PRESETS) {
      const words = tourPreset(preset.name)!;
      clean(`${words.name} ${words.watch}`, preset.name);
      expect(words.name).toBe(presetTitle(preset.name));
    }
    expect(tourPreset(null)).toBeNull();
  });
});
