// One-click experiments: each sets a few config values, an iteration budget, and explains what to
// look for. A paired preset has arms: each arm's values are applied on top of the preset's values,
// and the page's "Run both" / `npm run learning` train every arm one after the other.
// The page, `npm run train -- --preset NAME` and `npm run learning` all read this one list, so
// what a student clicks is exactly what the command line reproduces and measures.
// The text of each preset lives in src/i18n/locales/<locale>/presets.json under its id: the English
// there is what the CLIs print and what `name` (a preset's identity in the store and the link) holds;
// the page shows each text in the visitor's language (presets:preset.<id>.<field>).
import english from '../i18n/locales/en/presets.json' with { type: 'json' };
import { checked, DEFAULT_CONFIG, DEFAULT_REWARD_FUNCTION, type CheckedConfig, type PpoConfig } from './config.ts';

export interface PresetArm {
  /** Short label shown in legends and tables, e.g. "ε = 0.05". */
  label: string;
  values: Partial<PpoConfig>;
}

/** A preset's key in presets.json (its texts in every language). */
export type PresetId = keyof typeof english.preset;

export interface Preset {
  id: PresetId;
  /** The English name: the preset's identity (store, saved runs, `--preset`), never translated. */
  name: string;
  /** One sentence: the task and its setup, the first line of the card (before any number). */
  summary: string;
  /** One line: the curve to look at and what it will do; shared by the card and the guided tour. */
  watch: string;
  /** Two sentences: what it sets up, and what to watch. */
  explanation: string;
  /**
   * For a preset that trains no critic: one sentence of why another estimator leads here, and
   * where PPO's critic can be seen instead (shown with the chosen card's explanation).
   */
  whyNoCritic?: string;
  /** What the curve will do, in numbers `npm run learning` measured (shown on the card). */
  promise?: string;
  values: Partial<PpoConfig>;
  /** Iterations the preset's claim is measured at (≤ 200); the page shows the ETA to it. */
  iterations: number;
  /** Paired presets: two or more arms trained one after the other and overlaid. */
  arms?: readonly PresetArm[];
}

/**
 * "Learn arithmetic": RLOO 16 prompts × 4 samples, 3-token responses (two digits + EOS), one epoch
 * of 2 minibatches, and a small KL loss (k3, coefficient 0.1) to the SFT model.
 */
export const ARITHMETIC_RECIPE: Partial<PpoConfig> = {
  task: 'arithmetic',
  rewardSource: 'rule',
  advantageEstimator: 'rloo',
  promptsPerBatch: 16,
  samplesPerPrompt: 4,
  maxResponseLength: 3,
  ppoEpochs: 1,
  miniBatches: 2,
  // 2.5e-5: the accuracy rises over ~30 iterations, slow enough that the chart shows the climb
  // (5e-5 reaches the same level in ~15).
  actorLr: 2.5e-5,
  // The KL loss anchors the no-carry answers, which the SFT model already has right: without it
  // (β = 0) the policy first learns "always carry" (greedy no-carry accuracy 100% → 8% at
  // iteration 20) and takes 80+ iterations to unlearn it; with it the dip is brief and shallow.
  klCoef: 0,
  klInReward: false,
  useKlLoss: true,
  klLossCoef: 0.1,
  klLossEstimator: 'k3',
};

/**
 * The sentiment task's PPO recipe with no KL penalty (β = 0): RLOO over 4 prompts × 4 samples,
 * 16-token responses, one epoch of one minibatch. The reward source is the preset's own.
 */
const SENTIMENT_NO_KL_RECIPE: Partial<PpoConfig> = {
  task: 'sentiment',
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
  // 1e-3 over 20 iterations: at 3e-3 a single update moved the policy ~50 nats from the
  // reference before β could act, so β = 0.6 drifted as far as β = 0 on some seeds.
  actorLr: 1e-3,
  warmupSteps: 0,
  entropyCoef: 0,
};

/**
 * "Entropy collapse": GRPO on arithmetic pushed hard (2 epochs of 2 minibatches per batch, 8× the
 * "Learn arithmetic" learning rate) with nothing holding the policy's spread: no KL, no entropy bonus.
 */
const ENTROPY_COLLAPSE_RECIPE: Partial<PpoConfig> = {
  task: 'arithmetic',
  rewardSource: 'rule',
  advantageEstimator: 'group_norm',
  promptsPerBatch: 16,
  samplesPerPrompt: 4,
  maxResponseLength: 3,
  ppoEpochs: 2,
  miniBatches: 2,
  actorLr: 2e-4,
  klCoef: 0,
  klInReward: false,
  useKlLoss: false,
  klController: 'fixed',
  entropyCoef: 0,
  clipLow: 0.2,
  clipHigh: 0.2,
  dualClip: null,
  lossAgg: 'token-mean',
  lossMode: 'vanilla',
  evalEvery: 10,
};

/**
 * The English texts of preset `id`: name, summary, watch, explanation and, where it has them, its
 * measured promise and why it trains no critic. The promises were measured by `npm run learning
 * -- --seeds 3` on the CPU backend (docs/learning.md, "Measured"; "Write your own reward" with
 * `--preset "Write your own reward" --seeds 3`).
 */
function englishText(id: PresetId): Pick<Preset, 'id' | 'name' | 'summary' | 'watch' | 'explanation' | 'whyNoCritic' | 'promise'> {
  const text: { name: string; summary: string; watch: string; explanation: string; whyNoCritic?: string; promise?: string } = english.preset[id];
  return {
    id,
    name: text.name,
    summary: text.summary,
    watch: text.watch,
    explanation: text.explanation,
    ...(text.whyNoCritic === undefined ? {} : { whyNoCritic: text.whyNoCritic }),
    ...(text.promise === undefined ? {} : { promise: text.promise }),
  };
}

/** The paired preset whose β = 0 arm hacks the reward model: the KL view and the inspector point to it. */
export const REWARD_HACKING = english.preset.rewardHacking.name;

export const PRESETS: readonly Preset[] = [
  {
    // Its whyNoCritic's "1.7×": the wall times of the two arms of "PPO vs GRPO" in docs/learning.md (200 s and 117 s).
    ...englishText('learnArithmetic'),
    // tests/gpu/rl_arithmetic.test.ts trains exactly this recipe
    values: ARITHMETIC_RECIPE,
    iterations: 150,
  },
  {
    ...englishText('rewardHacking'),
    // tests/gpu/rl_sentiment.test.ts trains exactly this recipe at β = 0 and β = 0.6
    values: { ...SENTIMENT_NO_KL_RECIPE, rewardSource: 'model' },
    iterations: 20,
    arms: [
      { label: 'β = 0', values: { klCoef: 0 } },
      { label: 'β = 0.6', values: { klCoef: 0.6 } },
    ],
  },
  {
    ...englishText('ownReward'),
    values: { ...SENTIMENT_NO_KL_RECIPE, rewardSource: 'function', rewardFunction: DEFAULT_REWARD_FUNCTION },
    iterations: 30,
  },
  {
    ...englishText('clipping'),
    values: { ...ARITHMETIC_RECIPE, ppoEpochs: 4, actorLr: 2e-4, clipLow: 0.05, clipHigh: 0.05, dualClip: 3 },
    iterations: 60,
    arms: [
      { label: 'ε = 0.05', values: { clipLow: 0.05, clipHigh: 0.05 } },
      { label: 'ε = 0.5', values: { clipLow: 0.5, clipHigh: 0.5 } },
    ],
  },
  {
    ...englishText('ppoVsGrpo'),
    values: {
      task: 'arithmetic',
      rewardSource: 'rule',
      promptsPerBatch: 16,
      samplesPerPrompt: 4,
      maxResponseLength: 3,
      ppoEpochs: 1,
      miniBatches: 2,
      actorLr: 2e-4,
      klCoef: 0.01,
      advantageEstimator: 'group_norm',
      klInReward: false,
      useKlLoss: true,
      klLossCoef: 0.01,
      klLossEstimator: 'k3',
      klController: 'fixed',
    },
    iterations: 100,
    arms: [
      { label: 'PPO (GAE)', values: { advantageEstimator: 'gae', klInReward: true, useKlLoss: false } },
      { label: 'GRPO', values: { advantageEstimator: 'group_norm', klInReward: false, useKlLoss: true } },
    ],
  },
  {
    ...englishText('adaptiveKl'),
    // RLOO with the KL as a loss term: a KL penalty in the reward (added after the group statistics,
    // OpenRLHF's order) reaches the policy only as an unbaselined, β-scaled policy-gradient signal,
    // while the loss differentiates each token's KL directly (docs/decisions.md; not re-measured). Horizon 2000 at 128
    // responses: β moves at most 1.3% per iteration, slower than the policy answers, so the loop
    // settles instead of oscillating (at target 0.1 a 6%-per-iteration controller swung the KL between
    // 0.04 and 0.24 with a period of ~30 iterations).
    values: {
      task: 'arithmetic',
      rewardSource: 'rule',
      advantageEstimator: 'rloo',
      // 32 × 4 responses, lr 5e-5, per-token target 0.3. The controller reads the same k3
      // estimator the loss uses, as OpenRLHF's single --kl_estimator does (k1 swung with sd ≈
      // 0.035–0.039 at target 0.1, k3 with 0.024–0.036). The target: the policy's KL wanders on a
      // time scale of 5–10 iterations even with β held fixed, and less in proportion to a larger
      // target. Second-half 5-iteration windows over seeds 1–6 (`npm run learning`): at 0.1 they
      // reached 0.048–0.171 (seeds 4 and 5 outside ±50%), at 0.2 0.140–0.296, at 0.3 0.212–0.414
      // (every seed inside, the farthest 38% off). At 0.1 neither 64 × 4 responses, lr 2.5e-5,
      // horizon 1000 nor a coefficient starting at 0.8 (horizon 4000 or 8000) brought seeds 4–5 inside.
      klEstimator: 'k3',
      promptsPerBatch: 32,
      samplesPerPrompt: 4,
      maxResponseLength: 3,
      ppoEpochs: 1,
      miniBatches: 2,
      actorLr: 5e-5,
      klController: 'adaptive',
      klInReward: false,
      klCoef: 0,
      useKlLoss: true,
      klLossEstimator: 'k3',
      klLossCoef: 1,
      klTarget: 0.3,
      klHorizon: 2000,
    },
    iterations: 150,
  },
  {
    ...englishText('dapo'),
    values: {
      task: 'arithmetic',
      rewardSource: 'rule',
      advantageEstimator: 'group_norm',
      promptsPerBatch: 16,
      samplesPerPrompt: 4,
      maxResponseLength: 6,
      ppoEpochs: 1,
      miniBatches: 2,
      actorLr: 2e-4,
      klCoef: 0,
      klInReward: false,
      useKlLoss: false,
      klController: 'fixed',
      clipLow: 0.2,
      clipHigh: 0.28,
      dualClip: null,
      lossAgg: 'token-mean',
      lossMode: 'vanilla',
      dynamicSampling: true,
      maxExtraRollouts: 2,
      overlongBuffer: 2,
      overlongPenalty: 1,
    },
    iterations: 40,
  },
  {
    ...englishText('entropyCollapse'),
    values: ENTROPY_COLLAPSE_RECIPE,
    // Vanilla's entropy halves by about iteration 60 and levels off near 0.07 (docs/learning.md);
    // 100 iterations put it clearly below half of its start on every seed.
    iterations: 100,
    // Arm 0 is vanilla PPO; every further arm is a remedy, checked against it (checkEntropyCollapse).
    // A minibatch holds 32 responses × 3 tokens ≈ 96 tokens whose covariances are mostly ±0.1, so
    // verl's defaults (ratio 0.0002, band [1, 5], ppo_kl_coef 0.1) would touch a single token
    // (measured: clipCovRatio 0.1 in band [1, 5] picks ~1 token, klCovRatio 0.05 with ppoKlCoef 1
    // four; neither held the entropy). So clip-cov detaches every unclipped token with a positive
    // covariance (ratio 1, band (0, 5)), kl-cov pins the 20% with the largest covariance, coefficient 5.
    arms: [
      { label: 'vanilla', values: { lossMode: 'vanilla', clipHigh: 0.2 } },
      // DAPO's ε_high; it barely binds here (clip fraction ~1.5%), see checkEntropyCollapse.
      { label: 'ε_high = 0.28', values: { lossMode: 'vanilla', clipHigh: 0.28 } },
      { label: 'clip-cov', values: { lossMode: 'clip_cov', clipHigh: 0.2, clipCovRatio: 1, clipCovLb: 0 } },
      { label: 'kl-cov', values: { lossMode: 'kl_cov', clipHigh: 0.2, klCovRatio: 0.2, ppoKlCoef: 5 } },
    ],
  },
  {
    ...englishText('stopProperly'),
    values: {
      task: 'stop',
      rewardSource: 'rule',
      advantageEstimator: 'rloo',
      promptsPerBatch: 16,
      samplesPerPrompt: 4,
      maxResponseLength: 16,
      ppoEpochs: 1,
      miniBatches: 2,
      actorLr: 2e-4,
      klCoef: 0,
    },
    iterations: 60,
  },
];

/** The preset called `name`, or undefined. */
export function findPreset(name: string): Preset | undefined {
  return PRESETS.find((p) => p.name === name);
}

/** The values of the preset called `name` (tests train the page's recipes, not look-alikes). */
export function presetValues(name: string): Partial<PpoConfig> {
  const preset = findPreset(name);
  if (!preset) throw new Error(`no preset named "${name}"`);
  return preset.values;
}

/**
 * The whole config a preset (arm `arm`; the first when paired) trains: the preset's values and the
 * arm's on top of `base` (the defaults), so every knob neither names is at its default whatever
 * was set before. The card, "Run both" and the CLIs all train exactly this.
 */
export function presetConfig(preset: Preset, arm = 0, base: PpoConfig = DEFAULT_CONFIG): PpoConfig {
  const arms = presetArms(preset);
  const chosen = arms[arm];
  if (!chosen) throw new Error(`preset "${preset.name}" has no arm ${arm} (it has ${arms.length})`);
  return { ...base, ...chosen.values };
}

/**
 * The checked config arm `arm` of `preset` trains with `seed`: what "Train it yourself" or "Run
 * both" sends with the default seed, what `npm run learning` measures and `npm run record-runs`
 * records. Throws naming every problem (a preset's values are checked like a user's).
 */
export function armConfig(preset: Preset, arm: number, seed: number): CheckedConfig {
  return checked({ ...presetConfig(preset, arm), seed });
}

/** The config values of each arm of `preset` (one arm, the preset's own values, when unpaired). */
export function presetArms(preset: Preset): { label: string; values: Partial<PpoConfig> }[] {
  if (!preset.arms || preset.arms.length === 0) return [{ label: preset.name, values: { ...preset.values } }];
  return preset.arms.map((a) => ({ label: a.label, values: { ...preset.values, ...a.values } }));
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
