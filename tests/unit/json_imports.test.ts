// Node loads page modules without a bundler (Playwright's loader, the command-line tools): a JSON
// import there must say `with { type: 'json' }` or the importing spec or tool fails to load.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/sourceFiles.ts';

describe('JSON imports', () => {
  it('every static JSON import carries its type attribute', () => {
    const bare = ['src', 'tests', 'e2e']
      .flatMap((d) => sourceFiles(d, /\.(ts|tsx)$/))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .flatMap((line, i) => (/^\s*import\s[^;]*from\s+['"][^'"]+\.json['"]\s*;/.test(line) ? [`${f}:${i + 1}`] : [])),
      );
    expect(bare).toEqual([]);
  });
});
