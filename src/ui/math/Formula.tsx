// <Formula tex="…"/>: a LaTeX formula typeset by KaTeX, with its plain-text reading shown until
// KaTeX has loaded (or if it cannot), so the page never waits on, or breaks for, the typesetter.
import { useEffect, useMemo, useState } from 'react';
import { loadKatex, renderTex } from './katexRender.ts';
import { texToPlain } from './texPlain.ts';

export interface FormulaProps {
  /** The LaTeX source (KaTeX's subset). */
  tex: string;
  /** A display (block, centred) formula instead of an inline one. */
  display?: boolean;
  /** An accessible name for the formula, when its spoken MathML alone would not say what it is. */
  label?: string;
  className?: string;
}

export function Formula({ tex, display = false, label, className }: FormulaProps) {
  const plain = useMemo(() => texToPlain(tex), [tex]);
  const [html, setHtml] = useState<string | null>(null);
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
  const Tag = display ? 'div' : 'span';
  const cls = `formula${display ? ' formula-display' : ''}${html === null ? ' formula-plain' : ''}${className ? ` ${className}` : ''}`;
  // The label names the formula for assistive technology; the MathML KaTeX emits reads its content.
  const labelled = label ? { role: 'group', 'aria-label': label } : {};
  if (html === null)
    return (
      <Tag className={cls} data-tex={tex} {...labelled}>
        {plain}
      </Tag>
    );
  // KaTeX's output is built from the parsed formula (trust false: no \href, \url, \includegraphics), never from raw HTML.
  // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output, see above
  return <Tag className={cls} data-tex={tex} {...labelled} dangerouslySetInnerHTML={{ __html: html }} />;
}
