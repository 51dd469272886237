// Reward-model training: Bradley–Terry on synthetic sentiment preference pairs lifts held-out
// pairwise accuracy well above chance on a tiny model within a few dozen steps, and fine-tuning on
// a person's labels (here: the opposite taste) moves the model towards those labels.
import { describe, expect, it } from 'vitest';
import type { GptConfig } from '../../src/model/config.ts';
import { DEFAULT_RM_TRAIN, RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { lexiconScore, sentimentTask } from '../../src/tasks/sentiment.ts';
import type { PreferencePair } from '../../src/tasks/task.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { rng } from '../helpers/random.ts';

const ALPHABET = sentimentTask.alphabet;
const cfg: GptConfig = { vocabSize: 3 + ALPHABET.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 48, head: 'reward' };

/** Held-out pairs labelled by the noiseless lexicon order (the task's true preference). */
function cleanPairs(seed: number, n: number): PreferencePair[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const p = sentimentTask.preferencePair(r);
    return lexiconScore(p.chosen) > lexiconScore(p.rejected) ? p : { prompt: p.prompt, chosen: p.rejected, rejected: p.chosen };
  });
}

describe.each(BACKENDS)('reward model training on %s', (_name, makeBackend) => {
  // At a constant 3e-3 this fit was 15 steps and failed on ~3% of seeds (CI seed 151727517, and
  // 2 of 40 seeds in a sweep): Adam overshot after the batch was fitted, and a pair whose two
  // responses have the same length (so the EOS position cannot tell them apart) stayed at margin 0
  // while attention saturated on the easy pairs. At 1e-3, over 60 seeds (a sweep on the CPU backend):
  // accuracy below 1.0 on 3 seeds after 20 steps, 1 after 30, none after 40 or 60.
  it('fits a fixed batch of 8 pairs in 50 steps (the whole BT → backward → AdamW loop)', async () => {
    const be = await makeBackend();
    const seed = rng(31).int(0, 1e9);
    const rm = RewardModel.fresh(be, cfg, ALPHABET, 'sentiment', seed);
    const pairs = cleanPairs(32, 8);
    const first = await rm.trainStep(pairs, 1e-3);
    let last = first;
    for (let i = 1; i < 50; i++) last = await rm.trainStep(pairs, 1e-3);
    expect(Number.isFinite(last.loss)).toBe(true);
    expect(last.loss).toBeLessThan(0.5 * first.loss);
    expect(await rm.accuracy(pairs)).toBe(1);
    rm.dispose();
  });
});

// Generalisation needs a few hundred forward/backward passes: run on the float64 CPU backend,
// which is faster than software WebGPU here (the WebGPU training path is covered above and by the
// WebGPU-vs-CPU gradient test in rm_bradley_terry.test.ts).
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
  });
});
