// npm runs `pretrain` as the pre-hook of `npm run train`, in the same environment as a direct
// `npm run pretrain` (npm_lifecycle_event is "pretrain" both ways), so an argument-less pretrain
// must be harmless either way: one usage line, no training, exit 0 so that `train` goes on.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const npm = (...args: string[]) => spawnSync('npm', ['run', '-s', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('npm scripts pretrain and train', { timeout: 60_000 }, () => {
  it('npm run pretrain without --task prints its one-line usage, trains nothing and exits 0', () => {
    const r = npm('pretrain');
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('usage: npm run pretrain -- --task');
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.includes('pretrain')),
    ).toHaveLength(1);
    expect(r.stdout).not.toMatch(/^pretrain |^step |^wrote /m);
  });

  it("npm run pretrain with options but no --task still fails with its usage (status 2, as every command's usage error)", () => {
    const r = npm('pretrain', '--', '--steps', '1');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: npm run pretrain -- --task');
  });

  it('npm run train reaches the train command; its pre-hook pretrain trains nothing', () => {
    const r = npm('train', '--', '--task', 'no-such-task', '--iters', '1');
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toMatch(/^pretrain |^step |^wrote /m);
    expect(r.stderr + r.stdout).toMatch(/no-such-task/);
  });
});

// `npm test` (scripts/test-all.mjs) checks the system first: a missing Debian package is installed
// when it may be (PPO_NO_APT=1 forbids that here), otherwise the one command is printed.
describe('npm test on a machine without what it needs', { timeout: 60_000 }, () => {
  const testAll = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['scripts/test-all.mjs'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, PPO_NO_APT: '1', ...env } });

  it('stops before running anything, naming a Chromium it cannot install', () => {
    const r = testAll({ PPO_CHROMIUM: '/nonexistent/chromium' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Chromium not found at /nonexistent/chromium');
    expect(r.stdout).not.toContain('=== Typecheck');
  });

  it('prints the one apt-get command for the packages that are missing', () => {
    // A PATH holding only node: no python3 (nor ldconfig / fc-list, whose files are checked directly).
    const bin = mkdtempSync(join(tmpdir(), 'only-node-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    try {
      const r = testAll({ PATH: bin });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/python3 — the exported job's reward\.py is checked by running it/);
      expect(r.stderr).toMatch(/On Debian\/Ubuntu: {2}sudo apt-get install -y [a-z0-9 -]*\bpython3\b/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('npm run export-job', { timeout: 60_000 }, () => {
  it('without arguments prints its usage and exits 2', () => {
    const r = npm('export-job');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: npm run export-job -- --engine <verl|openrlhf>');
  });
});
