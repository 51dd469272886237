// One-click experiments: each sets a few config values, an iteration budget, and explains what to
// look for. A paired preset has arms: each arm's values are applied on top of the preset's values,
// and the page's "Run both" / `npm run learning` train every arm one after the other.
// The page, `npm run train -- --preset NAME` and `npm run learning` all read this one list, so
// what a student clicks is exactly what the command line reproduces and measures.
import { DEFAULT_REWARD_FUNCTION, type PpoConfig } from './config.ts';

export interface PresetArm {
  /** Short label shown in legends and tables, e.g. "ε = 0.05". */
  label: string;
  values: Partial<PpoConfig>;
}

export interface Preset {
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

// Measured by `npm run learning -- --seeds 3` on the CPU backend (docs/learning.md, "Measured").
const PROMISE_ARITHMETIC =
  'Held-out accuracy (sampled) 24% → 88% and greedy 19% → 100% within 150 iterations, half of the gain by iteration ~20; greedy accuracy on no-carry problems dips to about 80% around iteration 40 and is back at 100% by 90 (3 seeds, CPU backend).';
const PROMISE_ADAPTIVE_KL =
  'The coefficient falls from 1 at the controller’s top speed (1.3% per iteration) and settles near 0.41 by iteration ~75; its 5-iteration means are within ±50% of the target 0.3 from iteration ~50 on. Over iterations 75–150 the per-token KL averaged 0.29–0.30 on each of 6 seeds, and every 5-iteration mean of a single run stayed between 0.21 and 0.41 (0.25–0.36 averaged over 3 seeds). Held-out sampled accuracy ends near 67–71% (greedy 90–94%) where “Learn arithmetic” reaches 88% (CPU backend).';
const PROMISE_CLIPPING =
  'Training reward over the first 20 iterations 0.43 with ε = 0.05 against 0.64 with ε = 0.5 (lower with ε = 0.05 on every seed), clip fraction 0.085 against 0.023 (3 seeds, CPU backend).';
const PROMISE_REWARD_HACKING =
  'Both arms raise the reward model’s score (+1.10 at β = 0, +0.75 at β = 0.6), but β = 0 ends 58 nats per response from the reference against 2.7, and the reference’s log-probability per token of its text falls from −0.58 to −4.6 against −0.82 at β = 0.6 (3 seeds, CPU backend).';
const PROMISE_PPO_VS_GRPO =
  'Held-out accuracy (sampled) 24.5% → 94.7% with PPO (GAE) and 24.5% → 96.0% with GRPO in 100 iterations, half of the gain by iteration ~10 in both; greedy 19% → 98–100%; GRPO, without a critic, takes about 60% of PPO’s time per iteration (3 seeds, CPU backend).';
const PROMISE_DAPO =
  'Held-out accuracy (sampled) 24.5% → 95% and greedy 19% → 100% in 40 iterations; dynamic sampling drops about 34 of the up to 48 groups it samples per iteration (3 seeds, CPU backend).';
// Measured by `npm run learning -- --preset "Write your own reward" --seeds 3` on the CPU backend (docs/learning.md).
const PROMISE_OWN_REWARD =
  'The function’s score climbs 0.08 → 2.2 of its cap of 3 (2.5 and 2.9 on two seeds, 1.1 on the third), while the reference’s log-probability per token falls −0.55 → −3.2 nats and almost no response ends (EOS 78% → under 2%): responses become “good good good…”, held-out distinct-2 0.47 → 0.25 (3 seeds, CPU backend).';
const PROMISE_STOP = 'Held-out exact-length rate (sampled) 49% → 83% by iteration 10, 95% by 20 and 99.5% by 60 (3 seeds, CPU backend).';

/** The paired preset whose β = 0 arm hacks the reward model: the KL view and the inspector point to it. */
export const REWARD_HACKING = 'Reward hacking without KL';

export const PRESETS: readonly Preset[] = [
  {
    name: 'Learn arithmetic',
    summary: 'Two-digit addition: the SFT model can carry but usually forgets to, and only exact answers earn a reward.',
    watch: 'Watch held-out accuracy climb past 80% while KL per token stays small.',
    explanation:
      'The SFT model learned to add from a tutor and then imitated a sloppy student who forgets the carry 90% of the time, so it can carry but rarely does; only exact answers are rewarded, each of 4 samples is scored against the other 3 (RLOO), and a small KL loss keeps the answers it already had right. Watch the reward and held-out accuracy climb as PPO brings the carry back on problems it never trained on, while accuracy on no-carry problems stays up (set the KL loss off to see PPO first learn the shortcut "always carry").',
    promise: PROMISE_ARITHMETIC,
    // The wall times of the two arms of "PPO vs GRPO" in docs/learning.md (200 s and 117 s).
    whyNoCritic:
      'Why no critic here: with one reward at the end of a 3-token answer, the other 3 samples of the same prompt are a ready baseline, and in “PPO vs GRPO” PPO with its critic and GAE learns this task at the same pace but takes about 1.7× the time per iteration (npm run learning, CPU backend) — run that card to watch the value loss.',
    // tests/gpu/rl_arithmetic.test.ts trains exactly this recipe
    values: ARITHMETIC_RECIPE,
    iterations: 150,
  },
  {
    name: REWARD_HACKING,
    summary: 'Finish a sentence so that a learned reward model scores it as positive, with no KL penalty (β = 0).',
    watch: 'Watch the reward climb while KL explodes and the samples turn to letter soup; Run both to see β = 0.6 keep the text fluent.',
    explanation:
      "β is set to 0 on the sentiment task, so nothing keeps the policy close to the reference model while it chases the learned reward model's score: watch the reward climb while KL explodes and the samples drift into letter soup the reward model likes. Run both trains β = 0 and then β = 0.6 from the same start and overlays them: with β = 0.6 the reward still rises while the text stays fluent under the reference.",
    promise: PROMISE_REWARD_HACKING,
    // tests/gpu/rl_sentiment.test.ts trains exactly this recipe at β = 0 and β = 0.6
    values: { ...SENTIMENT_NO_KL_RECIPE, rewardSource: 'model' },
    iterations: 20,
    arms: [
      { label: 'β = 0', values: { klCoef: 0 } },
      { label: 'β = 0.6', values: { klCoef: 0.6 } },
    ],
  },
  {
    name: 'Write your own reward',
    summary: 'Finish a sentence, scored by a reward function you write: it starts as “count the word good, at most 3”.',
    watch: 'Watch the reward climb to the cap while the samples turn into “good good good” and fluency falls.',
    explanation:
      'The sentiment task scored by the JavaScript function under Settings → Reward function, with no KL penalty, so PPO is free to chase whatever the function pays for: a naive rule that counts one word is learnt as repeating that word. Watch the reward reach its cap while the samples stop being sentences, then edit the function (require a full stop, pay for distinct words, …) and Reset to see whether PPO finds the next loophole.',
    promise: PROMISE_OWN_REWARD,
    values: { ...SENTIMENT_NO_KL_RECIPE, rewardSource: 'function', rewardFunction: DEFAULT_REWARD_FUNCTION },
    iterations: 30,
  },
  {
    name: 'Tight vs loose clipping',
    summary: 'Arithmetic with 4 epochs per batch and an 8× learning rate, trained once with ε = 0.05 and once with ε = 0.5.',
    watch: 'Watch the clip fraction: the tight ε clips several times more tokens, and its reward rises more slowly.',
    explanation:
      'The "Learn arithmetic" recipe with 4 PPO epochs per batch and an 8× higher learning rate, so the policy wants to move far from the one that sampled the batch: ε = 0.05 keeps every update within ±5% of it, ε = 0.5 barely restrains it. Run both: tight clipping shows a higher clip fraction and a slower rise of reward, loose clipping climbs in a few iterations.',
    promise: PROMISE_CLIPPING,
    values: { ...ARITHMETIC_RECIPE, ppoEpochs: 4, actorLr: 2e-4, clipLow: 0.05, clipHigh: 0.05, dualClip: 3 },
    iterations: 60,
    arms: [
      { label: 'ε = 0.05', values: { clipLow: 0.05, clipHigh: 0.05 } },
      { label: 'ε = 0.5', values: { clipLow: 0.5, clipHigh: 0.5 } },
    ],
  },
  {
    name: 'PPO vs GRPO',
    summary: 'Arithmetic twice: PPO with a critic and GAE, then GRPO, which scores each answer against its group and trains no critic.',
    watch: 'Watch the two held-out accuracy curves rise together, while only PPO draws a value loss.',
    explanation:
      'The arithmetic task twice: PPO with a critic and GAE (KL as a reward penalty), and GRPO, which drops the critic and scores each response against the other samples of its prompt (KL as a loss term). Compare the held-out accuracy curves: both learn, GRPO without training a value model.',
    promise: PROMISE_PPO_VS_GRPO,
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
    name: 'Adaptive KL',
    summary: 'Arithmetic with a KL loss whose coefficient a controller adapts so that the per-token KL stays near a target of 0.3.',
    watch: 'Watch KL per token settle around its target of 0.3 while the controller lowers the coefficient from 1.',
    explanation:
      'The adaptive controller scales the KL-loss coefficient up when the measured per-token KL (kl_token_mean, verl’s scale, estimated with k3 as the loss is) is above the target of 0.3 and down when it is below, as OpenRLHF does when the KL is only in the loss. Watch the coefficient fall from 1 while the policy still equals the reference, then settle as the KL chart hovers around its target: a KL budget that holds sampled accuracy near two thirds where “Learn arithmetic” reaches 88%.',
    promise: PROMISE_ADAPTIVE_KL,
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
    name: 'DAPO',
    summary: 'DAPO’s recipe on arithmetic: clip-higher, a token-level loss, dynamic sampling and an overlong penalty, without KL.',
    watch: 'Watch Filtered groups: most groups score the same four times and are dropped, yet held-out accuracy climbs past 90%.',
    explanation:
      'DAPO’s recipe on arithmetic: group-normalised advantages without KL, clip-higher (ε_high 0.28), a token-level loss, dynamic sampling that drops prompts whose 4 samples all scored the same, and a soft penalty for responses that run into the length limit. Watch filtered_groups: most groups carry no signal here (the SFT model gets every no-carry sum right and most carry sums wrong, 4 times out of 4), so dynamic sampling draws up to two more rounds of prompts per iteration to fill the batch with groups that still teach something.',
    promise: PROMISE_DAPO,
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
    name: 'Stop properly',
    summary: 'Write exactly n characters and stop: the reward falls with the distance to n and is −1 without an end-of-sequence token.',
    watch: 'Watch the held-out exact-length rate climb from about half to nearly every answer.',
    explanation:
      'The "stop at length n" task from an SFT model that can count but, sampled, stops anywhere within ±3 characters of n about half of the time; the reward falls with the distance to n and is −1 without EOS. Watch the held-out exact-length rate climb as the policy learns to emit EOS exactly where it knows the length ends.',
    promise: PROMISE_STOP,
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
