// Every string the page shows comes from a locale file (src/i18n/locales): a component or a
// page module that writes English itself fails here, with the file, line and text to move.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/sourceFiles.ts';
import { scanSource } from '../helpers/i18nScan.ts';

/** The page's code: every component, and the modules under src/ui and src/store that word what it shows. */
const PAGE_FILES = [...sourceFiles('src/ui', /\.(ts|tsx)$/), ...sourceFiles('src/store', /\.(ts|tsx)$/), 'src/main.tsx'];

describe('no user-facing text outside the locale files', () => {
  it('the scanner finds what it should and skips code-facing strings', () => {
    const src = [
      'const a = <p title="Shown tooltip">Hello there</p>;',
      "const b = <b>{'Literal child'}</b>;",
      'const c = <i className="big red" data-testid="x-y">{t(\'k\')}</i>;',
      "const d = 'Paused: the run stopped.';",
      "throw new Error('Internal failure, not shown.');",
      "if (s === 'Some State') x();",
      "const e = 'ok'; // a word, not a sentence",
      "const f = 'Proper Name'; // i18n-exempt: a product's name",
    ].join('\n');
    const found = scanSource('x.tsx', src, { prose: true }).map((h) => [h.line, h.kind]);
    expect(found).toEqual([
      [1, 'jsx-attribute'],
      [1, 'jsx-text'],
      [2, 'jsx-literal'],
      [4, 'prose-literal'],
    ]);
  });

  it('components and page modules take every shown string from src/i18n/locales', () => {
    const found = PAGE_FILES.flatMap((f) => scanSource(f, readFileSync(f, 'utf8'), { prose: true }));
    expect(found.map((h) => `${h.file}:${h.line} ${h.kind} ${JSON.stringify(h.text)}`)).toEqual([]);
  });
});
