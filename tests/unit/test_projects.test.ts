// Each Vitest project holds one kind of test (vitest.config.ts): `unit` and `integration` stay in
// their own process, so the tests that start one (tsx, npm, python3, bash) live in tests/cli/, where
// `npm run test:cli` runs them and `npm test` times them apart; a test that needs WebGPU stays in
// tests/gpu/ even when it starts a process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../helpers/sourceFiles.ts';

const SELF = 'tests/unit/test_projects.test.ts';
const startsProcess = (text: string) => /from ['"](node:)?child_process['"]|import\(['"](node:)?child_process['"]\)|\bexeca\b/.test(text);

describe('the Vitest projects', () => {
  it.each(['tests/unit', 'tests/integration'])('no test under %s starts a process', (dir) => {
    const files = sourceFiles(dir, /\.ts$/)
      .filter((f) => f !== SELF) // this file names the imports it looks for
      .filter((f) => startsProcess(readFileSync(join(ROOT, f), 'utf8')));
    expect(files).toEqual([]);
  });

  it('the detector sees the forms a test uses to start one', () => {
    expect(startsProcess("import { spawnSync } from 'node:child_process';")).toBe(true);
    expect(startsProcess('import { execFileSync } from "child_process";')).toBe(true);
    expect(startsProcess("const cp = await import('node:child_process');")).toBe(true);
    expect(startsProcess("import { readFileSync } from 'node:fs';")).toBe(false);
  });

  it('tests/cli/ holds the tests that start the command-line tools', () => {
    const spawning = sourceFiles('tests/cli', /\.test\.ts$/).filter((f) => startsProcess(readFileSync(join(ROOT, f), 'utf8')));
    expect(spawning.length).toBeGreaterThanOrEqual(8);
  });
});
