// `npm run train -- --family hf`: the character model's roles on HfModel (src/rl/trainerModels.ts)
// give, on the float64 CPU backend, the metrics and held-out evaluations `--family gpt` (the page's
// own model) gives — within 1e-9 relative or 1e-12 absolute, the two summing a gradient norm in
// another order; a family that does not exist is refused by name with the allowed ones.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { expectClose } from '../helpers/random.ts';

/** `npm run train` as `npm run` runs it (node --import tsx, without npx's start-up). */
function train(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', ...args], { encoding: 'utf8', timeout: 170_000 });
}

const numbersOf = (rows: Record<string, unknown>[]) =>
  rows.flatMap((row) =>
    Object.entries(row)
      .filter(([k]) => !/^time_|^gpu_/.test(k))
      .flatMap(([k, v]) =>
        typeof v === 'number' ? [[k, v] as const] : typeof v === 'object' && v !== null ? Object.entries(v).map(([k2, v2]) => [`${k}.${k2}`, v2 as number] as const) : [],
      ),
  );

describe('npm run train -- --family', () => {
  it('hf trains the stop task as gpt does (CPU backend, two iterations)', { timeout: 360_000 }, () => {
    const args = ['--task', 'stop', '--iters', '2', '--seed', '3', '--backend', 'cpu', '--eval-count', '8', '--eval-samples', '1'];
    const [gpt, hf] = [train(...args, '--family', 'gpt'), train(...args, '--family', 'hf')];
    expect(gpt.status, gpt.stderr).toBe(0);
    expect(hf.status, hf.stderr).toBe(0);
    expect(hf.stderr).toContain('the model on HfModel');
    const rows = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const [a, b] = [numbersOf(rows(gpt.stdout)), numbersOf(rows(hf.stdout))];
    expect(b.map(([k]) => k)).toEqual(a.map(([k]) => k));
    expect(a.length).toBeGreaterThan(40); // eval_before, two rows of metrics, the final eval
    expectClose(
      b.map(([, v]) => v),
      a.map(([, v]) => v),
      1e-9,
      1e-12,
      'every number of the run',
    );
  });

  it('an unknown family exits 2 naming the flag and the allowed ones', { timeout: 120_000 }, () => {
    const r = train('--task', 'stop', '--iters', '1', '--backend', 'cpu', '--family', 'llama');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--family = "llama": allowed: gpt, hf');
  });
});
