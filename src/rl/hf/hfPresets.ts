// Presets for a real model: the "Your own model" panel's two starting points, each a set of
// training settings and the claim `npm run learning -- --model public/models/chat-arithmetic`
// checks on 3 seeds of the shipped chat model (src/cli/learningHf.ts), as for every card of the
// playground. The page shows a claim only once it holds (docs/learning.md, "Presets for a real
// model", has the measurements); until then it says what the preset does. Free of backend imports
// (the page reads it).
import { DEFAULT_HF_TRAIN, type HfTrainSettings } from './hfTrainSettings.ts';

export interface HfPresetClaim {
  /**
   * The held-out accuracy over sampled answers (100 prompts × 8 draws at the rollout's temperature,
   * the same draws' seed before and after) must rise by at least this much, mean over seeds…
   */
  minMeanRise: number;
  /** …and on every seed by at least this much… */
  minSeedRise: number;
  /** …while the greedy held-out accuracy falls by at most this much on any seed. */
  maxHeldOutDrop: number;
}

export interface HfPreset {
  /** Name and i18n key (teach:hfPresets.<id>). */
  id: 'grpo' | 'ppoCritic';
  name: string;
  settings: HfTrainSettings;
  claim: HfPresetClaim;
}

/** What both presets share: the chat arithmetic task, LoRA r 8, 2 epochs × 2 minibatches at lr 1e-3, 120 iterations. */
const COMMON: HfTrainSettings = {
  ...DEFAULT_HF_TRAIN,
  reward: 'chat-arithmetic',
  chat: true,
  loraRank: 8,
  iterations: 120,
  maxNewTokens: 6,
  ppoEpochs: 2,
  miniBatches: 2,
  lr: 1e-3,
  klCoef: 0.01,
  seed: 1,
};
const CLAIM: HfPresetClaim = { minMeanRise: 0.06, minSeedRise: 0.02, maxHeldOutDrop: 0.05 };

export const HF_PRESETS: readonly HfPreset[] = [
  // 8 answers a problem: a group teaches only when one of its answers is right, and the shipped
  // model gets 4 % of the carry problems right (docs/learning.md); 4 answers × lr 3e-4 × 40 did not.
  {
    id: 'grpo',
    name: 'GRPO on your own model',
    settings: { ...COMMON, estimator: 'group_norm', promptsPerBatch: 8, samplesPerPrompt: 8 },
    claim: CLAIM,
  },
  // One answer a problem: the critic's value, not a group's mean, is the baseline, so an iteration
  // covers 32 problems; at GRPO's lr and length its claim holds by far (docs/learning.md).
  {
    id: 'ppoCritic',
    name: 'PPO with a critic on your own model',
    settings: { ...COMMON, estimator: 'gae', promptsPerBatch: 32, samplesPerPrompt: 1 },
    claim: CLAIM,
  },
];

export function hfPreset(name: string): HfPreset | undefined {
  return HF_PRESETS.find((p) => p.name === name || p.id === name);
}
