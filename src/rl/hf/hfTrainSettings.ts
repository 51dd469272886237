// What the page asks to train the visitor's own model with: the reward (the chat arithmetic task, a
// playground task, or the page's written reward function on prompts the visitor types), the
// estimator, the LoRA rank and the run's size. One range table for the panel's messages and the
// worker's check, so a setting the page lets through is one the worker accepts. Free of backend
// imports (the page reads it).
import { TASK_NAMES, type TaskName } from '../../tasks/task.ts';

/** group_norm: GRPO, no critic; gae: PPO with a critic (its own adapter and a value head). */
export const HF_TRAIN_ESTIMATORS = ['group_norm', 'gae'] as const;
export type HfTrainEstimator = (typeof HF_TRAIN_ESTIMATORS)[number];

/**
 * chat-arithmetic: the built-in chat task (src/tasks/chatArithmetic.ts); a playground task's name
 * (arithmetic, sentiment, stop): that task's prompts, as its character model sees them (no chat
 * template), and its rule reward; function: the page's reward function on `prompts`.
 */
export const HF_TRAIN_REWARDS = ['chat-arithmetic', ...TASK_NAMES, 'function'] as const;
export type HfTrainReward = (typeof HF_TRAIN_REWARDS)[number];

export const isHfTrainReward = (x: string): x is HfTrainReward => (HF_TRAIN_REWARDS as readonly string[]).includes(x);

/** The playground task a reward names, or null (the chat task, a reward function). */
export function playgroundTaskOf(reward: HfTrainReward): TaskName | null {
  return (TASK_NAMES as readonly string[]).includes(reward) ? (reward as TaskName) : null;
}

/** Whether prompts go through the model's chat template: always for the chat task, never for a playground task, as set for a reward function. */
export function promptsThroughChat(s: Pick<HfTrainSettings, 'reward' | 'chat'>): boolean {
  return s.reward === 'chat-arithmetic' || (s.reward === 'function' && s.chat);
}

export interface HfTrainSettings {
  reward: HfTrainReward;
  /** One prompt a line (reward 'function' only). */
  prompts: string;
  /** Through the chat template (the task always is; needs the tokenizer's template). */
  chat: boolean;
  estimator: HfTrainEstimator;
  loraRank: number;
  iterations: number;
  promptsPerBatch: number;
  samplesPerPrompt: number;
  maxNewTokens: number;
  ppoEpochs: number;
  miniBatches: number;
  lr: number;
  klCoef: number;
  seed: number;
}

export type HfTrainNumber = 'loraRank' | 'iterations' | 'promptsPerBatch' | 'samplesPerPrompt' | 'maxNewTokens' | 'ppoEpochs' | 'miniBatches' | 'lr' | 'klCoef' | 'seed';

/** Each number's allowed range (integer or not). */
export const HF_TRAIN_RANGES: Record<HfTrainNumber, { min: number; max: number; integer: boolean }> = {
  loraRank: { min: 1, max: 64, integer: true },
  iterations: { min: 1, max: 1000, integer: true },
  promptsPerBatch: { min: 1, max: 64, integer: true },
  samplesPerPrompt: { min: 1, max: 16, integer: true },
  maxNewTokens: { min: 1, max: 512, integer: true },
  ppoEpochs: { min: 1, max: 8, integer: true },
  miniBatches: { min: 1, max: 64, integer: true },
  lr: { min: 1e-7, max: 0.1, integer: false },
  klCoef: { min: 0, max: 10, integer: false },
  seed: { min: 0, max: 2 ** 32 - 1, integer: true },
};

export const DEFAULT_HF_TRAIN: HfTrainSettings = {
  reward: 'chat-arithmetic',
  prompts: '',
  chat: true,
  estimator: 'group_norm',
  loraRank: 8,
  iterations: 20,
  promptsPerBatch: 4,
  samplesPerPrompt: 4,
  maxNewTokens: 16,
  // Two epochs of two minibatches: the later steps see a moved policy, so clipping can show.
  ppoEpochs: 2,
  miniBatches: 2,
  lr: 1e-4,
  klCoef: 0.01,
  seed: 1,
};

/** Held-out prompts the task's greedy accuracy is measured on, before and after. */
export const HF_TRAIN_EVAL_COUNT = 16;
/**
 * Answers drawn per held-out problem for the page's sampled accuracy (64 draws over the 16 problems;
 * `npm run learning -- --model` judges the presets on 100 × 8). Each draw costs what a rollout
 * sequence does: on a software adapter, 8 made a run's two evaluations take seconds longer.
 */
export const HF_TRAIN_EVAL_SAMPLES = 4;

/** Which rule a setting breaks: its range (integer or number), or one of the rules between settings. */
export type HfTrainRule = 'integer' | 'number' | 'belowPositions' | 'groupSamples' | 'miniBatchSplit' | 'prompts' | 'chatTemplate';

export interface HfTrainProblem {
  field: HfTrainNumber | 'prompts' | 'chat';
  /** The allowed range or the rule in English (the worker's refusal); the page words it from `rule`. */
  range: string;
  rule: HfTrainRule;
  /** min and max of a range; the model's positions for belowPositions. */
  params: Record<string, number>;
}

const rangeText = (r: { min: number; max: number; integer: boolean }) => `${r.integer ? 'an integer' : 'a number'} from ${r.min} to ${r.max}`;

/** The prompts of a 'function' run: one a line, blank lines skipped. */
export function promptLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** Every setting out of range for a model with `model`'s positions and chat template (empty when Train can go). */
export function hfTrainProblems(s: HfTrainSettings, model: { maxPositions: number; hasChatTemplate: boolean }): HfTrainProblem[] {
  const out: HfTrainProblem[] = [];
  for (const [field, r] of Object.entries(HF_TRAIN_RANGES) as [HfTrainNumber, (typeof HF_TRAIN_RANGES)[HfTrainNumber]][]) {
    const x = s[field];
    if (!(Number.isFinite(x) && x >= r.min && x <= r.max && (!r.integer || Number.isInteger(x))))
      out.push({ field, range: rangeText(r), rule: r.integer ? 'integer' : 'number', params: { min: r.min, max: r.max } });
  }
  if (s.maxNewTokens >= model.maxPositions)
    out.push({ field: 'maxNewTokens', range: `below the model's ${model.maxPositions} positions`, rule: 'belowPositions', params: { positions: model.maxPositions } });
  if (s.estimator === 'group_norm' && s.samplesPerPrompt < 2)
    out.push({ field: 'samplesPerPrompt', range: 'at least 2: GRPO compares the samples of one prompt', rule: 'groupSamples', params: {} });
  const batch = s.promptsPerBatch * s.samplesPerPrompt;
  if (Number.isInteger(batch) && Number.isInteger(s.miniBatches) && s.miniBatches >= 1 && batch % s.miniBatches !== 0)
    out.push({ field: 'miniBatches', range: `a divisor of the batch's ${batch} responses`, rule: 'miniBatchSplit', params: { batch } });
  if (s.reward === 'function' && promptLines(s.prompts).length === 0) out.push({ field: 'prompts', range: 'one prompt a line', rule: 'prompts', params: {} });
  if (promptsThroughChat(s) && !model.hasChatTemplate) out.push({ field: 'chat', range: "a chat template in the model's tokenizer_config.json", rule: 'chatTemplate', params: {} });
  return out;
}

/** One iteration's numbers as the panel lists them (the trainer's own values). */
export interface HfTrainRow {
  iter: number;
  reward_mean: number;
  kl: number;
  response_length_mean: number;
  policy_loss: number;
  clipfrac: number;
  value_loss: number | null;
  seconds: number;
  /** Every response of the batch, in batch order. */
  responses: HfTrainResponse[];
}

/** One response of an iteration: decoded, its score, its tokens as the last epoch's update saw them (hfPpo.ts HfInspectedRow). */
export interface HfTrainResponse {
  prompt: string;
  response: string;
  score: number;
  tokens: HfTrainToken[];
}

/** A row as an earlier version of the page kept it (the first response only), read into today's shape. */
export function upgradeHfTrainRow(row: HfTrainRow | (Omit<HfTrainRow, 'responses'> & { sample: Omit<HfTrainResponse, 'tokens'>; tokens: HfTrainToken[] })): HfTrainRow {
  if ('responses' in row) return row;
  const { sample, tokens, ...rest } = row;
  return { ...rest, responses: [{ ...sample, tokens }] };
}

/** One token of the inspected response: the trainer's numbers and the side the clip bound it on. */
export interface HfTrainToken {
  id: number;
  text: string;
  old: number; // log π_old
  ref: number; // log π_ref (the base)
  logprob: number; // log π_θ before this token's last optimizer step
  advantage: number;
  clip: 'upper' | 'lower' | 'dual' | null;
}

/** Held-out accuracy of a task (the chat task or a playground task): greedy, and over sampled answers. */
export interface HfTrainEval {
  when: 'before' | 'after';
  greedyAccuracy: number;
  /** Over `samples` answers a problem drawn as the rollouts draw (absent in runs kept before it was measured). */
  sampled?: { accuracy: number; samples: number };
  count: number;
}

/** A loaded or trained adapter's settings, as the page shows them. */
export interface HfAdapterInfo {
  r: number;
  alpha: number;
  rslora: boolean;
  targets: string[];
}
