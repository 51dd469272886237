// <Formula tex="…"/>: a LaTeX formula typeset by KaTeX, with its plain-text reading shown until
// KaTeX has loaded (or if it cannot), so the page never waits on, or breaks for, the typesetter.
// <FittedFormula>: a long display formula that wraps to its box (texLines.ts: typeset inline in
// display style, breaking between equations and after relations), and is scaled down where one
// unbreakable part is still wider, so nothing runs off the right edge.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { loadKatex, renderTex } from './katexRender.ts';
import { texToPlain } from './texPlain.ts';
import { allowTexBreaks } from './texLines.ts';

export interface FormulaProps {
  /** The LaTeX source (KaTeX's subset). */
  tex: string;
  /** A display (block, centred) formula instead of an inline one. */
  display?: boolean;
  /** An accessible name for the formula, when its spoken MathML alone would not say what it is. */
  label?: string;
  className?: string;
  /** A formula wider than its box is typeset smaller (down to MIN_FIT of its size) to fit. */
  fit?: boolean;
}

/** The smallest scale a fitted line is typeset at; a line still wider scrolls inside its box. */
export const MIN_FIT = 0.5;

/** The font scale that makes content `natural` px wide fit a box `box` px wide (1 when it fits). */
export function fitScale(natural: number, box: number): number {
  if (!(natural > 0) || !(box > 0) || natural <= box) return 1;
  return Math.max(MIN_FIT, Math.floor((box / natural) * 100) / 100);
}

/** Scales the element's type so its content fits its width, again whenever that width changes. */
function useFit(ref: React.RefObject<HTMLElement | null>, on: boolean, content: string | null) {
  // biome-ignore lint/correctness/useExhaustiveDependencies: new content (KaTeX's typesetting replacing the plain text) is measured again
  useLayoutEffect(() => {
    const el = ref.current;
    if (!on || !el) return;
    let lastWidth = -1;
    const refit = () => {
      const width = el.clientWidth;
      if (width === lastWidth) return;
      lastWidth = width;
      el.style.fontSize = '';
      const scale = fitScale(el.scrollWidth, width);
      if (scale < 1) el.style.fontSize = `${Number.parseFloat(getComputedStyle(el).fontSize) * scale}px`;
    };
    refit();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(refit);
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref, on, content]);
}

export function Formula({ tex, display = false, label, className, fit = false }: FormulaProps) {
  const plain = useMemo(() => texToPlain(tex), [tex]);
  const [html, setHtml] = useState<string | null>(null);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    let live = true;
    setHtml(null);
    loadKatex().then(
      (k) => {
        if (live) setHtml(renderTex(k, tex, display));
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [tex, display]);
  useFit(ref, fit, html ?? plain);
  const Tag = display || fit ? 'div' : 'span';
  const cls = `formula${display ? ' formula-display' : ''}${fit ? ' formula-fit' : ''}${html === null ? ' formula-plain' : ''}${className ? ` ${className}` : ''}`;
  // The label names the formula for assistive technology; the MathML KaTeX emits reads its content.
  const labelled = label ? { role: 'group', 'aria-label': label } : {};
  if (html === null)
    return (
      <Tag ref={ref as React.RefObject<HTMLDivElement>} className={cls} data-tex={tex} {...labelled}>
        {plain}
      </Tag>
    );
  // KaTeX's output is built from the parsed formula (trust false: no \href, \url, \includegraphics), never from raw HTML.
  // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output, see above
  return <Tag ref={ref as React.RefObject<HTMLDivElement>} className={cls} data-tex={tex} {...labelled} dangerouslySetInnerHTML={{ __html: html }} />;
}

/**
 * A display formula that fits its box: inline KaTeX in display style, so the browser wraps it
 * between equations and after relations and operators; a part that cannot break is scaled down.
 */
export function FittedFormula({ tex, label, className }: { tex: string; label?: string; className?: string }) {
  const wrapping = useMemo(() => `\\displaystyle ${allowTexBreaks(tex)}`, [tex]);
  return <Formula tex={wrapping} label={label} className={className} fit />;
}
