// Long walk-through formulas fit their box: they may break at their top-level separators (never
// inside a group or a \left … \right pair) besides KaTeX's own breaks after relations, a part still
// too wide is scaled down, no further than MIN_FIT; a sampled token's text is LaTeX-safe; the run's
// own function comes first.
import katex from 'katex';
import { describe, expect, it } from 'vitest';
import { formulaStep, knobsFromConfig, stepFunctions, texToken } from '../../src/rl/inspect/index.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { fitScale, MIN_FIT } from '../../src/ui/math/Formula.tsx';
import { allowTexBreaks } from '../../src/ui/math/texLines.ts';

describe('allowTexBreaks', () => {
  it('allows a break after ",\\quad" and ",\\;" (the comma stays) and before a bare "\\quad"', () => {
    expect(allowTexBreaks('a = 1,\\quad b = 2,\\; c = 3\\quad \\text{note}')).toBe('a = 1,\\quad\\allowbreak  b = 2,\\;\\allowbreak  c = 3\\allowbreak\\quad \\text{note}');
    expect(allowTexBreaks('x = 1')).toBe('x = 1');
  });

  it('never inside braces or a \\left … \\right pair, nor in a longer command that starts alike', () => {
    expect(allowTexBreaks('\\frac{a,\\quad b}{c},\\quad d')).toBe('\\frac{a,\\quad b}{c},\\quad\\allowbreak  d');
    expect(allowTexBreaks('\\left(a,\\quad b\\right),\\quad c')).toBe('\\left(a,\\quad b\\right),\\quad\\allowbreak  c');
    expect(allowTexBreaks('a\\quadx')).toBe('a\\quadx');
    expect(allowTexBreaks('\\leftarrow,\\quad b')).toBe('\\leftarrow,\\quad\\allowbreak  b');
  });

  it('gives KaTeX a formula it typesets inline in display style, breakable at each separator, for every step and loss mode', () => {
    for (const lossMode of ['vanilla', 'gspo', 'cispo', 'sapo', 'gpg', 'geo_mean', 'clip_cov', 'kl_cov'] as const) {
      const k = { ...knobsFromConfig(DEFAULT_CONFIG, 0.05), lossMode, dualClip: 3 };
      for (const id of ['rollout', 'rewardShaping', 'advantages', 'whitening', 'ratioClip', 'valueLoss', 'optimiserStep'] as const) {
        const tex = `\\displaystyle ${allowTexBreaks(formulaStep(id).template(k))}`;
        const html = katex.renderToString(tex, { throwOnError: true });
        // Each top-level part is its own breakable box: at least one per separator plus one.
        const parts = (html.match(/class="katex-base/g) ?? []).length;
        expect(parts, `${lossMode} ${id}`).toBeGreaterThan(tex.split('\\allowbreak').length - 1);
      }
    }
  });
});

describe('fitScale', () => {
  it('is 1 when the content fits, box/natural when not, never below MIN_FIT', () => {
    expect(fitScale(300, 400)).toBe(1);
    expect(fitScale(800, 400)).toBe(0.5);
    expect(fitScale(500, 400)).toBe(0.8);
    expect(fitScale(5000, 400)).toBe(MIN_FIT);
    expect(fitScale(0, 400)).toBe(1);
    // Rounded down: the scaled content is never wider than the box.
    expect(fitScale(333, 300) * 333).toBeLessThanOrEqual(300);
  });
});

describe('texToken', () => {
  it('shows the token’s text in quotes, LaTeX’s special characters escaped, whitespace visible (a space as ␣)', () => {
    expect(texToken('<eos>')).toBe('\\texttt{“<eos>”}');
    expect(texToken(' ')).toBe('\\texttt{“␣”}');
    expect(texToken('')).toBe('\\texttt{“∅”}');
    // a byte-level BPE token's whitespace, as the token table and the own-model panels show it
    expect(texToken(' the\n\t')).toBe('\\texttt{“␣the↵⇥”}');
    for (const s of ['{', '}', '_', '%', '&', '#', '$', '^', '~', '\\', 'a_b{c}', ' the\n', '\r\t']) {
      expect(() => katex.renderToString(`a_2 = ${texToken(s)}`, { throwOnError: true }), s).not.toThrow();
    }
  });
});

describe('stepFunctions', () => {
  it('names the function this run used first and flags it, the other modes after in their order', () => {
    const k = { ...knobsFromConfig(DEFAULT_CONFIG, 0.05), lossMode: 'cispo' as const };
    const fns = stepFunctions(formulaStep('ratioClip'), k, 'verl');
    expect(fns[0]).toEqual({ name: 'compute_policy_loss_cispo', used: true });
    expect(fns.filter((f) => f.used)).toHaveLength(1);
    expect(fns.slice(1).map((f) => f.name)).toEqual(formulaStep('ratioClip').verl.filter((n) => n !== 'compute_policy_loss_cispo'));
    const grpo = stepFunctions(formulaStep('advantages'), { ...k, advantageEstimator: 'group_norm' }, 'verl');
    expect(grpo[0]).toEqual({ name: 'compute_grpo_outcome_advantage', used: true });
    expect(stepFunctions(formulaStep('advantages'), { ...k, advantageEstimator: 'rloo' }, 'openrlhf')[0]).toEqual({ name: 'get_cumulative_returns', used: true });
    // A step with one function for every mode flags none.
    expect(stepFunctions(formulaStep('valueLoss'), k, 'verl').every((f) => !f.used)).toBe(true);
  });
});
