// The README is a short tour: the two commands a newcomer needs, what `npm test` installs, and one
// row per experiment whose name, budget and checking command are the preset list's own, so a preset
// added, renamed or re-budgeted fails here until both READMEs say so.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import chinese from '../../src/i18n/locales/zh-CN/presets.json' with { type: 'json' };
import { PRESETS, type Preset } from '../../src/rl/presets.ts';

const root = resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(resolve(root, file), 'utf8');
const readme = read('README.md');
const readmeZh = read('README.zh-CN.md');
const MAX_LINES = 150;

/** The packages scripts/test-all.mjs installs when they are missing (each `pkg: '…'` it names). */
function testAllPackages(): string[] {
  const names = [...read('scripts/test-all.mjs').matchAll(/pkg: '([a-z0-9-]+)'/g)].map((m) => m[1]);
  return [...new Set(names)].sort();
}

/** The rows of the first Markdown table whose header starts with `firstHeader`, as cells. */
function tableRows(text: string, firstHeader: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${firstHeader} |`));
  expect(start, `no table headed "${firstHeader}"`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

function armCount(p: Preset): number {
  return p.arms?.length ?? 1;
}

describe('README.md', () => {
  it(`is a tour of at most ${MAX_LINES} lines`, () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_LINES);
  });

  it('gives the two commands: install and start, and every test', () => {
    const block = readme.match(/```sh\n([\s\S]*?)```/)?.[1] ?? '';
    const commands = block
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => l.replace(/#.*$/, '').trim());
    expect(commands).toEqual(['npm install && npm run dev', 'npm test']);
    expect(readme).toContain('Node 20.19 or newer');
  });

  it.each([
    ['README.md', readme],
    ['README.zh-CN.md', readmeZh],
  ])('%s names every package npm test installs', (_file, text) => {
    const named = [...text.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]);
    for (const pkg of testAllPackages()) expect(named).toContain(pkg);
    expect(testAllPackages().length).toBeGreaterThan(0);
  });

  it('has one experiment row per preset, in order, with its budget and the command that checks it', () => {
    const rows = tableRows(readme, 'preset');
    expect(rows.map((r) => r[0])).toEqual(PRESETS.map((p) => p.name));
    for (const [i, p] of PRESETS.entries()) {
      const [, , budget, , command] = rows[i];
      expect(budget).toBe(armCount(p) > 1 ? `${p.iterations} × ${armCount(p)} arms` : `${p.iterations}`);
      expect(command).toBe(`\`npm run learning -- --preset "${p.name}"\``);
    }
  });
});

describe('README.zh-CN.md', () => {
  it('has one experiment row per preset, in order, with its budget', () => {
    const rows = tableRows(readmeZh, '预设');
    expect(rows).toHaveLength(PRESETS.length);
    for (const [i, p] of PRESETS.entries()) {
      const zhName = chinese.preset[p.id].name;
      expect([zhName, `${zhName}（${p.name}）`]).toContain(rows[i][0]);
      expect(rows[i][2]).toBe(armCount(p) > 1 ? `${p.iterations} × ${armCount(p)} 组` : `${p.iterations}`);
    }
  });
});
