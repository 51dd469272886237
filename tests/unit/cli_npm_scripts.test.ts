// npm runs `pretrain` as the pre-hook of `npm run train`; both are documented commands, so the
// hook must stay silent while a direct argument-less `npm run pretrain` still explains its usage.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const npm = (...args: string[]) => spawnSync('npm', ['run', '-s', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('npm scripts pretrain and train', () => {
  it('npm run pretrain without --task prints its usage and fails', () => {
    const r = npm('pretrain');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('usage: npm run pretrain -- --task');
  });

  it('npm run train reaches the train command; its pre-hook pretrain does nothing', () => {
    const r = npm('train', '--', '--task', 'no-such-task', '--iters', '1');
    expect(r.status).not.toBe(0);
    expect(r.stderr).not.toContain('usage: npm run pretrain');
    expect(r.stderr + r.stdout).toMatch(/no-such-task/);
  });
});
