// `npm run record-runs` as a process: every bad flag named in one message, exit status 2, before
// anything trains; a short run of one arm writes the card's file where --out says, read back by the
// page's reader. (What the files hold and that they are `npm run learning`'s runs:
// tests/unit/preset_results.test.ts, tests/integration/record_run.test.ts.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRunFile } from '../../src/store/runFile.ts';

const record = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/record/recordRuns.ts', ...args], { encoding: 'utf8', timeout: 120_000 });
const out = mkdtempSync(join(tmpdir(), 'record-runs-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('npm run record-runs', () => {
  it('names every bad flag, exit status 2, and trains nothing', () => {
    const r = record(['--preset', 'Nope', '--preset', 'DAPO', '--arm', 'ε = 9', '--seed=-1', '--backend', 'gpu', '--iters', '0', '--out', out]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('invalid settings (5)');
    expect(r.stderr).toContain('--preset = "Nope": allowed: "Learn arithmetic"');
    expect(r.stderr).toContain('--arm = "ε = 9": no chosen preset has that arm; their arms: "DAPO"');
    expect(r.stderr).toContain('--seed = "-1": a whole number ≥ 0 is required');
    expect(r.stderr).toContain('--backend = "gpu": allowed: cpu, webgpu');
    expect(r.stderr).toContain('--iters = "0": a whole number ≥ 1 is required');
    expect(readdirSync(out)).toEqual([]);
    const unknown = record(['--preset', 'DAPO', '--arms', 'x']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--arms'");
    expect(unknown.stderr).toContain('usage: npm run record-runs');
  });

  it('writes one arm of a paired card as its run file', () => {
    const r = record(['--preset', 'Reward hacking without KL', '--arm', 'β = 0', '--iters', '1', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(out)).toEqual(['rewardHacking-1.json']);
    expect(r.stdout).toContain('rewardHacking-1.json:');
    const rec = readRunFile(readFileSync(join(out, 'rewardHacking-1.json'), 'utf8'));
    expect(rec.run).toMatchObject({ name: 'β = 0', preset: 'Reward hacking without KL', budget: 1 });
    expect(rec.run.config.klCoef).toBe(0);
    expect(rec.run.metrics).toHaveLength(1);
  });
});
