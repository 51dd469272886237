// `npm run pretrain -- --family hf`: the SFT checkpoint trained on HfModel (the character model as
// the GPT-2 it is) is the one `--family gpt` writes, on the float64 CPU backend: the same printed
// losses and greedy evaluations, and weights at most one float32 rounding apart (the bound of
// tests/gpu/sft_families.test.ts); a family that does not exist is refused by name with the allowed ones.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';

/** `npm run pretrain` as `npm run` runs it (node --import tsx, without npx's start-up). */
function pretrain(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/pretrain.ts', ...args], { encoding: 'utf8', timeout: 170_000 });
}

const dir = mkdtempSync(join(tmpdir(), 'pretrain-family-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The printed lines without their elapsed seconds (and the header and file lines, which name the family and path). */
const logOf = (out: string) =>
  out
    .split('\n')
    .filter((l) => !/^pretrain |^wrote /.test(l))
    .map((l) => l.replace(/\s+[\d.]+s$/, '').replace(/after [\d.]+s/, ''));

describe('npm run pretrain -- --family', () => {
  it('hf writes the checkpoint gpt writes (CPU backend, a reduced run)', { timeout: 360_000 }, () => {
    const args = ['--task', 'arithmetic', '--layers', '1', '--heads', '2', '--width', '32', '--phase-steps', '2', '--seed', '4'];
    const [gpt, hf] = (['gpt', 'hf'] as const).map((family) => pretrain(...args, '--family', family, '--out', join(dir, `${family}.safetensors`)));
    expect(gpt.status, gpt.stderr).toBe(0);
    expect(hf.status, hf.stderr).toBe(0);
    expect(hf.stdout).toContain('(family hf)');
    expect(logOf(gpt.stdout).filter((l) => l.startsWith('phase ')).length).toBeGreaterThanOrEqual(4);
    expect(logOf(hf.stdout)).toEqual(logOf(gpt.stdout));
    const [a, b] = (['gpt', 'hf'] as const).map((f) => parseCheckpoint(new Uint8Array(readFileSync(join(dir, `${f}.safetensors`)))));
    expect(b.config).toEqual(a.config);
    expect([...b.params.keys()]).toEqual([...a.params.keys()]);
    for (const [key, t] of a.params) {
      const u = b.params.get(key)!.data;
      for (let i = 0; i < t.data.length; i++) {
        const bound = 2 ** -23 * Math.max(Math.abs(t.data[i]), Math.abs(u[i]), 2 ** -10);
        if (Math.abs(t.data[i] - u[i]) > bound) expect.fail(`${key}[${i}]: gpt ${t.data[i]}, hf ${u[i]}`);
      }
    }
  });

  it('an unknown family exits 2 naming the flag and the allowed ones', { timeout: 120_000 }, () => {
    const r = pretrain('--task', 'arithmetic', '--family', 'llama', '--out', join(dir, 'none.safetensors'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--family = "llama": allowed: gpt, hf');
  });
});
