// The reward model on WebGPU (float32): Bradley–Terry scores within 1e-5 relative and gradients
// within 1e-4 relative of the float64 CPU model, which tests/integration/rm_bradley_terry.test.ts
// checks against finite differences.
import { describe, expect, it } from 'vitest';
import type { GptConfig } from '../../src/model/config.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { sentimentTask } from '../../src/tasks/sentiment.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { pairsFrom } from '../helpers/preferences.ts';
import { randomParams, rewardGpt } from '../helpers/model.ts';
import { expectClose, rng } from '../helpers/random.ts';

const ALPHABET = sentimentTask.alphabet;
const cfg: GptConfig = { vocabSize: 3 + ALPHABET.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 40, head: 'reward' };

describe('reward model gradient (BT → reward head → trunk)', () => {
  it('WebGPU scores and gradients match the float64 CPU model', async () => {
    const gpuBe = await webgpuBackend();
    const r = rng(9);
    const params = randomParams(cfg, r);
    const pairs = pairsFrom(10, 5);
    const run = async (be: typeof cpuBackend | typeof gpuBe) => {
      const rm = RewardModel.withParams(be, cfg, params, ALPHABET, 'sentiment');
      const scores = await rm.scorePairs(pairs);
      rm.model.zeroGrad();
      const bt = await rm.lossAndBackward(pairs);
      const grads = await be.read(rewardGpt(rm).grads);
      rm.dispose();
      return { scores, bt, grads };
    };
    const want = await run(cpuBackend);
    const got = await run(gpuBe);
    expectClose(got.scores.chosen, want.scores.chosen, 1e-5, 1e-5, 'chosen scores');
    expectClose(got.scores.rejected, want.scores.rejected, 1e-5, 1e-5, 'rejected scores');
    expectClose([got.bt.loss], [want.bt.loss], 1e-5, 1e-6, 'BT loss');
    let gmax = 0;
    for (const g of want.grads) gmax = Math.max(gmax, Math.abs(g));
    expect(gmax).toBeGreaterThan(0);
    expectClose(got.grads, want.grads, 1e-4, 1e-5 * gmax, 'parameter gradients');
  });
});
