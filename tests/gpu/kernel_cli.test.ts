// `npm run kernel` end to end: the real command, real WGSL on Dawn, JSON in and out.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { klRef } from '../../src/reference/kl.ts';
import { expectClose, TOL } from '../helpers/random.ts';

const dir = mkdtempSync(join(tmpdir(), 'kernel-cli-'));

function runCli(name: string, input: unknown): { status: number; stdout: string; stderr: string } {
  const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof input === 'string' ? input : JSON.stringify(input));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/kernel.ts', name, file], { encoding: 'utf8' });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run kernel', () => {
  it('runs the kl kernel on WebGPU and prints nested JSON arrays', () => {
    const logprobs = [[-1, -2, -0.5], [-3, -0.1, -2]];
    const ref = [[-1.5, -1, -0.5], [-0.2, -4, -2]];
    const r = runCli('kl', { logprobs, ref_logprobs: ref, estimator: 'k3' });
    expect(r.stderr).not.toMatch(/invalid|failed/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.kl).toHaveLength(2);
    expect(out.kl[0]).toHaveLength(3);
    const f32 = (xs: number[][]) => Float64Array.from(new Float32Array(xs.flat()));
    expectClose(out.kl.flat(), klRef(f32(logprobs), f32(ref), 'k3'), TOL.elem.rtol, TOL.elem.atol, 'kl');
  });

  it.each([
    ['missing field', { logprobs: [[-1]], estimator: 'k1' }, 'missing field "ref_logprobs"'],
    ['ragged array', { logprobs: [[-1, -2], [-1]], ref_logprobs: [[-1, -2], [-1, 0]], estimator: 'k1' }, 'field "logprobs"[1]: ragged array'],
    ['wrong type', { logprobs: [[-1, 'x']], ref_logprobs: [[-1, -2]], estimator: 'k1' }, 'field "logprobs"[0][1]: expected a number'],
    ['shape mismatch', { logprobs: [[-1, -2]], ref_logprobs: [[-1, -2, -3]], estimator: 'k1' }, 'field "ref_logprobs": shape [1, 3] does not match'],
    ['bad estimator', { logprobs: [[-1]], ref_logprobs: [[-1]], estimator: 'k9' }, 'field "estimator"'],
  ])('rejects a malformed input (%s) with a message naming the field', (_what, input, message) => {
    const r = runCli('kl', input);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it('rejects NaN (not JSON) and an unknown kernel', () => {
    const nan = runCli('kl', '{"logprobs": [[NaN]], "ref_logprobs": [[0]], "estimator": "k1"}');
    expect(nan.status).not.toBe(0);
    expect(nan.stderr).toContain('not valid JSON');
    const unknown = runCli('nope', { a: 1 });
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toContain('unknown kernel "nope"');
  });
});
