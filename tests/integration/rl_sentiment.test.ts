// Reward hacking without a KL penalty: the sentiment task from the shipped SFT checkpoint, scored
// by the shipped learned reward model, a pair of runs that differ only in β (KL-in-reward
// coefficient, k1 estimator). Both raise the reward model's score; with β = 0 the policy finds the
// reward model's blind spots (letter soup such as "awarm", "vevevev…" that the reward model scores
// as positive), its KL to the reference explodes and the reference finds its text unlikely
// (fluency = mean log-prob of the response tokens under the reference); with β = 0.6 it stays much
// closer to the reference and reads like the SFT grammar.
// Runs on the float64 CPU backend: the claim is about the recipe, not the kernels (every kernel is
// checked against its reference elsewhere, rl_backends.test.ts shows the two trainers agree step
// for step, and rl_learning_webgpu.test.ts learns through the WGSL end to end), and software WebGPU
// made this the suite's second-slowest file (134 s).
// The preset's own recipe and budget: lr 1e-3, one update per iteration, 20 iterations × 16
// responses per run.
// Word-level distinct-n is logged, not asserted: the hacked text is mostly novel non-words, so
// it often reads as "diverse" even when it is one repeated letter pattern.
// Seeds 1, 2, 3 (PPO_SENTIMENT_SEED) all pass on the CPU backend with the checkpoints that
// `npm run pretrain -- --task sentiment` and `npm run train-rm -- --steps 150 --pairs 16 --backend cpu`
// write (about 90 s for the pair): reward gain β=0 +0.73/+1.31/+1.26, β=0.6 +0.58/+0.99/+0.68;
// KL_seq β=0 86.7/36.1/50.3 vs β=0.6 2.3/3.9/2.1 (ratio 38/9.3/24); fluency after β=0
// −6.6/−3.1/−4.3 vs β=0.6 −0.77/−0.99/−0.70 (before ≈ −0.6).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, mean, shippedCheckpoint } from '../helpers/rl.ts';
import { findPreset, presetValues } from '../../src/rl/presets.ts';

const ITERS = findPreset('Reward hacking without KL')!.iterations;
const SEED = Number(process.env.PPO_SENTIMENT_SEED ?? 1);
const BETA = 0.6;
const RM_PATH = join(__dirname, '..', '..', 'public', 'checkpoints', 'sentiment_rm.safetensors');

// The page's "Reward hacking without KL" preset (RLOO 4×4, 16-token responses, lr 3e-3, k1 KL in
// the reward), at the β under test.
function sentimentConfig(klCoef: number): PpoConfig {
  return { ...DEFAULT_CONFIG, ...presetValues('Reward hacking without KL'), seed: SEED, klCoef };
}

async function run(klCoef: number) {
  const be = cpuBackend;
  const actorCheckpoint = shippedCheckpoint('sentiment')!;
  const rewardModel = RewardModel.fromCheckpoint(be, new Uint8Array(readFileSync(RM_PATH)), { task: 'sentiment' });
  const trainer = await PpoTrainer.create({ be, config: sentimentConfig(klCoef), actorCheckpoint, rewardModel });
  const series: Record<'reward' | 'klSeq' | 'fluency' | 'distinct1' | 'distinct2', number[]> = { reward: [], klSeq: [], fluency: [], distinct1: [], distinct2: [] };
  let lastTexts: string[] = [];
  for (let i = 0; i < ITERS; i++) {
    const r = await trainer.iteration();
    const m = r.metrics;
    expectFiniteMetrics(m, `β=${klCoef} iteration ${i}`);
    series.reward.push(m.reward_mean);
    series.klSeq.push(m.kl_seq);
    series.fluency.push(m.fluency);
    series.distinct1.push(m.distinct_1);
    series.distinct2.push(m.distinct_2);
    lastTexts = r.samples.map((s) => s.response);
  }
  trainer.dispose();
  rewardModel.dispose();
  // Before = the first two batches (iteration 0 samples the SFT policy itself); after = the last four.
  const head = (xs: number[]) => mean(xs.slice(0, 2));
  const tail = (xs: number[]) => mean(xs.slice(-4));
  const r = {
    rewardBefore: head(series.reward),
    rewardAfter: tail(series.reward),
    klSeq: tail(series.klSeq),
    fluencyBefore: head(series.fluency),
    fluencyAfter: tail(series.fluency),
    distinct1Before: head(series.distinct1),
    distinct1After: tail(series.distinct1),
    distinct2Before: head(series.distinct2),
    distinct2After: tail(series.distinct2),
  };
  const round = (x: number) => Math.round(x * 1000) / 1000;
  console.log(
    `[rl_sentiment] seed ${SEED} β=${klCoef}: ${JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v)])))}\n` +
      `  last samples: ${lastTexts.map((t) => JSON.stringify(t)).join(' ')}`,
  );
  return r;
}

describe('PPO on sentiment with the learned reward model (CPU reference backend)', () => {
  it('shipped checkpoints exist', () => {
    expect(shippedCheckpoint('sentiment'), 'public/checkpoints/sentiment.safetensors').not.toBeNull();
    expect(existsSync(RM_PATH), RM_PATH).toBe(true);
  });

  it(`β = 0 reward-hacks (KL explodes, fluency drops) while β = ${BETA} stays near the reference; both raise the reward`, { timeout: 420_000 }, async () => {
    const free = await run(0);
    const tied = await run(BETA);
    for (const [name, r] of [
      ['β=0', free],
      [`β=${BETA}`, tied],
    ] as const) {
      expect(r.rewardAfter, `${name}: reward ${r.rewardBefore} → ${r.rewardAfter}`).toBeGreaterThan(r.rewardBefore + 0.5);
    }
    expect(free.klSeq, `KL to reference (per sequence): β=0 ${free.klSeq} vs β=${BETA} ${tied.klSeq}`).toBeGreaterThan(3 * tied.klSeq);
    expect(free.klSeq, `β=0 KL to reference ${free.klSeq}`).toBeGreaterThan(20);
    expect(free.fluencyAfter, `fluency after: β=0 ${free.fluencyAfter} vs β=${BETA} ${tied.fluencyAfter}`).toBeLessThan(tied.fluencyAfter - 1);
    expect(free.fluencyAfter, `β=0 fluency ${free.fluencyBefore} → ${free.fluencyAfter}`).toBeLessThan(free.fluencyBefore - 1.5);
  });
});
