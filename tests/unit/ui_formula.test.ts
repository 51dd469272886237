// The formula component's pure parts: the plain-text fallback, KaTeX's options and its never-throwing render.
import katex from 'katex';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Formula } from '../../src/ui/math/Formula.tsx';
import { katexOptions, renderTex } from '../../src/ui/math/katexRender.ts';
import { texToPlain } from '../../src/ui/math/texPlain.ts';

describe('texToPlain', () => {
  it('reads Greek letters, fractions, sub- and superscripts and text', () => {
    expect(texToPlain('\\beta \\cdot \\mathrm{KL}_t')).toBe('β · KL_t');
    expect(texToPlain('r_t = \\frac{\\pi_\\theta}{\\pi_{\\text{old}}}')).toBe('r_t = π_θ/(π_(old))');
    expect(texToPlain('\\delta_t = r_t + \\gamma V_{t+1} - V_t')).toBe('δ_t = r_t + γ V_(t+1) - V_t');
    expect(texToPlain('x^{2} + e^{-x}')).toBe('x^2 + e^(-x)');
    expect(texToPlain('\\frac{a+b}{2}')).toBe('(a+b)/2');
    expect(texToPlain('\\sqrt{\\sigma^2 + \\varepsilon}')).toBe('√(σ^2 + ε)');
  });

  it('drops sizing commands and keeps operators', () => {
    expect(texToPlain('\\min\\left(r_t A_t,\\ \\operatorname{clip}(r_t, 1-\\varepsilon, 1+\\varepsilon) A_t\\right)')).toBe('min(r_t A_t, clip(r_t, 1-ε, 1+ε) A_t)');
    expect(texToPlain('\\mathbb{1}')).toBe('mathbb1');
  });

  it('never throws on malformed input', () => {
    for (const bad of ['\\frac{a', '}{', '\\', '^', '_{', '\\sqrt', '{{{{', '\\text{unclosed']) expect(() => texToPlain(bad)).not.toThrow();
  });
});

describe('renderTex', () => {
  it('emits HTML and MathML for screen readers', () => {
    const html = renderTex(katex, '\\beta', false)!;
    expect(html).toContain('katex-html');
    expect(html).toContain('<math');
    expect(katexOptions(true)).toMatchObject({ displayMode: true, throwOnError: false, output: 'htmlAndMathml', trust: false });
  });

  it('shows a bad command instead of throwing, and survives a throwing typesetter', () => {
    expect(renderTex(katex, '\\notacommand{x}', false)).toContain('notacommand');
    expect(
      renderTex(
        {
          renderToString: () => {
            throw new Error('boom');
          },
        },
        'x',
        false,
      ),
    ).toBeNull();
  });

  it('does not turn \\href into a link', () => {
    expect(renderTex(katex, '\\href{javascript:alert(1)}{x}', false)).not.toMatch(/<a\b|href=/);
  });
});

describe('<Formula>', () => {
  it('shows the readable plain text until KaTeX has loaded', () => {
    const html = renderToStaticMarkup(createElement(Formula, { tex: '\\beta \\cdot \\mathrm{KL}_t', label: 'KL penalty' }));
    expect(html).toContain('β · KL_t');
    expect(html).toContain('aria-label="KL penalty"');
    expect(html).toMatch(/^<span/);
    expect(renderToStaticMarkup(createElement(Formula, { tex: 'x', display: true }))).toMatch(/^<div class="formula formula-display/);
  });
});
