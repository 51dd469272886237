// Every response's tokens as a Hugging Face model's update saw them (hfPpo.ts cfg.inspect), on
// the float64 CPU backend: with one epoch of one minibatch the new log-probs are the old ones (the
// same forward) and nothing clips; in minibatches, each response's numbers are read from its own
// minibatch; with several epochs and a large step the later epochs' ratios
// leave [1 − ε, 1 + ε] and the clip sides follow PPO's rule on the shown numbers (upper with A > 0,
// lower with A < 0); the old and reference log-probs are the scorer's own.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { hfPpoIteration } from '../../src/rl/hf/hfPpo.ts';
import { hfPpoConfig } from '../../src/rl/hf/hfPpoDefaults.ts';
import { epochMinibatches } from '../../src/rl/minibatch.ts';
import { rng } from '../helpers/random.ts';

async function setup() {
  const be = new CpuBackend();
  const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: rng(5900).nextU32() });
  const info = await openHfFolder(folder);
  const model = await HfModel.load(be, folder, info, 'f32');
  const actor = newLoraTrainable(model, { r: 2, alpha: 4, rslora: false, targets: LORA_TARGETS }, 3);
  return { model, roles: { model, actor, critic: null, eosIds: [], padId: 0 } };
}

const prompts = [
  [1, 2, 3],
  [4, 5],
];
// Two different responses to one prompt score differently (a position-weighted sum of ids), so a
// group's advantages are 0 only when its samples are the same tokens: a coarser rule (the share of
// even ids) tied within every group on some model seeds and left nothing to inspect.
const rule = (_p: readonly (readonly number[])[], rs: readonly (readonly number[])[]) => rs.map((x) => x.reduce((s, id, j) => s + id * (j + 1) * 1e-3, 0));

describe('the inspected response of an iteration', () => {
  it('one epoch, one minibatch: every response inspected, new = old, reference = the base’s, nothing clipped', async () => {
    const { model, roles } = await setup();
    const cfg = { ...hfPpoConfig({ estimator: 'group_norm', samplesPerPrompt: 2, maxNewTokens: 4, seed: 2, klCoef: 0.01, lr: 1e-2 }), inspect: true };
    await hfPpoIteration(roles, prompts, rule, cfg, 0); // the actor moves away from the base
    const m = await hfPpoIteration(roles, prompts, rule, cfg, 1);
    const rows = m.inspected!;
    expect(rows).toHaveLength(m.responses.length);
    model.setAdapters(null);
    for (const [b, x] of rows.entries()) {
      expect(x.ids).toEqual(m.responses[b]);
      for (const [j, lp] of x.logprobs.entries()) expect(Math.abs(lp - x.old[j])).toBeLessThanOrEqual(1e-12);
      expect(x.clip.every((c) => c === null)).toBe(true);
      // response b answers prompt ⌊b / 2⌋ (2 samples a prompt)
      const base = await responseLogprobs(model, [prompts[Math.floor(b / 2)]], [x.ids]);
      for (const [j, lp] of base.logprobs[0].entries()) expect(Math.abs(lp - x.ref[j])).toBeLessThanOrEqual(1e-12);
    }
    expect(rows.some((x) => x.advantages.some((a) => a !== 0))).toBe(true);
    model.dispose();
  });

  it('in 2 minibatches of one epoch, each response’s numbers come from its own minibatch: the first sees the rollout’s policy, the second the policy after one step', async () => {
    const { model, roles } = await setup();
    const cfg = { ...hfPpoConfig({ estimator: 'group_norm', samplesPerPrompt: 2, maxNewTokens: 4, seed: 2, klCoef: 0.01, lr: 1e-2, miniBatches: 2 }), inspect: true };
    const m = await hfPpoIteration(roles, prompts, rule, cfg, 0);
    const rows = m.inspected!;
    expect(rows).toHaveLength(4);
    for (const [b, x] of rows.entries()) expect(x.ids).toEqual(m.responses[b]);
    const [first, second] = epochMinibatches(4, 2, cfg.seed, 0, 0);
    const unmoved = (b: number) => rows[b].logprobs.every((lp, j) => Math.abs(lp - rows[b].old[j]) <= 1e-12);
    // the first minibatch is scored before any step: r = 1 exactly
    for (const b of first) expect(unmoved(b), `row ${b}`).toBe(true);
    // the second after the first's step, which moved the policy unless all its advantages were 0
    const stepped = Array.from(first).some((b) => rows[b].advantages.some((a) => a !== 0));
    expect(Array.from(second).every(unmoved)).toBe(!stepped);
    model.dispose();
  });

  it('several epochs with a large step: tokens clip, on the side the advantage’s sign says', async () => {
    const { model, roles } = await setup();
    const cfg = { ...hfPpoConfig({ estimator: 'group_norm', samplesPerPrompt: 2, maxNewTokens: 4, seed: 2, klCoef: 0.01, lr: 0.2, ppoEpochs: 4 }), inspect: true };
    const sides: string[] = [];
    for (let it = 0; it < 4; it++) {
      for (const x of (await hfPpoIteration(roles, prompts, rule, cfg, it)).inspected!)
        x.clip.forEach((c, j) => {
          if (c === null) return;
          sides.push(c);
          const ratio = Math.exp(x.logprobs[j] - x.old[j]);
          if (c === 'upper') expect(x.advantages[j] > 0 && ratio > 1 + cfg.policy.clipHigh).toBe(true);
          if (c === 'lower') expect(x.advantages[j] < 0 && ratio < 1 - cfg.policy.clipLow).toBe(true);
        });
    }
    expect(sides.length).toBeGreaterThan(0);
    model.dispose();
  });
});
