// Op arguments are checked once, in src/backend/checks.ts, in front of both backends: every public
// op of each backend's op classes has a check entry, the backends' op files check nothing
// themselves, and a bad argument fails before the op computes (the CPU reference, here; the gpu
// tests run the same calls on WebGPU and compare messages).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { gae } from '../../src/ops/gae.ts';
import { OPS } from '../../src/ops/registry.ts';
import { CpuNnOps } from '../../src/backend/cpu/cpuNn.ts';
import { CpuSeqOps } from '../../src/backend/cpu/cpuSeq.ts';
import { NN_CHECKS, SEQ_CHECKS } from '../../src/backend/checks.ts';
import { WebGpuNnOps } from '../../src/backend/webgpu/webgpuNn.ts';
import { WebGpuSeqOps } from '../../src/backend/webgpu/webgpuSeq.ts';
import { policyLoss } from '../../src/ops/policyLoss.ts';
import { tisWeights } from '../../src/ops/tisWeights.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** Public methods of a class (TypeScript-private helpers are `private`, so read the source for them). */
function publicOps(cls: { prototype: object }, file: string): string[] {
  const src = readFileSync(join(ROOT, file), 'utf8');
  return Object.getOwnPropertyNames(cls.prototype)
    .filter((n) => n !== 'constructor' && typeof (cls.prototype as Record<string, unknown>)[n] === 'function')
    .filter((n) => !new RegExp(`\\bprivate\\s+${n}\\s*\\(`).test(src))
    .sort();
}

describe('one checking layer for both backends', () => {
  const families = [
    [
      'nn',
      NN_CHECKS,
      [
        [CpuNnOps, 'src/backend/cpu/cpuNn.ts'],
        [WebGpuNnOps, 'src/backend/webgpu/webgpuNn.ts'],
      ],
    ],
    [
      'seq',
      SEQ_CHECKS,
      [
        [CpuSeqOps, 'src/backend/cpu/cpuSeq.ts'],
        [WebGpuSeqOps, 'src/backend/webgpu/webgpuSeq.ts'],
      ],
    ],
  ] as const;

  it.each(families)('every public %s op of both backends has a check entry, and no entry lacks an op', (_name, checks, classes) => {
    const entries = Object.keys(checks).sort();
    for (const [cls, file] of classes) expect(publicOps(cls, file)).toEqual(entries);
  });

  it('the backends op files do not check arguments themselves', () => {
    const files = ['cpu/cpuNn.ts', 'cpu/cpuSeq.ts', 'webgpu/webgpuNn.ts', 'webgpu/webgpuSeq.ts'];
    for (const f of files) {
      const src = readFileSync(join(ROOT, 'src/backend', f), 'utf8');
      expect(src, f).not.toMatch(/\bexpect(Shape|DType|Size)\(|\bvalidate[A-Z]\w*\(/);
    }
  });

  it("the ops' bodies do not check arguments themselves (their `check` does, in front of both)", () => {
    for (const { def } of OPS) {
      for (const body of [def.cpu, def.webgpu]) expect(String(body), def.name).not.toMatch(/\bexpect(Shape|DType|Size)\(|\bvalidate[A-Z]\w*\(/);
    }
  });

  it('a bad argument fails with the argument named before the op computes (CPU, incl. the i32 checks it once skipped)', () => {
    const be = new CpuBackend();
    const f32Tokens = be.tensor([0, 1], [1, 2]);
    const i32Pos = be.tensor([0, 1], [1, 2], 'i32');
    const gradOut = be.zeros([2, 4]);
    const gradWte = be.zeros([3, 4]);
    const gradWpe = be.zeros([2, 4]);
    expect(() => be.nn.embeddingBackward(gradOut, f32Tokens, i32Pos, gradWte, gradWpe)).toThrow('embeddingBackward tokens: expected dtype i32, got f32');
    expect(() => be.nn.embeddingBackward(gradOut, i32Pos, f32Tokens, gradWte, gradWpe)).toThrow('embeddingBackward positions: expected dtype i32, got f32');
    // Nothing was accumulated by the rejected calls.
    return be.readMany([gradWte, gradWpe]).then(([a, b]) => {
      expect(Array.from(a).every((v) => v === 0) && Array.from(b).every((v) => v === 0)).toBe(true);
    });
  });

  it('checks keep their messages: PPO (B, A) shapes, parameters, sampling and copy sizes', () => {
    const be = new CpuBackend();
    const x = be.zeros([2, 3]);
    const bad = be.zeros([3, 2]);
    expect(() => gae(be, { rewards: x, values: bad, actionMask: x, gamma: 1, lam: 1 })).toThrow('values: expected shape [2, 3], got [3, 2]');
    expect(() => tisWeights(be, { oldLogprobs: x, rolloutLogprobs: x, actionMask: x, cap: 0 })).toThrow(/cap/);
    expect(() => policyLoss(be, { oldLogprobs: x, logprobs: x, advantages: x, actionMask: x, params: { clipLow: 0, clipHigh: 0.2, clipC: null, agg: 'token-mean' } })).toThrow(
      'policyLoss: clipLow must be a finite number > 0, got 0',
    );
    expect(() => be.nn.adamw(x, bad, x, x, x, null, { lr: 1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, step: 0, maxGradNorm: 0 })).toThrow(
      'adamw: step must be ≥ 1 (1-based), got 0',
    );
    expect(() => be.copy(x, be.zeros([5]))).toThrow('copy: size 6 into 5');
  });
});
