// A long formula made to wrap: typeset inline in display style, KaTeX lets the line break after a
// relation or a binary operator; here a break is also allowed after each top-level ",\quad" or ",\;"
// (one equation to the next) and before a top-level "\quad" that starts a note. Never inside a braced
// group or a \left … \right pair, where KaTeX could not break anyway.

/** The separators a line may break after (the comma stays on the line before). */
const BREAKS = [',\\quad', ',\\;', '\\quad'] as const;

/** `tex` with `\allowbreak` after each of its top-level separators. */
export function allowTexBreaks(tex: string): string {
  let out = '';
  let depth = 0;
  let i = 0;
  while (i < tex.length) {
    const c = tex[i];
    if (c === '\\') {
      const word = /^\\[A-Za-z]+/.exec(tex.slice(i))?.[0];
      if (word === '\\left' || word === '\\right') {
        depth += word === '\\left' ? 1 : -1;
        out += word;
        i += word.length;
        continue;
      }
    }
    if (depth === 0 && (c === ',' || c === '\\')) {
      const sep = BREAKS.find((b) => tex.startsWith(b, i) && !/[A-Za-z]/.test(tex[i + b.length] ?? ''));
      if (sep) {
        // A note after a bare \quad breaks before it; an equation list breaks after its comma.
        out += sep === '\\quad' ? `\\allowbreak${sep}` : `${sep}\\allowbreak `;
        i += sep.length;
        continue;
      }
    }
    if (c === '\\') {
      out += tex.slice(i, i + 2); // an escaped character (\{, \,) or the first letter of a command
      i += 2;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') depth--;
    out += c;
    i++;
  }
  return out;
}
