// Op arguments are checked once, by each op's `check` (src/ops/), which Backend.run calls in front
// of either body: every op states its check, the bodies check nothing themselves, and a bad argument
// fails before the op computes (the CPU reference, here; the gpu tests run the same calls on WebGPU
// and compare messages). Every op defined under src/ops/ is in the registry, once.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { embeddingBackward } from '../../src/ops/embedding.ts';
import { gae } from '../../src/ops/gae.ts';
import { adamw } from '../../src/ops/optim.ts';
import { policyLoss } from '../../src/ops/policyLoss.ts';
import { OPS } from '../../src/ops/registry.ts';
import { tisWeights } from '../../src/ops/tisWeights.ts';

const OPS_DIR = resolve(import.meta.dirname, '../../src/ops');

/** `export const name: Op<…> = defineOp(` in the op modules: every op defined, by its exported name. */
function definedOps(): string[] {
  return readdirSync(OPS_DIR)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => [...readFileSync(join(OPS_DIR, f), 'utf8').matchAll(/^export const (\w+): Op<[^=]*= defineOp\(/gm)].map((m) => m[1]));
}

describe('one checking layer for both backends', () => {
  it('every op defined under src/ops/ is in the registry once, under the name it is exported as', () => {
    const names = OPS.map((op) => op.def.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(definedOps().sort());
  });

  it('every op states its check; only the ops whose argument types say it all have none', () => {
    for (const { def } of OPS) expect(def.check === null || typeof def.check === 'function', def.name).toBe(true);
    expect(OPS.filter((op) => op.def.check === null).map((op) => op.def.name)).toEqual(['gelu', 'scale', 'fill', 'gradNorm']);
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
    expect(() => embeddingBackward(be, { gradOut, tokens: f32Tokens, positions: i32Pos, gradWte, gradWpe })).toThrow('embeddingBackward tokens: expected dtype i32, got f32');
    expect(() => embeddingBackward(be, { gradOut, tokens: i32Pos, positions: f32Tokens, gradWte, gradWpe })).toThrow('embeddingBackward positions: expected dtype i32, got f32');
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
    expect(() =>
      adamw(be, { params: x, grads: bad, m: x, v: x, decayMask: x, hp: { lr: 1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, step: 0, maxGradNorm: 0 } }),
    ).toThrow('adamw: step must be ≥ 1 (1-based), got 0');
    expect(() => be.copy(x, be.zeros([5]))).toThrow('copy: size 6 into 5');
  });
});
