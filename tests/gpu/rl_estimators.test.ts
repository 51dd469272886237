// Every advantage estimator and every KL estimator (in the reward and in the KL loss), with every
// loss aggregation, for two PPO iterations on WebGPU: no NaN anywhere, every metric finite, the
// sample rows and ratio histogram filled, and one readback per iteration once the rollout is sampled
// ahead (two with targetKl).
import { describe, expect, it } from 'vitest';
import { KL_ESTIMATORS, LOSS_AGGS } from '../../src/backend/ppoOps.ts';
import { ADVANTAGE_ESTIMATORS, KL_LOSS_ESTIMATORS } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

describe('PPO trainer estimators on webgpu', () => {
  it.each(ADVANTAGE_ESTIMATORS.map((e, i) => [e, i] as const))('%s runs two iterations with finite metrics', async (estimator, i) => {
    const be = await webgpuBackend();
    const config = tinyConfig({
      advantageEstimator: estimator,
      // Reward: indices 1–6 (k1_clamped, reward-only, included; k1 is the default elsewhere). Loss: all six it accepts.
      klEstimator: KL_ESTIMATORS[(i + 1) % KL_ESTIMATORS.length],
      useKlLoss: true,
      klLossEstimator: KL_LOSS_ESTIMATORS[i % KL_LOSS_ESTIMATORS.length],
      klLossCoef: 0.05,
      lossAgg: LOSS_AGGS[i % LOSS_AGGS.length],
      entropyCoef: 0.01,
      klController: i % 2 === 0 ? 'adaptive' : 'fixed',
      klTarget: 0.01,
      klHorizon: 100,
      dualClip: i % 2 === 0 ? 3 : null,
      valueClip: i % 2 === 0 ? 0.2 : null,
      ppoEpochs: 2,
      // large lr so that the second iteration's policy moved away from the reference
      actorLr: 3e-3,
      seed: 10 + i,
    });
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
    const betas: number[] = [];
    for (let it = 0; it < 2; it++) {
      const r = await trainer.iteration();
      const where = `${estimator} iteration ${it}`;
      expectFiniteMetrics(r.metrics, where);
      expect(r.iter).toBe(it);
      // Iteration 0 reads its own rollout, then the final statistics with iteration 1's rollout
      // (sampled ahead); from iteration 1 on that one readback is all.
      expect(r.metrics.gpu_readbacks, where).toBe(it === 0 ? 2 : 1);
      expect(r.metrics.update_steps).toBe(4);
      expect(r.samples.length).toBeGreaterThan(0);
      for (const row of r.samples) {
        expect(row.tokens.length).toBeGreaterThan(0);
        for (const t of row.tokens) for (const v of [t.advantage, t.kl, t.ratio, t.value, t.reward!, t.return!]) expect(Number.isFinite(v), where).toBe(true);
      }
      expect(r.ratios.ratios.length).toBe(r.ratios.advantages.length);
      expect(r.ratios.ratios.every((x) => Number.isFinite(x) && x > 0)).toBe(true);
      if (estimator !== 'gae') {
        expect(r.metrics.value_loss).toBe(0); // critic-free estimators
      }
      betas.push(r.metrics.beta);
    }
    expect(trainer.iter).toBe(2);
    // the adaptive controller lowers β while KL is under its (tiny) target… unless KL overshoots it
    if (config.klController === 'fixed') expect(betas).toEqual([config.klCoef, config.klCoef]);
    else expect(betas[1]).not.toBe(betas[0]);
    const evalMetrics = await trainer.evaluate(8);
    expect(Object.values(evalMetrics).every(Number.isFinite)).toBe(true);
    trainer.dispose();
  });

  it('targetKl stops the epoch loop early with one extra readback per epoch boundary', async () => {
    const be = await webgpuBackend();
    const config = tinyConfig({ ppoEpochs: 3, targetKl: 1e-9, actorLr: 1e-2, seed: 5 });
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
    await trainer.iteration(); // iteration 0: policy = reference, ratios start at 1
    const r = await trainer.iteration();
    expectFiniteMetrics(r.metrics, 'targetKl');
    expect(r.metrics.approx_kl).toBeGreaterThan(1e-9);
    expect(r.metrics.update_steps).toBe(2); // stopped after the first epoch of two minibatches
    expect(r.metrics.gpu_readbacks).toBe(2); // the epoch boundary's, and the final one (its rollout was sampled ahead)
    trainer.dispose();
  });
});
