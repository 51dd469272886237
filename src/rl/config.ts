// One typed config with every knob of the PPO/RLHF loop, its defaults, and a validator that
// reports every problem at once (field, given value, allowed range or choices).
import { GROUP_ESTIMATORS, KL_ESTIMATORS, LOSS_AGGS, LOSS_MODES, NORM_SCALES, type GroupEstimator, type KlEstimator } from '../backend/ppoOps.ts';
import { GROUP_KL_ORDERS, GROUPED_ESTIMATORS, type GroupKlOrder } from '../reference/groupAdvantages.ts';
import { TASKS_BY_NAME } from '../tasks/index.ts';
import { TASK_NAMES } from '../tasks/task.ts';
import { REWARD_FUNCTION_LIMITS, sourceBytes } from './rewardFunction/problem.ts';

export type AdvantageEstimator = 'gae' | GroupEstimator;
export { GROUP_KL_ORDERS, type GroupKlOrder };
export const ADVANTAGE_ESTIMATORS: readonly AdvantageEstimator[] = ['gae', ...GROUP_ESTIMATORS];

export const KL_CONTROLLERS = ['fixed', 'adaptive'] as const;
export type KlController = (typeof KL_CONTROLLERS)[number];

/** The KL loss needs a gradient; AlpacaFarm's one-sided k1_clamped is a reward penalty only. */
export const KL_LOSS_ESTIMATORS: readonly KlEstimator[] = KL_ESTIMATORS.filter((k) => k !== 'k1_clamped');
/** rule: the task's own; model: a learned reward model; function: `rewardFunction`, written by the user. */
export const REWARD_SOURCES = ['rule', 'model', 'function'] as const;
export type RewardSource = (typeof REWARD_SOURCES)[number];

/** The settings panel's sections, in order. */
export const GROUPS = ['Task & model', 'Rollout', 'Reward & KL', 'Advantages', 'PPO update', 'Optimiser', 'Evaluation'] as const;
export type Group = (typeof GROUPS)[number];

export interface NumRule {
  min: number;
  max: number;
  /** exclusive bounds (min < x / x < max) */
  minOpen?: boolean;
  maxOpen?: boolean;
  integer?: boolean;
  nullable?: boolean;
}

/** What the page shows for a knob, and the name of the same knob in verl / OpenRLHF where one exists. */
export interface KnobMeta {
  group: Group;
  label: string;
  /** One line for the settings panel. */
  help: string;
  /** verl Hydra key the exported job sets from this knob (src/export/verl.ts; checked in tests/unit/config_schema.test.ts). */
  verl?: string;
  /** OpenRLHF flag the exported job sets from this knob (src/export/openrlhf.ts; same check). */
  openrlhf?: string;
}

/** A free-text knob (source code): its size limit in UTF-8 bytes. */
export interface TextRule {
  maxBytes: number;
}

export type Knob<T> = KnobMeta & { default: T } & ({ kind: 'number'; range: NumRule } | { kind: 'choice'; choices: readonly T[] } | { kind: 'text'; rule: TextRule });

const num = (d: number, range: Omit<NumRule, 'nullable'>, meta: KnobMeta): Knob<number> => ({ ...meta, default: d, kind: 'number', range });
const nullableNum = (d: number | null, range: Omit<NumRule, 'nullable'>, meta: KnobMeta): Knob<number | null> => ({
  ...meta,
  default: d,
  kind: 'number',
  range: { ...range, nullable: true },
});
const choice = <T extends string>(choices: readonly T[], d: NoInfer<T>, meta: KnobMeta): Knob<T> => ({ ...meta, default: d, kind: 'choice', choices });
const bool = (d: boolean, meta: KnobMeta): Knob<boolean> => ({ ...meta, default: d, kind: 'choice', choices: [true, false] });
const text = (d: string, rule: TextRule, meta: KnobMeta): Knob<string> => ({ ...meta, default: d, kind: 'text', rule });

/**
 * The reward function a new page starts from: a naive rule (count one word, capped) that PPO
 * learns to game, the lesson of the preset "Write your own reward".
 */
export const DEFAULT_REWARD_FUNCTION = `// Reward: how often the response says "good", at most 3 times.
(prompt, response) => Math.min(3, response.split("good").length - 1)`;

/**
 * Every knob of the PPO/RLHF loop, one row each: default, range or choices, the page's label and
 * help, and its verl / OpenRLHF name. PpoConfig, DEFAULT_CONFIG, the validator's NUMERIC_RULES and
 * CHOICE_RULES, and the settings panel's fields (src/ui/configFields.ts) are all read off this
 * table; rows are in the panel's order.
 */
export const KNOBS = {
  // Task & model
  task: choice(TASK_NAMES, 'arithmetic', {
    group: 'Task & model',
    label: 'Task',
    help: 'What the policy is rewarded for: solving sums, writing positive text, or stopping on time.',
  }),
  rewardSource: choice(REWARD_SOURCES, 'rule', {
    group: 'Task & model',
    label: 'Reward source',
    help: 'rule = the task’s hand-written rule; model = a learned reward model read at the EOS token; function = the reward function you write below.',
  }),
  rewardFunction: text(
    DEFAULT_REWARD_FUNCTION,
    { maxBytes: REWARD_FUNCTION_LIMITS.maxSourceBytes },
    {
      group: 'Task & model',
      label: 'Reward function',
      help: `JavaScript (prompt, response) => number, used when Reward source = function. It runs sandboxed in the trainer worker (no page, storage or network), at most ${REWARD_FUNCTION_LIMITS.callMs} ms a call and ${REWARD_FUNCTION_LIMITS.batchMs / 1000} s a batch.`,
    },
  ),
  nLayer: num(2, { min: 1, max: 6, integer: true }, { group: 'Task & model', label: 'Layers', help: 'Transformer blocks in actor and critic.' }),
  nHead: num(2, { min: 1, max: 8, integer: true }, { group: 'Task & model', label: 'Attention heads', help: 'Heads per attention layer; must divide the model width.' }),
  dModel: num(64, { min: 32, max: 256, integer: true }, { group: 'Task & model', label: 'Model width', help: 'Hidden size d_model of the residual stream.' }),
  seed: num(
    1,
    { min: 0, max: 2 ** 31 - 1, integer: true },
    { group: 'Task & model', label: 'Seed', help: 'Seeds initialisation, prompts and sampling: the same seed reproduces the run.', openrlhf: '--train.seed' },
  ),
  // Rollout
  promptsPerBatch: num(
    8,
    { min: 1, max: 64, integer: true },
    { group: 'Rollout', label: 'Prompts per batch', help: 'Distinct prompts sampled each PPO iteration.', verl: 'data.train_batch_size', openrlhf: '--rollout.batch_size' },
  ),
  samplesPerPrompt: num(
    4,
    { min: 1, max: 16, integer: true },
    {
      group: 'Rollout',
      label: 'Samples per prompt',
      help: 'Responses per prompt; group estimators (GRPO, RLOO) compare these.',
      verl: 'actor_rollout_ref.rollout.n',
      openrlhf: '--rollout.n_samples_per_prompt',
    },
  ),
  maxResponseLength: num(
    8,
    { min: 1, max: 64, integer: true },
    {
      group: 'Rollout',
      label: 'Max response length',
      help: 'Tokens generated before a response is cut off without EOS.',
      verl: 'data.max_response_length',
      openrlhf: '--rollout.max_new_tokens',
    },
  ),
  temperature: num(
    1,
    { min: 0.05, max: 5 },
    {
      group: 'Rollout',
      label: 'Temperature',
      help: 'Logits are divided by T when sampling and when scoring log-probs.',
      verl: 'actor_rollout_ref.rollout.temperature',
      openrlhf: '--rollout.temperature',
    },
  ),
  topK: num(
    0,
    { min: 0, max: 256, integer: true },
    { group: 'Rollout', label: 'Top-k', help: 'Sample only among the k likeliest tokens (0 = off).', verl: 'actor_rollout_ref.rollout.top_k' },
  ),
  topP: num(
    1,
    { min: 0, max: 1, minOpen: true },
    {
      group: 'Rollout',
      label: 'Top-p',
      help: 'Nucleus sampling: the smallest token set with this much probability (1 = off).',
      verl: 'actor_rollout_ref.rollout.top_p',
      openrlhf: '--rollout.top_p',
    },
  ),
  dynamicSampling: bool(false, {
    group: 'Rollout',
    label: 'Dynamic sampling',
    help: 'DAPO: drop prompts whose samples all scored the same (no learning signal) and sample more prompts until the batch is full.',
    verl: 'algorithm.filter_groups.enable',
    openrlhf: '--algo.dynamic_filtering_enable',
  }),
  maxExtraRollouts: num(
    4,
    { min: 0, max: 16, integer: true },
    {
      group: 'Rollout',
      label: 'Max extra rollouts',
      help: 'Extra sampling rounds dynamic sampling may spend per iteration; a batch still short is filled with dropped prompts.',
    },
  ),
  // Reward & KL
  klCoef: num(
    0.05,
    { min: 0, max: 10 },
    {
      group: 'Reward & KL',
      label: 'KL coefficient β',
      help: 'Weight of the per-token penalty −β·KL that keeps the policy near the reference.',
      verl: 'algorithm.kl_ctrl.kl_coef',
      openrlhf: '--algo.kl.init_coef',
    },
  ),
  klEstimator: choice(KL_ESTIMATORS, 'k1', {
    group: 'Reward & KL',
    label: 'KL estimator',
    help: 'On d = logπ − logπ_ref: k1 = d, abs = |d|, k2 = ½d², k3 = e^−d + d − 1; k1+ / k3+ = value of k1 / k3 with k2’s gradient (verl); k1_clamped = max(d, 0), AlpacaFarm’s one-sided penalty.',
    verl: 'algorithm.kl_penalty',
    openrlhf: '--algo.kl.estimator',
  }),
  klInReward: bool(true, { group: 'Reward & KL', label: 'KL in reward', help: 'Subtract β·KL from each token reward (classic RLHF).', verl: 'algorithm.use_kl_in_reward' }),
  useKlLoss: bool(false, {
    group: 'Reward & KL',
    label: 'KL loss',
    help: 'Add KL to the policy loss instead (GRPO style).',
    verl: 'actor_rollout_ref.actor.use_kl_loss',
    openrlhf: '--algo.kl.use_loss',
  }),
  klLossCoef: num(
    0.01,
    { min: 0, max: 10 },
    {
      group: 'Reward & KL',
      label: 'KL loss coefficient',
      help: 'Weight of the KL term in the policy loss.',
      verl: 'actor_rollout_ref.actor.kl_loss_coef',
      openrlhf: '--algo.kl.init_coef',
    },
  ),
  klLossEstimator: choice(KL_LOSS_ESTIMATORS, 'k3', {
    group: 'Reward & KL',
    label: 'KL loss estimator',
    help: 'Estimator used by the KL loss (k3 is unbiased and low-variance; k1+ / k3+ take k2’s gradient, as verl’s straight-through estimators).',
    verl: 'actor_rollout_ref.actor.kl_loss_type',
    openrlhf: '--algo.kl.estimator',
  }),
  klController: choice(KL_CONTROLLERS, 'fixed', {
    group: 'Reward & KL',
    label: 'KL controller',
    help: 'Fixed β, or adapt β to hold the KL near a target. It drives the reward β, or the KL-loss coefficient when the KL is only in the loss (as OpenRLHF).',
    verl: 'algorithm.kl_ctrl.type',
  }),
  // per token: the mean over sequences of each sequence's token-mean KL (verl's scale)
  klTarget: num(
    0.1,
    { min: 0, max: 10, minOpen: true },
    {
      group: 'Reward & KL',
      label: 'KL target (per token)',
      help: 'The adaptive controller nudges β so kl_token_mean — the mean over responses of each response’s per-token KL, verl’s scale — approaches this (verl’s default: 0.1).',
      verl: 'algorithm.kl_ctrl.target_kl',
      openrlhf: '--algo.kl.target',
    },
  ),
  klHorizon: num(
    10000,
    { min: 1, max: 1e7 },
    {
      group: 'Reward & KL',
      label: 'KL horizon',
      help: 'How slowly the adaptive controller moves β (in samples).',
      verl: 'algorithm.kl_ctrl.horizon',
      openrlhf: '--algo.kl.horizon',
    },
  ),
  scoreClip: num(10, { min: 0, max: 1e4, minOpen: true }, { group: 'Reward & KL', label: 'Score clip', help: 'Task scores are clipped to ±this before shaping.' }),
  noEosPenalty: num(0, { min: -100, max: 0 }, { group: 'Reward & KL', label: 'No-EOS penalty', help: 'Score added to responses that never emit EOS (≤ 0).' }),
  overlongBuffer: num(
    0,
    { min: 0, max: 64, integer: true },
    {
      group: 'Reward & KL',
      label: 'Overlong buffer',
      help: 'DAPO’s soft overlong penalty: responses longer than max length − this lose up to the penalty below, linearly (0 = off).',
      openrlhf: '--reward.overlong_buffer_len',
      verl: '+reward.reward_kwargs.overlong_buffer_cfg.len',
    },
  ),
  overlongPenalty: num(
    1,
    { min: 0, max: 10 },
    {
      group: 'Reward & KL',
      label: 'Overlong penalty',
      help: 'Score lost by a response that reaches the max length (DAPO’s penalty factor).',
      verl: '+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor',
      openrlhf: '--reward.overlong_penalty_factor',
    },
  ),
  // Advantages
  advantageEstimator: choice(ADVANTAGE_ESTIMATORS, 'gae', {
    group: 'Advantages',
    label: 'Advantage estimator',
    help: 'GAE uses the critic; the group estimators (GRPO, RLOO, …) compare samples of a prompt.',
    verl: 'algorithm.adv_estimator',
    openrlhf: '--algo.advantage.estimator',
  }),
  groupKlOrder: choice(GROUP_KL_ORDERS, 'openrlhf', {
    group: 'Advantages',
    label: 'Group KL order',
    help: 'With the KL in the reward, for RF++-baseline, GRPO, RLOO, Dr. GRPO: openrlhf = group statistics of the raw scores, then −β·KL per token as a reward-to-go (OpenRLHF); verl = score − β·ΣKL per response first, then the group statistics (verl). Default openrlhf: per-token KL credit, and the order every measurement here used.',
  }),
  gamma: num(
    1,
    { min: 0, max: 1 },
    {
      group: 'Advantages',
      label: 'Discount γ',
      help: 'Discount of future rewards (1 = none, usual for RLHF). GAE and REINFORCE only: the group estimators compare one score per response.',
      verl: 'algorithm.gamma',
      openrlhf: '--algo.advantage.gamma',
    },
  ),
  lam: num(
    0.95,
    { min: 0, max: 1 },
    { group: 'Advantages', label: 'GAE λ', help: 'Bias–variance trade-off of GAE: 0 = one-step TD, 1 = Monte Carlo.', verl: 'algorithm.lam', openrlhf: '--algo.advantage.lambd' },
  ),
  // PPO update
  ppoEpochs: num(
    2,
    { min: 1, max: 16, integer: true },
    { group: 'PPO update', label: 'PPO epochs', help: 'Passes over each batch of experience.', verl: 'actor_rollout_ref.actor.ppo_epochs', openrlhf: '--train.max_epochs' },
  ),
  miniBatches: num(2, { min: 1, max: 64, integer: true }, { group: 'PPO update', label: 'Minibatches', help: 'Optimiser steps per epoch; must divide the batch evenly.' }),
  clipLow: num(
    0.2,
    { min: 0, max: 1, minOpen: true, maxOpen: true },
    {
      group: 'PPO update',
      label: 'Clip ε',
      help: 'The ratio is clipped below at 1 − ε: limits how far one update moves the policy.',
      verl: 'actor_rollout_ref.actor.clip_ratio_low',
      openrlhf: '--actor.eps_clip_low_high',
    },
  ),
  clipHigh: num(
    0.2,
    { min: 0, max: 10, minOpen: true },
    {
      group: 'PPO update',
      label: 'Clip ε (high)',
      help: 'Upper clip 1 + ε_high; raising it alone is DAPO’s “clip-higher”.',
      verl: 'actor_rollout_ref.actor.clip_ratio_high',
      openrlhf: '--actor.eps_clip_low_high',
    },
  ),
  dualClip: nullableNum(
    3,
    { min: 1, max: 100, minOpen: true },
    {
      group: 'PPO update',
      label: 'Dual clip c',
      help: 'For A < 0 the loss is capped at −c·A (empty = off).',
      verl: 'actor_rollout_ref.actor.clip_ratio_c',
      openrlhf: '--actor.dual_clip',
    },
  ),
  valueClip: nullableNum(
    0.2,
    { min: 0, max: 100, minOpen: true },
    {
      group: 'PPO update',
      label: 'Value clip',
      help: 'New values stay within ±this of the old values in the value loss (empty = off).',
      verl: 'critic.cliprange_value',
      openrlhf: '--critic.value_clip',
    },
  ),
  lossMode: choice(LOSS_MODES, 'vanilla', {
    group: 'PPO update',
    label: 'Policy loss',
    help: 'vanilla = PPO’s clipped surrogate; gspo = one length-normalised ratio per sequence (GSPO); cispo = clipped importance weight as a stop-gradient coefficient of A·logπ (CISPO).',
    verl: 'actor_rollout_ref.actor.policy_loss.loss_mode',
    openrlhf: '--actor.policy_loss_type',
  }),
  lossAgg: choice(LOSS_AGGS, 'token-mean', {
    group: 'PPO update',
    label: 'Loss aggregation',
    help: 'How token losses are averaged: over all tokens (DAPO’s token-level loss), per sequence, per-sequence sums, or Dr. GRPO’s constant norm.',
    verl: 'actor_rollout_ref.actor.loss_agg_mode',
  }),
  normScale: choice(NORM_SCALES, 'per_seq', {
    group: 'PPO update',
    label: 'Constant-norm scale',
    help: 'seq-mean-token-sum-norm only: per_seq divides by the number of sequences too (Dr. GRPO paper; verl ≥ 0.7.1); verl sums them, as verl ≤ 0.7.0 did (B× larger).',
  }),
  tisCap: nullableNum(
    null,
    { min: 1, max: 100 },
    {
      group: 'PPO update',
      label: 'TIS cap',
      help: 'Token-level truncated importance sampling: weight each token’s loss by min(π_old/π_rollout, cap) to correct for the sampler’s top-k/top-p (empty = off).',
      verl: 'algorithm.rollout_correction.rollout_is_threshold',
      openrlhf: '--algo.advantage.is_correction_threshold',
    },
  ),
  entropyCoef: num(
    0,
    { min: 0, max: 1 },
    {
      group: 'PPO update',
      label: 'Entropy bonus',
      help: 'Rewards keeping the policy’s token distribution broad.',
      verl: 'actor_rollout_ref.actor.entropy_coeff',
      openrlhf: '--actor.entropy_coef',
    },
  ),
  targetKl: nullableNum(
    null,
    { min: 0, max: 10, minOpen: true },
    {
      group: 'PPO update',
      label: 'Early-stop KL',
      help: 'Stop the update after an epoch whose approx KL exceeds this, as Spinning Up’s and Stable-Baselines3’s target_kl (empty = never).',
    },
  ),
  // Optimiser
  actorLr: num(
    1e-4,
    { min: 0, max: 1, minOpen: true },
    { group: 'Optimiser', label: 'Learning rate', help: 'AdamW step size of the policy (actor).', verl: 'actor_rollout_ref.actor.optim.lr', openrlhf: '--actor.adam.lr' },
  ),
  criticLr: num(
    5e-4,
    { min: 0, max: 1, minOpen: true },
    { group: 'Optimiser', label: 'Critic learning rate', help: 'AdamW step size of the value model (critic).', verl: 'critic.optim.lr', openrlhf: '--critic.adam.lr' },
  ),
  warmupSteps: num(
    0,
    { min: 0, max: 100000, integer: true },
    {
      group: 'Optimiser',
      label: 'Warm-up steps',
      help: 'Linear learning-rate warm-up from 0.',
      verl: 'actor_rollout_ref.actor.optim.lr_warmup_steps',
      openrlhf: '--actor.lr_warmup_ratio',
    },
  ),
  weightDecay: num(
    0,
    { min: 0, max: 1 },
    { group: 'Optimiser', label: 'Weight decay', help: 'Decoupled AdamW weight decay.', verl: 'actor_rollout_ref.actor.optim.weight_decay', openrlhf: '--actor.adam.weight_decay' },
  ),
  maxGradNorm: num(
    1,
    { min: 0, max: 1e4 },
    {
      group: 'Optimiser',
      label: 'Max grad norm',
      help: 'Gradients are rescaled to at most this global norm.',
      verl: 'actor_rollout_ref.actor.grad_clip',
      openrlhf: '--actor.max_norm',
    },
  ),
  adamBeta1: num(
    0.9,
    { min: 0, max: 1, maxOpen: true },
    { group: 'Optimiser', label: 'Adam β₁', help: 'Momentum of the gradient average.', verl: 'actor_rollout_ref.actor.optim.betas', openrlhf: '--actor.adam.betas' },
  ),
  adamBeta2: num(
    0.999,
    { min: 0, max: 1, maxOpen: true },
    { group: 'Optimiser', label: 'Adam β₂', help: 'Momentum of the squared-gradient average.', verl: 'actor_rollout_ref.actor.optim.betas', openrlhf: '--actor.adam.betas' },
  ),
  // Evaluation
  evalEvery: num(
    10,
    { min: 0, max: 1000, integer: true },
    {
      group: 'Evaluation',
      label: 'Evaluate every',
      help: 'Score held-out prompts (never trained on) every this many iterations; 0 = never.',
      verl: 'trainer.test_freq',
      openrlhf: '--eval.steps',
    },
  ),
};

type KnobValue<K> = K extends Knob<infer T> ? T : never;
export type PpoConfig = { [K in keyof typeof KNOBS]: KnobValue<(typeof KNOBS)[K]> };

/** Every knob, in the table's (the panel's) order. */
export const CONFIG_KEYS = Object.keys(KNOBS) as (keyof PpoConfig)[];

const knob = (k: keyof PpoConfig) => KNOBS[k] as Knob<unknown>;

export const DEFAULT_CONFIG: PpoConfig = Object.fromEntries(CONFIG_KEYS.map((k) => [k, knob(k).default])) as PpoConfig;

export interface ConfigProblem {
  field: keyof PpoConfig | string;
  value: unknown;
  message: string;
}

/** Numeric fields: ranges the UI shows and the validator enforces. */
export const NUMERIC_RULES: Partial<Record<keyof PpoConfig, NumRule>> = Object.fromEntries(
  CONFIG_KEYS.flatMap((k) => {
    const r = knob(k);
    return r.kind === 'number' ? [[k, r.range]] : [];
  }),
);

export const CHOICE_RULES: Partial<Record<keyof PpoConfig, readonly unknown[]>> = Object.fromEntries(
  CONFIG_KEYS.flatMap((k) => {
    const r = knob(k);
    return r.kind === 'choice' ? [[k, r.choices]] : [];
  }),
);

/** Free-text fields (source code) and their size limits. */
export const TEXT_RULES: Partial<Record<keyof PpoConfig, TextRule>> = Object.fromEntries(
  CONFIG_KEYS.flatMap((k) => {
    const r = knob(k);
    return r.kind === 'text' ? [[k, r.rule]] : [];
  }),
);

/** A text field's problem (not a string, or too large), or null. */
export function checkText(field: string, value: unknown, r: TextRule): ConfigProblem | null {
  if (typeof value !== 'string') return { field, value, message: `${field}: not text; allowed: JavaScript source of at most ${r.maxBytes} bytes` };
  const bytes = sourceBytes(value);
  return bytes > r.maxBytes ? { field, value, message: `${field}: ${bytes} bytes; allowed: at most ${r.maxBytes} bytes` } : null;
}

export function describeRange(r: NumRule): string {
  const lo = `${r.min}${r.minOpen ? ' (exclusive)' : ''}`;
  const hi = `${r.max}${r.maxOpen ? ' (exclusive)' : ''}`;
  return `${r.integer ? 'an integer' : 'a number'} from ${lo} to ${hi}${r.nullable ? ', or empty to disable' : ''}`;
}

/** A value or key as a message shows it: JSON, cut to 40 characters so a 10 kB value stays readable. */
export function shown(value: unknown): string {
  const s = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return s.length > 40 ? `${s.slice(0, 40)}… (${s.length} chars)` : s;
}

/** A setting's name as a message shows it: escapes visible (a newline prints as \n), cut to 40 characters. */
export function shownKey(key: string): string {
  const s = JSON.stringify(key).slice(1, -1);
  return s.length > 40 ? `${s.slice(0, 40)}… (${key.length} chars)` : s;
}

/** Own settings only: `toString`, `constructor` and `__proto__` are not settings. */
export function isConfigKey(key: string): key is keyof PpoConfig {
  return Object.hasOwn(DEFAULT_CONFIG, key);
}

export function checkNumber(field: string, value: unknown, r: NumRule): ConfigProblem | null {
  if (value === null && r.nullable) return null;
  const bad = (why: string): ConfigProblem => ({ field, value, message: `${field} = ${shown(value)}: ${why}; allowed: ${describeRange(r)}` });
  if (typeof value !== 'number' || !Number.isFinite(value)) return bad('not a finite number');
  if (r.integer && !Number.isInteger(value)) return bad('not an integer');
  if (value < r.min || (r.minOpen && value === r.min)) return bad('too small');
  if (value > r.max || (r.maxOpen && value === r.max)) return bad('too large');
  return null;
}

/** Every problem with `c`, each naming the field, the given value and what is allowed. */
export function validateConfig(c: Partial<PpoConfig> & Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const key of Object.keys(c)) {
    if (!isConfigKey(key)) problems.push({ field: key, value: c[key], message: `${shownKey(key)}: unknown setting` });
  }
  for (const [field, rule] of Object.entries(NUMERIC_RULES) as [keyof PpoConfig, NumRule][]) {
    const p = checkNumber(field, c[field], rule);
    if (p) problems.push(p);
  }
  for (const [field, choices] of Object.entries(CHOICE_RULES) as [keyof PpoConfig, readonly unknown[]][]) {
    if (!choices.includes(c[field])) {
      problems.push({ field, value: c[field], message: `${field} = ${shown(c[field])}: allowed: ${choices.map((x) => JSON.stringify(x)).join(', ')}` });
    }
  }
  for (const [field, rule] of Object.entries(TEXT_RULES) as [keyof PpoConfig, TextRule][]) {
    const p = checkText(field, c[field], rule);
    if (p) problems.push(p);
  }
  if (problems.length > 0) return problems;
  const cfg = c as PpoConfig;
  if (cfg.rewardSource === 'model' && !TASKS_BY_NAME[cfg.task].preferencePair) {
    // Only a task with preference pairs has a learned reward model (shipped, or trained in the tab).
    const withModel = TASK_NAMES.filter((t) => TASKS_BY_NAME[t].preferencePair);
    problems.push({
      field: 'rewardSource',
      value: cfg.rewardSource,
      message: `rewardSource = "model": task ${cfg.task} has no learned reward model; allowed with it: "rule", "function" (a learned reward model: task ${withModel.join(', ')})`,
    });
  }
  if (cfg.dModel % cfg.nHead !== 0) {
    problems.push({ field: 'nHead', value: cfg.nHead, message: `nHead = ${cfg.nHead}: must divide dModel (${cfg.dModel})` });
  }
  const batch = cfg.promptsPerBatch * cfg.samplesPerPrompt;
  if (batch % cfg.miniBatches !== 0) {
    problems.push({
      field: 'miniBatches',
      value: cfg.miniBatches,
      message: `miniBatches = ${cfg.miniBatches}: the batch of ${batch} sequences (promptsPerBatch × samplesPerPrompt) must divide into equal minibatches`,
    });
  }
  if (cfg.advantageEstimator !== 'gae' && GROUPED_ESTIMATORS.has(cfg.advantageEstimator) && cfg.samplesPerPrompt < 2) {
    problems.push({
      field: 'samplesPerPrompt',
      value: cfg.samplesPerPrompt,
      message: `samplesPerPrompt = ${cfg.samplesPerPrompt}: the ${cfg.advantageEstimator} estimator compares samples of the same prompt, so it needs at least 2`,
    });
  }
  if (cfg.advantageEstimator !== 'gae' && cfg.advantageEstimator !== 'reinforce' && cfg.gamma !== 1) {
    // REINFORCE discounts its token rewards in both engines (verl compute_reinforce_plus_plus_outcome_advantage,
    // OpenRLHF get_cumulative_returns); OpenRLHF forces γ = 1 for the group estimators, and verl
    // computes them from one summed score per response, so γ has no meaning there.
    problems.push({
      field: 'gamma',
      value: cfg.gamma,
      message: `gamma = ${cfg.gamma}: the ${cfg.advantageEstimator} estimator compares one score per response, so it is defined only for γ = 1 (allowed: 1; use GAE or reinforce for discounting)`,
    });
  }
  if (cfg.dynamicSampling && cfg.samplesPerPrompt < 2) {
    problems.push({
      field: 'samplesPerPrompt',
      value: cfg.samplesPerPrompt,
      message: `samplesPerPrompt = ${cfg.samplesPerPrompt}: dynamic sampling drops groups whose scores are all equal, so it needs at least 2 samples per prompt`,
    });
  }
  if (cfg.overlongBuffer >= cfg.maxResponseLength && cfg.overlongBuffer > 0) {
    problems.push({
      field: 'overlongBuffer',
      value: cfg.overlongBuffer,
      message: `overlongBuffer = ${cfg.overlongBuffer}: must be smaller than maxResponseLength (${cfg.maxResponseLength}); allowed: 0 (off) to ${cfg.maxResponseLength - 1}`,
    });
  }
  if (!cfg.klInReward && !cfg.useKlLoss && cfg.klController === 'adaptive') {
    problems.push({ field: 'klController', value: cfg.klController, message: 'klController = "adaptive": needs KL in the reward or the KL loss enabled' });
  }
  return problems;
}

export function withDefaults(partial: Partial<PpoConfig>): PpoConfig {
  return { ...DEFAULT_CONFIG, ...partial };
}
