// The KL wiring of the trainer, on the float64 CPU backend where runs are bit-exact:
//   · adaptive KL with the KL only in the loss drives the KL-loss coefficient (OpenRLHF's rule);
//   · `beta` / `shaped_reward_mean` report the β actually applied (0 when the KL is not in the reward);
//   · the adaptive controller is fed verl's scale, kl_token_mean (mean of per-sequence token means).
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import { AdaptiveKlController } from '../../src/rl/klController.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

const be = new CpuBackend();

async function run(over: Partial<PpoConfig>, iters: number, then?: (t: PpoTrainer, i: number) => void) {
  const t = await PpoTrainer.create({ be, config: tinyConfig({ seed: 5, actorLr: 3e-3, ...over }), actorCheckpoint: await tinyCheckpoint('stop') });
  const metrics: Record<string, number>[] = [];
  for (let i = 0; i < iters; i++) {
    then?.(t, i);
    metrics.push((await t.iteration()).metrics);
  }
  const w = await t.readWeights();
  t.dispose();
  return { metrics, actor: w.actor };
}

describe('KL wiring', () => {
  it('adaptive KL with the KL only in the loss moves the KL-loss coefficient (as OpenRLHF), not a reward β', { timeout: 120_000 }, async () => {
    const c = 0.05;
    const kl = { klInReward: false, useKlLoss: true, klLossCoef: c, klLossEstimator: 'k3' as const, klTarget: 0.1, klHorizon: 16 };
    const adaptive = await run({ ...kl, klController: 'adaptive' }, 2);
    const fixed = await run({ ...kl, klController: 'fixed' }, 2);
    // iteration 0 applies c in both runs
    expect(adaptive.metrics[0].kl_loss_coef).toBe(c);
    expect(adaptive.metrics[0].beta).toBe(0);
    // the controller's update after iteration 0, recomputed here
    const ctl = new AdaptiveKlController(c, kl.klTarget, kl.klHorizon);
    ctl.update(adaptive.metrics[0].kl_token_mean, 8);
    expect(ctl.beta).not.toBe(c);
    expect(adaptive.metrics[1].kl_loss_coef).toBe(ctl.beta);
    expect(adaptive.metrics[1].beta).toBe(0);
    // and it is what the update used: a fixed run switched to that coefficient lands on the same weights
    const switched = await run({ ...kl, klController: 'fixed' }, 2, (t, i) => {
      if (i === 1) t.setConfig({ ...t.config, klLossCoef: ctl.beta });
    });
    expect(Array.from(adaptive.actor)).toEqual(Array.from(switched.actor));
    expect(Array.from(adaptive.actor)).not.toEqual(Array.from(fixed.actor));
  });

  it('beta and shaped_reward_mean report 0 / the raw score when the KL is not in the reward', { timeout: 60_000 }, async () => {
    const { metrics } = await run({ klInReward: false, useKlLoss: true, klCoef: 0.3, klController: 'fixed' }, 2);
    for (const m of metrics) {
      expect(m.beta).toBe(0);
      expect(m.shaped_reward_mean).toBeCloseTo(m.reward_mean, 12);
      expect(m.token_reward_sum_mean).toBeCloseTo(m.reward_mean, 12);
    }
    // with the KL in the reward, β is reported and subtracted (KL > 0 after the first update)
    const inReward = await run({ klInReward: true, klCoef: 0.3, klController: 'fixed' }, 2);
    expect(inReward.metrics[1].beta).toBe(0.3);
    expect(inReward.metrics[1].shaped_reward_mean).toBeCloseTo(inReward.metrics[1].reward_mean - 0.3 * inReward.metrics[1].kl_seq, 12);
  });

  it('the adaptive controller measures kl_token_mean (verl), not the per-sequence sum', { timeout: 120_000 }, async () => {
    const base = { klInReward: true, klEstimator: 'k3' as const, klController: 'adaptive' as const, klCoef: 0.1, klHorizon: 16 };
    // iterations 0 and 1 do not depend on the target (KL is 0 at iteration 0: error clipped at −0.2)
    const probe = await run({ ...base, klTarget: 1 }, 2);
    const m1 = probe.metrics[1];
    expect(m1.kl_token_mean).toBeGreaterThan(0);
    expect(m1.kl_seq).toBeGreaterThan(1.5 * m1.kl_token_mean); // responses are longer than one token
    // a target 10% above the token-mean KL: error −0.09 on verl's scale, +0.2 (clipped) on the summed scale
    const target = m1.kl_token_mean * 1.1;
    const { metrics } = await run({ ...base, klTarget: target }, 3);
    expect(metrics[1].kl_token_mean).toBe(m1.kl_token_mean);
    const ctl = new AdaptiveKlController(metrics[1].beta, target, base.klHorizon);
    ctl.update(m1.kl_token_mean, 8);
    expect(metrics[2].beta).toBe(ctl.beta);
    expect(metrics[2].beta).toBeLessThan(metrics[1].beta);
  });
});
