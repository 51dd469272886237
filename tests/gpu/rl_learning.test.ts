// Does PPO learn? The "stop at length n" task from a random-init tiny policy: at first most
// responses never emit EOS (score −1), so the reward has plenty of room to rise. These runs use
// the float64 CPU reference backend: at this size plain JS is several times faster than software
// WebGPU (SwiftShader), and rl_backends.test.ts shows that the two trainers agree step for step.
//   · the reward and the EOS rate rise clearly;
//   · with β = 0 the policy drifts much further from the reference (KL) than with β = 0.6, while
//     both raise the reward.
import { describe, expect, it } from 'vitest';
import type { PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, tinyCheckpoint, tinyConfig } from './rl_helpers.ts';

const ITERS = 30;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

async function run(over: Partial<PpoConfig>) {
  const config = tinyConfig({ promptsPerBatch: 8, samplesPerPrompt: 4, miniBatches: 2, ppoEpochs: 2, actorLr: 1e-3, seed: 1, ...over });
  const trainer = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: await tinyCheckpoint('stop') });
  const reward: number[] = [];
  const eos: number[] = [];
  const kl: number[] = [];
  for (let i = 0; i < ITERS; i++) {
    const m = (await trainer.iteration()).metrics;
    expectFiniteMetrics(m, `iteration ${i}`);
    reward.push(m.reward_mean);
    eos.push(m.eos_rate);
    kl.push(m.kl_seq);
  }
  trainer.dispose();
  const head = (xs: number[]) => mean(xs.slice(0, 5));
  const tail = (xs: number[]) => mean(xs.slice(-5));
  return { rewardBefore: head(reward), rewardAfter: tail(reward), eosBefore: head(eos), eosAfter: tail(eos), kl: tail(kl) };
}

describe('PPO learns (CPU reference backend)', () => {
  it('stop task: reward and EOS rate rise; β = 0 drifts far further from the reference than β = 0.6', { timeout: 240_000 }, async () => {
    const free = await run({ klCoef: 0 });
    const tied = await run({ klCoef: 0.6 });
    for (const [name, r] of [['β=0', free], ['β=0.6', tied]] as const) {
      expect(r.rewardAfter, `${name}: reward ${r.rewardBefore} → ${r.rewardAfter}`).toBeGreaterThan(r.rewardBefore + 0.15);
      expect(r.eosAfter, `${name}: eos rate ${r.eosBefore} → ${r.eosAfter}`).toBeGreaterThan(r.eosBefore + 0.2);
    }
    expect(free.kl, `KL to reference: β=0 ${free.kl} vs β=0.6 ${tied.kl}`).toBeGreaterThan(2 * tied.kl);
  });
});
