// The Inspect tab in both languages: the page's English for the walk-through's words, ranges and
// knob labels is the English the rl layer writes (FORMULA_TEXT, describeRange, KNOBS), and in
// Chinese the formulas' \text{…} notes are translated while the math stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, switchLocale, t } from '../../src/i18n/index.ts';
import { describeRange, KNOBS } from '../../src/rl/config.ts';
import { FORMULA_STEPS, FORMULA_TEXT, formulaStep, recomputeTrace } from '../../src/rl/inspect/index.ts';
import { ruleOf, WHAT_IF_NUMBERS } from '../../src/ui/inspect/format.ts';
import { formulaNotes, localiseTex, rangeText, stepTitle, stepWhy } from '../../src/ui/inspect/text.ts';
import { texToPlain } from '../../src/ui/math/texPlain.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

beforeAll(() => loadNamespaces(['inspect']));

describe('the Inspect tab in English', () => {
  it('says the walk-through’s titles, reasons and notes exactly as FORMULA_TEXT does', () => {
    for (const s of FORMULA_STEPS) {
      expect(stepTitle(s.id)).toBe(FORMULA_TEXT.steps[s.id].title);
      expect(stepWhy(s.id)).toBe(FORMULA_TEXT.steps[s.id].why);
    }
    const notes = formulaNotes();
    expect(notes).toHaveLength(Object.keys(FORMULA_TEXT.notes).length - 1 + Object.keys(FORMULA_TEXT.notes.clip).length);
    for (const n of notes) expect(n.local).toBe(n.en);
  });

  it('leaves a formula as the rl layer wrote it', () => {
    const trace = buildTrace(rng(952), { holeRow: 0, A: 6 });
    const rec = recomputeTrace(trace);
    const tex = formulaStep('ratioClip').substitute({ trace, rec, row: 0, t: 3 });
    expect(localiseTex(tex)).toBe(tex);
  });

  it('words each what-if range as describeRange and names each knob as the settings do', () => {
    for (const k of WHAT_IF_NUMBERS) expect(rangeText(ruleOf(k))).toBe(describeRange(ruleOf(k)));
    for (const k of WHAT_IF_NUMBERS) if (k !== 'klLossCoef') expect(t(`inspect:whatIf.knobs.${k}`)).toBe(KNOBS[k].label);
    expect(t('inspect:whatIf.knobs.klEstimator')).toBe(KNOBS.klEstimator.label);
  });
});

describe('the Inspect tab in Chinese', () => {
  beforeAll(() => switchLocale('zh-CN'));
  afterAll(() => switchLocale('en'));

  it('names the steps with the notes’ terms', () => {
    expect(FORMULA_STEPS.map((s) => stepTitle(s.id))).toEqual(['采样', '参考模型与价值模型', '奖励塑形', '优势', '白化', '概率比与裁剪', '价值损失', '优化器更新与指标']);
    expect(stepWhy('ratioClip')).toContain('π_new/π_old');
  });

  it('translates the notes inside \\text{…} and keeps the math', () => {
    const trace = buildTrace(rng(952), { holeRow: 0, A: 6 });
    const rec = recomputeTrace(trace);
    const masked = formulaStep('ratioClip').substitute({ trace, rec, row: 0, t: 3 });
    expect(localiseTex(masked)).toBe('\\text{EOS 之后的填充：不是动作 token}');
    const row = 1;
    const tex = formulaStep('ratioClip').substitute({ trace, rec, row, t: 0 });
    const zh = localiseTex(tex);
    for (const n of formulaNotes()) expect(zh).not.toContain(n.en.replace(/[_%&#$]/g, (c) => `\\${c}`));
    expect(zh.replace(/\\text\{[^}]*\}/g, '')).toBe(tex.replace(/\\text\{[^}]*\}/g, ''));
    expect(texToPlain(zh)).toMatch(/裁剪/);
  });

  it('words a range in Chinese with its open bounds', () => {
    expect(rangeText(ruleOf('clipLow'))).toBe('0（不含）到 1（不含）之间的数');
    expect(rangeText(ruleOf('dualClip'))).toBe('1（不含）到 100 之间的数，或留空以关闭');
  });
});
