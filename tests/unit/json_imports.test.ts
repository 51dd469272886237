// Node loads page modules without a bundler (Playwright's loader, the command-line tools): a JSON
// import there must say `with { type: 'json' }` or the importing spec or tool fails to load.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : /\.(ts|tsx)$/.test(name) ? [p] : [];
  });
}

describe('JSON imports', () => {
  it('every static JSON import carries its type attribute', () => {
    const bare = ['src', 'tests', 'e2e'].flatMap(filesUnder).flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/^\s*import\s[^;]*from\s+['"][^'"]+\.json['"]\s*;/.test(line) ? [`${f}:${i + 1}`] : [])),
    );
    expect(bare).toEqual([]);
  });
});
