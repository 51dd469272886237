// Typesetting one formula with KaTeX, fetched on first use so the first paint never pays for it.
// Rendering never throws: KaTeX marks a bad command in red with throwOnError false, and anything
// else that goes wrong yields null so the caller keeps its plain-text fallback.

export interface KatexLike {
  renderToString(tex: string, options?: Record<string, unknown>): string;
}

/** The KaTeX options every formula uses: MathML beside the HTML for screen readers, no \href or \url. */
export function katexOptions(display: boolean): Record<string, unknown> {
  return { displayMode: display, throwOnError: false, output: 'htmlAndMathml', trust: false, strict: 'ignore', maxSize: 20, maxExpand: 200 };
}

/** HTML for `tex`, or null when KaTeX itself failed (a bug or a hostile input), never an exception. */
export function renderTex(katex: KatexLike, tex: string, display: boolean): string | null {
  try {
    return katex.renderToString(tex, katexOptions(display));
  } catch {
    return null;
  }
}

let loading: Promise<KatexLike> | null = null;

/** KaTeX and its stylesheet (fonts bundled locally by Vite), loaded once for the whole page. */
export function loadKatex(): Promise<KatexLike> {
  loading ??= Promise.all([import('katex'), import('katex/dist/katex.min.css')]).then(([m]) => (m.default ?? m) as KatexLike);
  // A failed load (offline chunk, blocked font) is retried by the next formula that mounts.
  loading.catch(() => {
    loading = null;
  });
  return loading;
}
