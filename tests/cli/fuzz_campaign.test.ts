// A short fuzzing campaign on every target (configs, URLs, checkpoint files, kernel JSON,
// feedback labels, metric exports, run files of both kinds), once with a fixed seed and once with the run's TEST_SEED:
// every input must give a valid result or a named error. `npm run fuzz` runs the long campaign.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { formatReports, runCampaign, totalDefects } from '../../src/fuzz/campaign.ts';
import { classifyThrow } from '../../src/fuzz/outcome.ts';
import { parseCsv } from '../../src/fuzz/files.ts';
import { checkActorFile } from '../../src/store/checkpoints.ts';
import { TEST_SEED } from '../helpers/random.ts';

const arithmeticCheckpoint = new Uint8Array(readFileSync('public/checkpoints/arithmetic.safetensors'));

async function campaign(seed: number, count: number) {
  const reports = await runCampaign({ count, seed, limitMs: 10_000, cpu: new CpuBackend(), arithmeticCheckpoint, pageCheck: checkActorFile });
  const table = formatReports(reports);
  console.log(`[fuzz] seed ${seed}\n${table}`);
  return { reports, table };
}

// Each campaign takes ~20 s alone on one core; the cli project's 120 s timeout leaves room for a
// machine shared with other test files.
describe('fuzzing campaign', () => {
  it('a fixed seed: 300 inputs per target, no crash, no invalid result, no hang', async () => {
    const { reports, table } = await campaign(20261123, 300);
    expect(totalDefects(reports), table).toBe(0);
    // Every target ran, the page check included, and each saw both outcomes where both exist.
    expect(reports.map((r) => r.target)).toContain('checkpoints: page file check (checkActorFile)');
    for (const r of reports) expect(r.tried, r.target).toBeGreaterThan(0);
    for (const t of [
      'checkpoints: safetensors decode',
      'checkpoints: page file check (checkActorFile)',
      'kernels (CPU float64)',
      'configs: page URL (parseQuery)',
      'files: damaged run files of your own model refused by name',
    ]) {
      const r = reports.find((x) => x.target === t)!;
      expect(r.counts.ok, t).toBeGreaterThan(0);
      expect(r.counts.named, t).toBeGreaterThan(0);
    }
  });

  it(`the run's seed (TEST_SEED=${TEST_SEED}): 200 inputs per target, no defect`, async () => {
    const { reports, table } = await campaign(TEST_SEED, 200);
    expect(totalDefects(reports), table).toBe(0);
  });
});

describe('the fuzzer can fail', () => {
  it('sorts engine errors, non-Errors, empty and 10 kB messages as defects', () => {
    expect(classifyThrow(new Error('nHead = 3: must divide dModel')).verdict).toBe('named');
    expect(classifyThrow(new TypeError("Cannot read properties of undefined (reading 'x')")).verdict).toBe('crash');
    expect(classifyThrow(new Error("Cannot read properties of undefined (reading 'x')")).verdict).toBe('crash');
    expect(classifyThrow('a string').verdict).toBe('crash');
    expect(classifyThrow(new Error('')).verdict).toBe('crash');
    expect(classifyThrow(new Error('x'.repeat(10_000))).verdict).toBe('invalid');
    expect(classifyThrow(new Error('bad value'), ['seed']).verdict).toBe('invalid');
  });

  it('reads CSV the way spreadsheets do (quotes, doubled quotes, CR/LF inside quotes)', () => {
    expect(parseCsv('a,"b,c","say ""hi""","x\r\ny"\r\n1,2,3,4\n')).toEqual([
      ['a', 'b,c', 'say "hi"', 'x\r\ny'],
      ['1', '2', '3', '4'],
    ]);
    expect(parseCsv('a\rb\n')).toEqual([['a'], ['b']]);
  });
});
