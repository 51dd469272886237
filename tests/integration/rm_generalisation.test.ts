// Reward-model generalisation: Bradley–Terry on synthetic sentiment preference pairs lifts held-out
// pairwise accuracy well above chance on a tiny model. It needs a few hundred forward/backward
// passes, so it runs on the float64 CPU backend, faster than software WebGPU here; the WebGPU
// training path is covered by tests/gpu/rm_train.test.ts and the WebGPU-vs-CPU gradient test in
// tests/gpu/rm_bradley_terry.test.ts.
import { describe, expect, it } from 'vitest';
import type { GptConfig } from '../../src/model/config.ts';
import { DEFAULT_RM_TRAIN, RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { sentimentTask } from '../../src/tasks/sentiment.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { cleanPairs } from '../helpers/preferences.ts';
import { rng } from '../helpers/random.ts';

const ALPHABET = sentimentTask.alphabet;
const cfg: GptConfig = { vocabSize: 3 + ALPHABET.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 48, head: 'reward' };

// Sized so the bound is far from the noise: 60 steps and 128 held-out pairs ended anywhere in
// 0.63–0.77 across seeds (a 128-pair accuracy alone has a standard error of ±0.04); 120 steps on
// 256 pairs ended in 0.77–0.83 over 12 seeds, but TEST_SEED=318654507 drew a model that started
// at 0.563 and ended at 0.707 (gain 0.144 < 0.15). 200 steps: 0.754–0.852 over that seed and
// seeds 1–9, gains 0.19–0.35, so both bounds fail only if training really got worse.
describe('reward model generalisation (cpu)', () => {
  const _name = 'cpu';
  const makeBackend = BACKENDS.find(([n]) => n === 'cpu')![1];
  it('raises held-out pairwise accuracy well above 50% in 200 steps', async () => {
    const be = await makeBackend();
    const seed = rng(21).int(0, 1e9);
    const rm = RewardModel.fresh(be, cfg, ALPHABET, 'sentiment', seed);
    const heldOut = cleanPairs(22, 256);
    const before = await rm.accuracy(heldOut);
    const log = await rm.train((r) => sentimentTask.preferencePair(r), {
      ...DEFAULT_RM_TRAIN,
      steps: 200,
      pairsPerStep: 16,
      seed,
      peakLr: 3e-3,
      warmupSteps: 5,
      evalEvery: 1000,
      heldOut,
    });
    for (const l of log) expect(Number.isFinite(l.loss) && Number.isFinite(l.gradNorm)).toBe(true);
    const after = log.at(-1)!.heldOutAccuracy!;
    console.log(`[rm_train ${_name}] held-out accuracy ${before.toFixed(3)} → ${after.toFixed(3)}`);
    expect(after).toBeGreaterThanOrEqual(0.7);
    expect(after - before).toBeGreaterThanOrEqual(0.15);
    rm.dispose();
  }, 300_000); // 200 float64 steps took 166 s on a loaded 2-core machine, past the 120 s default
});
