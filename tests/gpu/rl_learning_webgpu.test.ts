// PPO learns on WebGPU (Dawn; SwiftShader in CI): the stop task from a random-init tiny policy,
// a pair of runs that differ only in β. Both raise the reward and the EOS rate; without the KL
// penalty the policy drifts far further from the reference. Same claims as the CPU-backend
// rl_learning.test.ts, now through the WGSL kernels end to end (~90 s on 2 shared CPU cores).
// Seeds 1, 2, 3 (PPO_LEARN_SEED) all pass: reward gain β=0 +0.54/+0.65/+0.61, β=0.6
// +0.22/+0.58/+0.55; EOS gain at β=0.6 +0.21/+0.41/+0.33; KL ratio β=0 : β=0.6 3.3/2.2/2.7.
import { describe, it } from 'vitest';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectStopPairLearns, runStopTask } from './rl_helpers.ts';

const ITERS = 24;
const WINDOW = 4;
const SEED = Number(process.env.PPO_LEARN_SEED ?? 1);

describe('PPO learns on WebGPU', () => {
  it('stop task: reward and EOS rate rise; β = 0 drifts far further from the reference than β = 0.6', { timeout: 300_000 }, async () => {
    const be = await webgpuBackend();
    const free = await runStopTask(be, { klCoef: 0, seed: SEED }, ITERS, WINDOW);
    const tied = await runStopTask(be, { klCoef: 0.6, seed: SEED }, ITERS, WINDOW);
    console.log(`[rl_learning_webgpu] seed ${SEED}: β=0 ${JSON.stringify(free)} β=0.6 ${JSON.stringify(tied)}`);
    expectStopPairLearns(free, tied);
  });
});
