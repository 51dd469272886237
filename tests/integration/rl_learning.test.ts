// Does PPO learn? The "stop at length n" task from a random-init tiny policy: at first most
// responses never emit EOS (score −1), so the reward has plenty of room to rise. These runs use
// the float64 CPU reference backend: at this size plain JS is several times faster than software
// WebGPU (SwiftShader), and rl_backends.test.ts shows that the two trainers agree step for step.
//   · the reward and the EOS rate rise clearly;
//   · with β = 0 the policy drifts much further from the reference (KL) than with β = 0.6, while
//     both raise the reward.
import { describe, it } from 'vitest';
import { cpuBackend } from '../helpers/backends.ts';
import { expectStopPairLearns, runStopTask } from '../helpers/rl.ts';

const ITERS = 30;
const WINDOW = 5;

describe('PPO learns (CPU reference backend)', () => {
  it('stop task: reward and EOS rate rise; β = 0 drifts far further from the reference than β = 0.6', { timeout: 240_000 }, async () => {
    const free = await runStopTask(cpuBackend, { klCoef: 0 }, ITERS, WINDOW);
    const tied = await runStopTask(cpuBackend, { klCoef: 0.6 }, ITERS, WINDOW);
    expectStopPairLearns(free, tied);
  });
});
