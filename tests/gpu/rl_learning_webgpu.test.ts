// PPO learns on WebGPU (Dawn; SwiftShader in CI): the stop task from a random-init tiny policy,
// trained through the WGSL kernels end to end; its reward and EOS rate rise clearly. The β pair
// (β = 0 drifts far further from the reference than β = 0.6) is asserted on the CPU backend in
// rl_learning.test.ts, and rl_backends.test.ts shows the two trainers agree step for step, so one
// run here is enough (the pair made this file take 138 s on 2 cores).
// Seeds 1, 2, 3 (PPO_LEARN_SEED) at β = 0: reward gain +0.54/+0.65/+0.61 (the bound is +0.15).
import { describe, it } from 'vitest';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectStopLearns, runStopTask } from '../helpers/rl.ts';

const ITERS = 24;
const WINDOW = 4;
const SEED = Number(process.env.PPO_LEARN_SEED ?? 1);

describe('PPO learns on WebGPU', () => {
  it('stop task: reward and EOS rate rise through the WGSL kernels', { timeout: 300_000 }, async () => {
    const be = await webgpuBackend();
    const free = await runStopTask(be, { klCoef: 0, seed: SEED }, ITERS, WINDOW);
    console.log(`[rl_learning_webgpu] seed ${SEED}: β=0 ${JSON.stringify(free)}`);
    expectStopLearns(free, 'β=0');
  });
});
