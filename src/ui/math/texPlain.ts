// A readable plain-text rendering of a LaTeX formula: what a reader sees before KaTeX has loaded,
// if it never loads, and what copy-paste or a search for "clip" finds. Not a TeX parser: it maps
// the commands the page's formulas use and strips the rest of the markup.

const SYMBOLS: Record<string, string> = {
  alpha: 'α',
  beta: 'β',
  gamma: 'γ',
  delta: 'δ',
  epsilon: 'ε',
  varepsilon: 'ε',
  lambda: 'λ',
  mu: 'μ',
  pi: 'π',
  sigma: 'σ',
  theta: 'θ',
  phi: 'φ',
  rho: 'ρ',
  tau: 'τ',
  Delta: 'Δ',
  Sigma: 'Σ',
  sum: 'Σ',
  prod: 'Π',
  cdot: '·',
  times: '×',
  le: '≤',
  leq: '≤',
  ge: '≥',
  geq: '≥',
  ne: '≠',
  neq: '≠',
  approx: '≈',
  to: '→',
  rightarrow: '→',
  leftarrow: '←',
  infty: '∞',
  pm: '±',
  mid: '|',
  lvert: '|',
  rvert: '|',
  vert: '|',
  in: '∈',
  ldots: '…',
  dots: '…',
  cdots: '⋯',
  log: 'log',
  exp: 'exp',
  min: 'min',
  max: 'max',
  clip: 'clip',
  sqrt: '√',
  quad: ' ',
  qquad: ' ',
  ',': ' ',
  ';': ' ',
  '!': '',
  ' ': ' ',
  '{': '{',
  '}': '}',
  '%': '%',
  _: '_',
  '&': '&',
  '#': '#',
  $: '$',
  textbackslash: '\\',
  textasciicircum: '^',
  textasciitilde: '~',
};

/** Commands whose braced argument is kept as plain text (the command itself drops). */
const KEEP_ARG = new Set([
  'text',
  'mathrm',
  'mathit',
  'mathbf',
  'mathsf',
  'mathtt',
  'texttt',
  'operatorname',
  'boldsymbol',
  'textbf',
  'textit',
  'hat',
  'bar',
  'tilde',
  'overline',
  'underline',
]);

/** Sizing and spacing commands that carry no content. */
const DROP = new Set(['allowbreak', 'left', 'right', 'big', 'Big', 'bigg', 'Bigg', 'bigl', 'bigr', 'Bigl', 'Bigr', 'displaystyle', 'limits', 'nolimits']);

/** Reads a braced group starting at `i` (which must be `{`); returns its inner text and the index after it. */
function group(tex: string, i: number): { inner: string; end: number } {
  let depth = 0;
  for (let j = i; j < tex.length; j++) {
    if (tex[j] === '\\') {
      j++;
      continue;
    }
    if (tex[j] === '{') depth++;
    else if (tex[j] === '}' && --depth === 0) return { inner: tex.slice(i + 1, j), end: j + 1 };
  }
  return { inner: tex.slice(i + 1), end: tex.length };
}

/** A term that needs parentheses to stay unambiguous when a fraction is flattened to a/b. */
const wrap = (s: string) => (/^[\p{L}\p{N}_.·]+$/u.test(s) ? s : `(${s})`);

export function texToPlain(tex: string): string {
  let out = '';
  let i = 0;
  while (i < tex.length) {
    const c = tex[i];
    if (c === '\\') {
      const m = /^\\([A-Za-z]+|.)/.exec(tex.slice(i));
      if (!m) {
        i++;
        continue;
      }
      const name = m[1];
      i += m[0].length;
      if (name === 'frac' || name === 'dfrac' || name === 'tfrac') {
        while (tex[i] === ' ') i++;
        const a = tex[i] === '{' ? group(tex, i) : { inner: tex[i] ?? '', end: i + 1 };
        let k = a.end;
        while (tex[k] === ' ') k++;
        const b = tex[k] === '{' ? group(tex, k) : { inner: tex[k] ?? '', end: k + 1 };
        out += `${wrap(texToPlain(a.inner).trim())}/${wrap(texToPlain(b.inner).trim())}`;
        i = b.end;
      } else if (name === 'sqrt') {
        while (tex[i] === ' ') i++;
        if (tex[i] === '{') {
          const g = group(tex, i);
          out += `√${wrap(texToPlain(g.inner).trim())}`;
          i = g.end;
        } else out += '√';
      } else if (KEEP_ARG.has(name)) {
        while (tex[i] === ' ') i++;
        if (tex[i] === '{') {
          const g = group(tex, i);
          out += texToPlain(g.inner);
          i = g.end;
        }
      } else if (DROP.has(name)) {
        // nothing
      } else if (Object.hasOwn(SYMBOLS, name)) out += SYMBOLS[name];
      else out += name;
    } else if (c === '{' || c === '}') i++;
    else if (c === '^' || c === '_') {
      // x^{2} → x^2, a_{t+1} → a_(t+1): keeps the grouping readable without the braces.
      const mark = c === '^' ? '^' : '_';
      i++;
      if (tex[i] === '{') {
        const g = group(tex, i);
        const inner = texToPlain(g.inner).trim();
        out += inner.length > 1 ? `${mark}(${inner})` : `${mark}${inner}`;
        i = g.end;
      } else out += mark;
    } else if (c === '&') i++;
    else {
      out += c;
      i++;
    }
  }
  return out.replace(/\s+/g, ' ').trim();
}
