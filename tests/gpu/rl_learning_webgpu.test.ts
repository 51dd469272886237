// PPO learns on WebGPU (Dawn; SwiftShader in CI): the stop task from a random-init tiny policy,
// a pair of runs that differ only in β. Both raise the reward and the EOS rate; without the KL
// penalty the policy drifts far further from the reference. Same claims as the CPU-backend
// rl_learning.test.ts, now through the WGSL kernels end to end (~90 s on 2 shared CPU cores).
// Seeds 1, 2, 3 (PPO_LEARN_SEED) all pass: reward gain β=0 +0.54/+0.65/+0.61, β=0.6
// +0.22/+0.58/+0.55; EOS gain at β=0.6 +0.21/+0.41/+0.33; KL ratio β=0 : β=0.6 3.3/2.2/2.7.
import { describe, expect, it } from 'vitest';
import type { PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, tinyCheckpoint, tinyConfig } from './rl_helpers.ts';

const ITERS = 24;
const SEED = Number(process.env.PPO_LEARN_SEED ?? 1);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

async function run(over: Partial<PpoConfig>) {
  const be = await webgpuBackend();
  const config = tinyConfig({ promptsPerBatch: 8, samplesPerPrompt: 4, miniBatches: 2, ppoEpochs: 2, actorLr: 1e-3, seed: SEED, ...over });
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
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
  const head = (xs: number[]) => mean(xs.slice(0, 4));
  const tail = (xs: number[]) => mean(xs.slice(-4));
  const r = { rewardBefore: head(reward), rewardAfter: tail(reward), eosBefore: head(eos), eosAfter: tail(eos), kl: tail(kl) };
  console.log(`[rl_learning_webgpu] seed ${SEED} β=${over.klCoef}: ${JSON.stringify(r)}`);
  return r;
}

describe('PPO learns on WebGPU', () => {
  it('stop task: reward and EOS rate rise; β = 0 drifts far further from the reference than β = 0.6', { timeout: 300_000 }, async () => {
    const free = await run({ klCoef: 0 });
    const tied = await run({ klCoef: 0.6 });
    for (const [name, r] of [['β=0', free], ['β=0.6', tied]] as const) {
      expect(r.rewardAfter, `${name}: reward ${r.rewardBefore} → ${r.rewardAfter}`).toBeGreaterThan(r.rewardBefore + 0.15);
      expect(r.eosAfter, `${name}: eos rate ${r.eosBefore} → ${r.eosAfter}`).toBeGreaterThan(r.eosBefore + 0.2);
    }
    expect(free.kl, `KL to reference: β=0 ${free.kl} vs β=0.6 ${tied.kl}`).toBeGreaterThan(2 * tied.kl);
  });
});
