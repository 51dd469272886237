// `npm run kernel` end to end: the real command, real WGSL on Dawn, JSON in and out.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KERNEL_NAMES, runKernel } from '../../src/ops/registry.ts';
import { klGradRef, klRef } from '../../src/reference/kl.ts';
import { groupAdvantagesRef, type GroupEstimator } from '../../src/reference/groupAdvantages.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, rng, TOL } from '../helpers/random.ts';

const dir = mkdtempSync(join(tmpdir(), 'kernel-cli-'));

function runCli(name: string, input: unknown): { status: number; stdout: string; stderr: string } {
  const file = join(dir, `${name}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof input === 'string' ? input : JSON.stringify(input));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/kernel.ts', name, file], { encoding: 'utf8' });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run kernel', () => {
  it('runs the kl kernel on WebGPU and prints nested JSON arrays', () => {
    const logprobs = [
      [-1, -2, -0.5],
      [-3, -0.1, -2],
    ];
    const ref = [
      [-1.5, -1, -0.5],
      [-0.2, -4, -2],
    ];
    const r = runCli('kl', { logprobs, ref_logprobs: ref, estimator: 'k3' });
    expect(r.stderr).not.toMatch(/invalid|failed/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.kl).toHaveLength(2);
    expect(out.kl[0]).toHaveLength(3);
    const f32 = (xs: number[][]) => Float64Array.from(new Float32Array(xs.flat()));
    expectClose(out.kl.flat(), klRef(f32(logprobs), f32(ref), 'k3'), TOL.elem.rtol, TOL.elem.atol, 'kl');
    expectClose(out.kl_grad.flat(), klGradRef(f32(logprobs), f32(ref), 'k3'), TOL.elem.rtol, TOL.elem.atol, 'kl_grad');
  });

  it.each([
    ['missing field', { logprobs: [[-1]], estimator: 'k1' }, 'missing field "ref_logprobs"'],
    [
      'ragged array',
      {
        logprobs: [[-1, -2], [-1]],
        ref_logprobs: [
          [-1, -2],
          [-1, 0],
        ],
        estimator: 'k1',
      },
      'field "logprobs"[1]: ragged array',
    ],
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

describe('every kernel name through the CLI runner: WebGPU output equals the float64 reference backend', () => {
  const r = rng(77);
  const B = 4,
    T = 5,
    V = 7;
  const f32 = (x: number) => Math.fround(x);
  const mat = (f: () => number) => Array.from({ length: B }, () => Array.from({ length: T }, () => f32(f())));
  const mask = Array.from({ length: B }, (_, b) => Array.from({ length: T }, (_, t) => (t < [5, 1, 3, 0][b] ? 1 : 0)));
  const lp = () => -Math.abs(r.normal());
  const base = { logprobs: mat(lp), ref_logprobs: mat(lp), mask };
  const inputs: Record<string, Record<string, unknown>> = {
    logprobs: {
      logits: Array.from({ length: B }, () => Array.from({ length: T }, () => Array.from({ length: V }, () => f32(r.normal() * 4)))),
      tokens: Array.from({ length: B }, () => Array.from({ length: T }, () => r.int(0, V))),
      temperature: 0.7,
    },
    kl: { ...base, estimator: 'k3+' },
    shape_rewards: { ...base, scores: [1, -0.5, 2, 3], beta: 0.1, estimator: 'k3' },
    gae: { rewards: mat(() => r.normal()), values: mat(() => r.normal()), mask, gamma: 0.99, lam: 0.95 },
    whiten: { values: mat(() => r.normal() * 3 + 1), mask, shift_mean: false },
    group_advantages: { ...base, estimator: 'rloo', scores: [1, 0, 0.5, 2], group: [7, 7, 3, 3], beta: 0.05, kl_estimator: 'k1', gamma: 1 },
    policy_loss: { old_logprobs: mat(lp), logprobs: mat(lp), advantages: mat(() => r.normal()), mask, clip_low: 0.2, clip_high: 0.28, clip_c: 3, agg: 'seq-mean-token-mean' },
    value_loss: {
      values: mat(() => r.normal()),
      old_values: mat(() => r.normal()),
      returns: mat(() => r.normal()),
      mask,
      clip: 0.2,
      agg: 'seq-mean-token-sum-norm',
      norm_scale: 'verl',
    },
    aggregate: { values: mat(() => r.normal()), mask, agg: 'seq-mean-token-sum' },
    tis_weights: { old_logprobs: mat(lp), rollout_logprobs: mat(lp), mask, cap: 1.5 },
    rollout_correction: {
      old_logprobs: mat(lp),
      rollout_logprobs: mat(lp),
      mask,
      rollout_is: 'sequence',
      rollout_is_threshold: '0.1_20',
      rollout_rs: 'token_k1,seq_mean_k3',
      rollout_rs_threshold: '0.2_5,2',
    },
  };
  // the new policy-loss modes, each with rollout IS weights
  const policyVariants: [string, Record<string, unknown>][] = [
    ['gspo', { ...inputs.policy_loss, loss_mode: 'gspo', is_weights: mat(() => r.uniform(0.5, 2)) }],
    ['cispo', { ...inputs.policy_loss, loss_mode: 'cispo', agg: 'seq-mean-token-sum-norm', norm_scale: 'verl' }],
    ['sapo', { ...inputs.policy_loss, loss_mode: 'sapo', tau_pos: 0.5, tau_neg: 3, is_weights: mat(() => r.uniform(0.5, 2)) }],
    ['sapo (verl default temperatures)', { ...inputs.policy_loss, loss_mode: 'sapo' }],
    ['gpg', { ...inputs.policy_loss, loss_mode: 'gpg', agg: 'seq-mean-token-mean' }],
    ['geo_mean', { ...inputs.policy_loss, loss_mode: 'geo_mean', is_weights: mat(() => r.uniform(0.5, 2)) }],
    ['vanilla + is_weights', { ...inputs.policy_loss, agg: 'seq-mean-token-sum', is_weights: mat(() => r.uniform(0.5, 2)) }],
    ['clip_cov', { ...inputs.policy_loss, loss_mode: 'clip_cov', clip_cov_ratio: 0.2, clip_cov_lb: -1, clip_cov_ub: 2, cov_seed: 9, is_weights: mat(() => r.uniform(0.5, 2)) }],
    ['clip_cov (verl defaults)', { ...inputs.policy_loss, loss_mode: 'clip_cov' }],
    ['kl_cov', { ...inputs.policy_loss, loss_mode: 'kl_cov', kl_cov_ratio: 0.2, ppo_kl_coef: 0.5, agg: 'seq-mean-token-mean' }],
  ];

  it.each(KERNEL_NAMES.map((n) => [n]))('%s', async (name) => {
    const gpuOut = await runKernel(await webgpuBackend(), name, inputs[name]);
    const cpuOut = await runKernel(cpuBackend, name, inputs[name]);
    expect(Object.keys(gpuOut).sort()).toEqual(Object.keys(cpuOut).sort());
    for (const key of Object.keys(cpuOut)) {
      const flat = (v: unknown) => (Array.isArray(v) ? (v.flat(3) as number[]) : [v as number]);
      expectClose(flat(gpuOut[key]), flat(cpuOut[key]), TOL.reduce.rtol, TOL.reduce.atol, `${name}.${key}`);
    }
  });

  it.each(policyVariants)('policy_loss %s', async (_what, input) => {
    const gpuOut = await runKernel(await webgpuBackend(), 'policy_loss', input);
    const cpuOut = await runKernel(cpuBackend, 'policy_loss', input);
    for (const key of ['loss', 'clipfrac', 'clipfrac_lower', 'ppo_kl', 'grad_logprobs']) {
      const flat = (v: unknown) => (Array.isArray(v) ? (v.flat(3) as number[]) : [v as number]);
      expectClose(flat(gpuOut[key]), flat(cpuOut[key]), TOL.reduce.rtol, TOL.reduce.atol, `policy_loss.${key}`);
    }
  });

  it('clip_cov / kl_cov return the tokens they picked, the same on both backends', async () => {
    for (const loss_mode of ['clip_cov', 'kl_cov']) {
      const input = { ...inputs.policy_loss, loss_mode, clip_cov_ratio: 0.2, clip_cov_lb: -1, clip_cov_ub: 2, kl_cov_ratio: 0.2, cov_seed: 3 };
      const gpuOut = await runKernel(await webgpuBackend(), 'policy_loss', input);
      const cpuOut = await runKernel(cpuBackend, 'policy_loss', input);
      expect(gpuOut.cov_selected).toEqual(cpuOut.cov_selected);
      expect((cpuOut.cov_selected as number[][]).flat().reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    }
    expect((await runKernel(cpuBackend, 'policy_loss', inputs.policy_loss)).cov_selected).toBeUndefined();
  });

  it('new fields are checked and named', async () => {
    for (const [field, value] of [
      ['clip_cov_ratio', 0],
      ['kl_cov_ratio', -1],
      ['ppo_kl_coef', -0.5],
      ['clip_cov_lb', 'one'],
      ['cov_seed', 1.5],
    ] as const) {
      await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, loss_mode: 'clip_cov', [field]: value })).rejects.toThrow(`field "${field}"`);
    }
    await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, loss_mode: 'ppo2' })).rejects.toThrow('field "loss_mode"');
    await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, norm_scale: 'global' })).rejects.toThrow('field "norm_scale"');
    await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, loss_mode: 'sapo', tau_pos: 0 })).rejects.toThrow('field "tau_pos"');
    await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, loss_mode: 'sapo', tau_neg: -1 })).rejects.toThrow('field "tau_neg"');
    await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, is_weights: [[1]] })).rejects.toThrow('field "is_weights"');
    await expect(runKernel(cpuBackend, 'tis_weights', { ...inputs.tis_weights, cap: 0 })).rejects.toThrow('field "cap"');
    const rc = inputs.rollout_correction;
    await expect(runKernel(cpuBackend, 'rollout_correction', { ...rc, rollout_is: 'batch' })).rejects.toThrow('field "rollout_is"');
    await expect(runKernel(cpuBackend, 'rollout_correction', { ...rc, rollout_is_threshold: '5_2' })).rejects.toThrow('lower bound 5 exceeds');
    await expect(runKernel(cpuBackend, 'rollout_correction', { ...rc, rollout_rs: 'seq_max_k1' })).rejects.toThrow('unknown option seq_max_k1');
    await expect(runKernel(cpuBackend, 'rollout_correction', { ...rc, rollout_rs_threshold: '1,2,3' })).rejects.toThrow('exactly 2');
    await expect(runKernel(cpuBackend, 'rollout_correction', { ...rc, rollout_rs_threshold: '0.2_5,0.1_2' })).rejects.toThrow('seq_mean_k3 takes an upper bound only');
    await expect(runKernel(cpuBackend, 'rollout_correction', { ...rc, rollout_rs_threshold: undefined })).rejects.toThrow('needed with rollout_rs');
    // the verl names come back: weights, the rejected mask and rollout_corr/ metrics
    const got = await runKernel(cpuBackend, 'rollout_correction', rc);
    expect(Object.keys(got)).toEqual(
      expect.arrayContaining(['rollout_is_weights', 'response_mask', 'rollout_corr/rollout_is_mean', 'rollout_corr/rollout_rs_masked_fraction', 'rollout_corr/chi2_seq']),
    );
    await expect(runKernel(cpuBackend, 'aggregate', { values: inputs.aggregate.values, mask })).rejects.toThrow('missing field "agg"');
  });

  it('policy_loss rejects clip_c ≤ 1 naming the field', async () => {
    await expect(runKernel(cpuBackend, 'policy_loss', { ...inputs.policy_loss, clip_c: 1 })).rejects.toThrow('field "clip_c"');
  });
  it('group_advantages rejects a group of one sample', async () => {
    await expect(runKernel(cpuBackend, 'group_advantages', { ...inputs.group_advantages, group: [1, 2, 2, 2] })).rejects.toThrow(/group 1 has 1 sample/);
    await expect(runKernel(cpuBackend, 'group_advantages', { ...inputs.group_advantages, estimator: 'grpo_passk', group: [1, 2, 2, 2] })).rejects.toThrow(/group 1 has 1 sample/);
  });

  // OPO, GRPO pass@k (with a tie at the top of one group) and ReMax (baselines, groups of one allowed).
  const estimatorVariants: [string, Record<string, unknown>][] = [
    ['opo', { ...inputs.group_advantages, estimator: 'opo' }],
    ['grpo_passk', { ...inputs.group_advantages, estimator: 'grpo_passk', scores: [1, 1, 0.5, 2] }],
    ['remax', { ...inputs.group_advantages, estimator: 'remax', group: [0, 1, 2, 3], baselines: [0.5, -1, 0.25, 2] }],
  ];
  it.each(estimatorVariants)('group_advantages %s: WebGPU = CPU = the float64 reference', async (est, input) => {
    const gpuOut = await runKernel(await webgpuBackend(), 'group_advantages', input);
    const cpuOut = await runKernel(cpuBackend, 'group_advantages', input);
    const m = input.mask as number[][];
    const B = m.length,
      A = m[0].length;
    const want = groupAdvantagesRef({
      estimator: est as GroupEstimator,
      scores: input.scores as number[],
      group: input.group as number[],
      logprobs: (input.logprobs as number[][]).flat(),
      refLogprobs: (input.ref_logprobs as number[][]).flat(),
      actionMask: m.flat(),
      B,
      A,
      beta: input.beta as number,
      klEstimator: 'k1',
      gamma: 1,
      baselines: (input.baselines as number[] | undefined) ?? null,
    });
    for (const key of ['advantages', 'returns'] as const) {
      const flat = (v: unknown) => (v as number[][]).flat();
      expectClose(flat(cpuOut[key]), want[key], TOL.reduce.rtol, TOL.reduce.atol, `${est} cpu ${key}`);
      expectClose(flat(gpuOut[key]), want[key], TOL.reduce.rtol, TOL.reduce.atol, `${est} webgpu ${key}`);
    }
  });

  it('group_advantages: remax needs baselines of the batch size; the others refuse them', async () => {
    const remax = { ...inputs.group_advantages, estimator: 'remax' };
    await expect(runKernel(cpuBackend, 'group_advantages', remax)).rejects.toThrow('missing field "baselines"');
    await expect(runKernel(cpuBackend, 'group_advantages', { ...remax, baselines: [1, 2] })).rejects.toThrow('field "baselines"');
    await expect(runKernel(cpuBackend, 'group_advantages', { ...inputs.group_advantages, baselines: [1, 2, 3, 4] })).rejects.toThrow('field "baselines"');
  });
});
