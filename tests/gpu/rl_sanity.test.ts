// Correctness of the PPO plumbing before any tuning, on both backends with a tiny policy:
//   · the first minibatch of epoch 1 sees ratio = 1 exactly (old logprobs come from the same
//     weights, the same temperature and the same logit→action alignment as the training forward);
//   · the policy-gradient sign: after one update on a batch, a second epoch over the same batch
//     finds π_new/π_old > 1 on positively-advantaged tokens and < 1 on negatively-advantaged ones;
//   · evaluation prompts are never training prompts (arithmetic held-out operand pairs).
import { describe, expect, it } from 'vitest';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { iterationPrompts } from '../../src/rl/rollout.ts';
import { arithmeticTask } from '../../src/tasks/arithmetic.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { mean, tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

describe.each(BACKENDS)('PPO plumbing on %s', (_name, makeBackend) => {
  for (const estimator of ['gae', 'rloo'] as const) {
    it(`${estimator}: ratio 1 on the first minibatch at T = 0.7; one update moves logprobs with the advantage sign`, { timeout: 120_000 }, async () => {
      const be = await makeBackend();
      const ck = await tinyCheckpoint('stop');
      const base = {
        temperature: 0.7,
        advantageEstimator: estimator,
        promptsPerBatch: 4,
        samplesPerPrompt: 4,
        miniBatches: 1,
        seed: 11,
        actorLr: 3e-3,
        dualClip: null,
        clipLow: 0.9,
        clipHigh: 5,
      };
      const first = await PpoTrainer.create({ be, config: tinyConfig({ ...base, ppoEpochs: 1 }), actorCheckpoint: ck });
      const r1 = await first.iteration();
      const rollout = first.lastRollout!;
      first.dispose();
      expect(r1.ratios.ratios.length).toBeGreaterThan(0);
      for (const q of r1.ratios.ratios) expect(Math.abs(q - 1), `ratio ${q}`).toBeLessThan(1e-4);
      expect(r1.metrics.clipfrac).toBe(0);
      expect(Math.abs(r1.metrics.approx_kl)).toBeLessThan(1e-5);

      // Same start, same rollout, two epochs of one minibatch: epoch 2's ratios = after/before one step.
      const second = await PpoTrainer.create({ be, config: tinyConfig({ ...base, ppoEpochs: 2 }), actorCheckpoint: ck });
      const r2 = await second.iteration({ rollout });
      second.dispose();
      const { ratios, advantages } = r2.ratios;
      const up = ratios.filter((_, i) => advantages[i] > 0.1).map(Math.log);
      const down = ratios.filter((_, i) => advantages[i] < -0.1).map(Math.log);
      expect(up.length).toBeGreaterThan(0);
      expect(down.length).toBeGreaterThan(0);
      expect(mean(up), 'mean log-ratio on A > 0').toBeGreaterThan(0.01);
      expect(mean(down), 'mean log-ratio on A < 0').toBeLessThan(-0.01);
    });
  }
});

describe('held-out evaluation', () => {
  it('arithmetic evaluation prompts never occur among training prompts', () => {
    const evalSet = new Set(arithmeticTask.evalPrompts(250));
    const cfg = { ...DEFAULT_CONFIG, promptsPerBatch: 64, samplesPerPrompt: 1 };
    for (let iter = 0; iter < 50; iter++) {
      for (const p of iterationPrompts(arithmeticTask, cfg, iter).prompts) expect(evalSet.has(p), p).toBe(false);
    }
  });
});
