// The NaN/Inf guard of a Hugging Face model's iteration (src/rl/hf/hfGuard.ts), on the float64 CPU
// backend and a fresh synthetic Qwen3: a non-finite score, and an update that overflows the
// adapters, are each caught and named, and the actor is put back exactly as it was before the
// iteration (parameters, AdamW moments, step count); a finite iteration passes through unchanged.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { HfNanGuard, nonFiniteMessage } from '../../src/rl/hf/hfGuard.ts';
import { hfPpoConfig } from '../../src/rl/hf/hfPpoDefaults.ts';
import { rng } from '../helpers/random.ts';

describe('HfNanGuard', () => {
  it('catches a non-finite score and an overflowing update, and puts the actor back exactly', async () => {
    const be = new CpuBackend();
    const r = rng(5700);
    const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: r.nextU32() });
    const info = await openHfFolder(folder);
    const model = await HfModel.load(be, folder, info, 'f32');
    const actor = newLoraTrainable(model, { r: 2, alpha: 4, rslora: false, targets: LORA_TARGETS }, 3);
    const roles = { model, actor, critic: null, eosIds: [], padId: 0 };
    const prompts = [
      [1, 2, 3],
      [4, 5],
    ];
    const cfg = hfPpoConfig({ estimator: 'group_norm', samplesPerPrompt: 2, maxNewTokens: 3, seed: 9, klCoef: 0.01, lr: 1e-2 });
    const rule = (_p: readonly (readonly number[])[], rs: readonly (readonly number[])[]) => rs.map((x) => x.filter((id) => id % 2 === 0).length);
    const guard = new HfNanGuard(be);
    const state = async () => ({ params: await be.read(actor.params), m: await be.read(actor.m), v: await be.read(actor.v), steps: actor.steps });
    try {
      const ok = await guard.iteration(roles, prompts, rule, cfg, 0);
      expect(ok.nonFinite).toBeNull();
      expect(ok.metrics!.policyLoss).toEqual(expect.any(Number));
      const before = await state();
      expect(before.steps).toBe(1);

      const infinite = await guard.iteration(roles, prompts, (p, rs) => rule(p, rs).map((x, i) => (i === 0 ? Number.POSITIVE_INFINITY : x)), cfg, 1);
      expect(infinite.nonFinite).toEqual({ iter: 2, quantity: 'reward_mean', value: Number.POSITIVE_INFINITY });
      expect(await state()).toEqual(before);
      expect(nonFiniteMessage(infinite.nonFinite!)).toBe(
        'iteration 2: reward_mean became Infinity; the adapters were put back as they were before it. Lower the learning rate, or check the reward for non-finite scores',
      );

      // Every response scored apart, so no group's advantages are all 0 and the step moves the adapters.
      const distinct = (_p: readonly (readonly number[])[], rs: readonly (readonly number[])[]) => rs.map((_x, i) => i);
      const overflow = await guard.iteration(roles, prompts, distinct, { ...cfg, actorHp: { ...cfg.actorHp, lr: 1e300, maxGradNorm: 0 } }, 2);
      expect(overflow.nonFinite).toMatchObject({ iter: 3 });
      expect(await state()).toEqual(before);

      const again = await guard.iteration(roles, prompts, rule, cfg, 3);
      expect(again.nonFinite).toBeNull();
      expect(actor.steps).toBe(2);
    } finally {
      guard.dispose();
      model.dispose();
    }
  });
});
