// One-click experiments: each sets a few config values and explains what to look for.
import type { PpoConfig } from '../rl/config.ts';

export interface Preset {
  name: string;
  /** Two sentences: what it sets up, and what to watch. */
  explanation: string;
  values: Partial<PpoConfig>;
}

export const PRESETS: readonly Preset[] = [
  {
    name: 'Learn arithmetic',
    explanation:
      'Starts from the noisy SFT model (about 17% of held-out sums right greedily), rewards only exact answers and scores each of 4 samples against the other 3 (RLOO). Watch the reward rise: in CI the same recipe lifts held-out greedy accuracy by 6–8 points within 40 iterations.',
    // tests/gpu/rl_arithmetic.test.ts trains exactly this recipe
    values: { task: 'arithmetic', rewardSource: 'rule', advantageEstimator: 'rloo', promptsPerBatch: 16, samplesPerPrompt: 4, maxResponseLength: 4, ppoEpochs: 1, miniBatches: 2, actorLr: 2e-4, klCoef: 0 },
  },
  {
    name: 'Reward hacking without KL',
    explanation:
      'β is set to 0 on the sentiment task, so nothing keeps the policy close to the reference model while it chases the learned reward model\'s score. Watch the reward climb while KL explodes and the samples drift into repetitive text; Reset, set KL coefficient β to 0.6 and run again to overlay a run that stays fluent.',
    // tests/gpu/rl_sentiment.test.ts trains exactly this recipe at β = 0 and β = 0.6
    values: {
      task: 'sentiment',
      rewardSource: 'model',
      klCoef: 0,
      klEstimator: 'k1',
      klInReward: true,
      useKlLoss: false,
      klController: 'fixed',
      advantageEstimator: 'rloo',
      promptsPerBatch: 4,
      samplesPerPrompt: 4,
      maxResponseLength: 16,
      ppoEpochs: 1,
      miniBatches: 1,
      actorLr: 3e-3,
      warmupSteps: 0,
      entropyCoef: 0,
    },
  },
  {
    name: 'Tight vs loose clipping',
    explanation:
      'ε = 0.05 keeps every update within ±5% of the old policy; run it, Reset, set Clip ε to 0.5 and run again to overlay the two. Tight clipping raises the clip fraction and slows learning, loose clipping learns faster but with a noisier, larger approx KL.',
    values: { clipLow: 0.05, clipHigh: 0.05, ppoEpochs: 4, dualClip: 3 },
  },
  {
    name: 'PPO vs GRPO',
    explanation:
      'GRPO drops the critic and scores each response against the other samples of the same prompt, with the KL as a loss term instead of a reward penalty. Compare its reward curve with a GAE run: no value loss, but more samples per prompt.',
    values: { advantageEstimator: 'group_norm', samplesPerPrompt: 4, klInReward: false, useKlLoss: true, klLossCoef: 0.01, klLossEstimator: 'k3', klController: 'fixed' },
  },
  {
    name: 'Adaptive KL',
    explanation:
      'The adaptive controller raises β when the measured KL exceeds the target and lowers it when below. Watch the β chart move and the KL chart settle around the target of 1.',
    values: { klController: 'adaptive', klInReward: true, klCoef: 0.1, klTarget: 1, klHorizon: 1000, advantageEstimator: 'gae' },
  },
];

/** The values of the preset called `name` (tests train the page's recipes, not look-alikes). */
export function presetValues(name: string): Partial<PpoConfig> {
  const preset = PRESETS.find((p) => p.name === name);
  if (!preset) throw new Error(`no preset named "${name}"`);
  return preset.values;
}

/** What the no-WebGPU fallback trains on the float64 CPU backend: small enough to finish. */
export const SMALL_CPU_PRESET: Partial<PpoConfig> = {
  nLayer: 1,
  nHead: 2,
  dModel: 32,
  promptsPerBatch: 4,
  samplesPerPrompt: 2,
  maxResponseLength: 4,
  ppoEpochs: 1,
  miniBatches: 1,
};
