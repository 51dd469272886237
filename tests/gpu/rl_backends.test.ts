// One PPO iteration of the WebGPU trainer against the float64 CPU reference trainer on the same
// config, seed and rollout (the CPU trainer is fed the WebGPU rollout): the same losses and
// statistics, and the same updated actor and critic weights.
import { describe, expect, it } from 'vitest';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

/** ‖a − b‖ / ‖b‖ */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num += (a[i] - b[i]) ** 2;
    den += b[i] ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

const sub = (a: ArrayLike<number>, b: ArrayLike<number>) => Float64Array.from(a, (x, i) => x - b[i]);

/** One iteration of each backend from the same checkpoint, the CPU fed the WebGPU rollout; checks both are finite and the rollout varied. */
async function iterateBoth(config: ReturnType<typeof tinyConfig>) {
  const ck = await tinyCheckpoint('stop', 9);
  const gpuT = await PpoTrainer.create({ be: await webgpuBackend(), config, actorCheckpoint: ck });
  const cpuT = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: ck });
  const w0 = await cpuT.readWeights();
  const g = await gpuT.iteration();
  const c = await cpuT.iteration({ rollout: gpuT.lastRollout! });
  expectFiniteMetrics(g.metrics, 'webgpu');
  expectFiniteMetrics(c.metrics, 'cpu');
  // the rollout must have given the test something to learn from
  expect(c.metrics.reward_max).toBeGreaterThan(c.metrics.reward_min);
  return { gpuT, cpuT, w0, g, c };
}

describe('PPO trainer: WebGPU vs float64 CPU reference', () => {
  it('one iteration gives the same losses and weights', async () => {
    const config = tinyConfig({ seed: 21, ppoEpochs: 2, useKlLoss: true, entropyCoef: 0.01, actorLr: 1e-3, criticLr: 1e-3 });
    const { gpuT, cpuT, w0, g, c } = await iterateBoth(config);

    // Statistics: float32 forward/backward vs float64, 1e-3 relative (+ small absolute floor).
    const keys = [
      'reward_mean',
      'kl',
      'kl_seq',
      'policy_loss',
      'value_loss',
      'entropy',
      'approx_kl',
      'kl_loss',
      'actor_grad_norm',
      'critic_grad_norm',
      'advantages_std',
      'returns_mean',
      'explained_variance',
      'clipfrac',
      'vf_clipfrac',
    ];
    for (const k of keys) {
      const tol = 1e-3 * Math.abs(c.metrics[k]) + 1e-5;
      expect(Math.abs(g.metrics[k] - c.metrics[k]), `${k}: webgpu ${g.metrics[k]} vs cpu ${c.metrics[k]}`).toBeLessThanOrEqual(tol);
    }
    for (let i = 0; i < c.ratios.ratios.length; i++) {
      expect(Math.abs(g.ratios.ratios[i] - c.ratios.ratios[i])).toBeLessThanOrEqual(1e-4);
      expect(Math.abs(g.ratios.advantages[i] - c.ratios.advantages[i])).toBeLessThanOrEqual(1e-4 * (1 + Math.abs(c.ratios.advantages[i])));
    }

    // Weights: 1e-3 relative on the weights themselves, and the update (w − w0) itself agreeing to
    // 1e-2 relative in norm (Adam normalises tiny gradients, so a sign flip of a ~1e-7 gradient
    // moves an element by up to 2·lr; the norm check still fails for any systematic difference).
    const wg = await gpuT.readWeights();
    const wc = await cpuT.readWeights();
    for (const [name, a, b, b0] of [
      ['actor', wg.actor, wc.actor, w0.actor],
      ['critic', wg.critic!, wc.critic!, w0.critic!],
    ] as const) {
      expect(relDiff(a, b), `${name} weights`).toBeLessThanOrEqual(1e-3);
      const du = relDiff(sub(a, b0), sub(b, b0));
      expect(du, `${name} update`).toBeLessThanOrEqual(1e-2);
      expect(relDiff(b, b0), `${name} moved`).toBeGreaterThan(1e-4);
    }
    gpuT.dispose();
    cpuT.dispose();
  });

  // The modern family through the whole trainer: GSPO with a straight-through KL loss, and CISPO with
  // token-level TIS against a top-k sampler (π_rollout ≠ π_old) and verl's constant-norm scale.
  const FAMILY = [
    { lossMode: 'gspo', useKlLoss: true, klLossEstimator: 'k3+' },
    { lossMode: 'cispo', tisCap: 1.5, topK: 3, temperature: 0.8, lossAgg: 'seq-mean-token-sum-norm', normScale: 'verl', klEstimator: 'k1+' },
    { lossMode: 'sapo', useKlLoss: true, klLossEstimator: 'k3' },
    { lossMode: 'gpg', lossAgg: 'seq-mean-token-mean' },
    { lossMode: 'geo_mean', tisCap: 1.5, topK: 3, temperature: 0.8 },
    { lossMode: 'clip_cov', lossAgg: 'token-mean' },
    { lossMode: 'kl_cov', useKlLoss: true, klLossEstimator: 'k3', klCovRatio: 0.05 },
  ] as const;
  for (const over of FAMILY) {
    it(`${over.lossMode}: one iteration gives the same losses and weights`, async () => {
      const config = tinyConfig({ seed: 23, ppoEpochs: 2, actorLr: 1e-3, criticLr: 1e-3, ...over });
      const { gpuT, cpuT, w0, g, c } = await iterateBoth(config);
      if ('tisCap' in over) expect(c.metrics.rollout_old_max_abs_diff).toBeGreaterThan(1e-3); // top-k: the sampler differs from π_old
      for (const k of ['policy_loss', 'value_loss', 'approx_kl', 'kl_loss', 'actor_grad_norm', 'clipfrac', 'rollout_old_kl']) {
        const tol = 1e-3 * Math.abs(c.metrics[k]) + 1e-5;
        expect(Math.abs(g.metrics[k] - c.metrics[k]), `${k}: webgpu ${g.metrics[k]} vs cpu ${c.metrics[k]}`).toBeLessThanOrEqual(tol);
      }
      if (over.lossMode === 'clip_cov' || over.lossMode === 'kl_cov') {
        // the samples view's marks: the last step's own choice, the same tokens on both backends
        const picks = (x: typeof c) => x.samples.flatMap((row) => row.tokens.map((t) => t.covPicked));
        expect(picks(c).every((p) => typeof p === 'boolean')).toBe(true);
        expect(picks(g)).toEqual(picks(c));
        if (over.lossMode === 'kl_cov') expect(picks(c).some((p) => p)).toBe(true);
      }
      const wg = await gpuT.readWeights();
      const wc = await cpuT.readWeights();
      expect(relDiff(wg.actor, wc.actor), 'actor weights').toBeLessThanOrEqual(1e-3);
      expect(relDiff(sub(wg.actor, w0.actor), sub(wc.actor, w0.actor)), 'actor update').toBeLessThanOrEqual(1e-2);
      expect(relDiff(wc.actor, w0.actor), 'actor moved').toBeGreaterThan(1e-4);
      gpuT.dispose();
      cpuT.dispose();
    });
  }
});
