// One typed config with every knob of the PPO/RLHF loop, its defaults, and a validator that
// reports every problem at once (field, given value, allowed range or choices).
import { GROUP_ESTIMATORS, type GroupEstimator } from '../reference/groupAdvantages.ts';
import { KL_ESTIMATORS, type KlEstimator } from '../reference/kl.ts';
import { LOSS_AGGS, NORM_SCALES } from '../reference/aggregate.ts';
import { LOSS_MODES } from '../reference/policyLoss.ts';
import { COV_DEFAULTS, SAPO_TAU_NEG_DEFAULT, SAPO_TAU_POS_DEFAULT } from '../reference/policyLoss.ts';
import { GROUP_KL_ORDERS, GROUPED_ESTIMATORS, type GroupKlOrder } from '../reference/groupAdvantages.ts';
import { ROLLOUT_IS_LEVELS, ROLLOUT_RS_OPTIONS, rsCriterion, type RolloutCorrectionParams, type RolloutRsOption } from '../reference/rolloutCorrection.ts';
import { TASKS_BY_NAME } from '../tasks/index.ts';
import { TASK_NAMES } from '../tasks/task.ts';
import { REWARD_FUNCTION_LIMITS, sourceBytes } from './rewardFunction/problem.ts';
// The English words of the knobs, as the CLIs, the exported jobs and the worker read them; the page
// shows them in the visitor's language from the same keys (src/ui/settingsText.ts).
import settingsEn from '../i18n/locales/en/settings.json' with { type: 'json' };

export type AdvantageEstimator = 'gae' | GroupEstimator;
export { GROUP_KL_ORDERS, type GroupKlOrder };
export const ADVANTAGE_ESTIMATORS: readonly AdvantageEstimator[] = ['gae', ...GROUP_ESTIMATORS];

/** Rejection sampling: off, or one of verl's rollout_rs options. */
export const ROLLOUT_RS_CHOICES = ['off', ...ROLLOUT_RS_OPTIONS] as const;
export type RolloutRsChoice = (typeof ROLLOUT_RS_CHOICES)[number];

export const KL_CONTROLLERS = ['fixed', 'adaptive'] as const;
export type KlController = (typeof KL_CONTROLLERS)[number];

/** The KL loss needs a gradient; AlpacaFarm's one-sided k1_clamped is a reward penalty only. */
export const KL_LOSS_ESTIMATORS: readonly KlEstimator[] = KL_ESTIMATORS.filter((k) => k !== 'k1_clamped');
/** rule: the task's own; model: a learned reward model; function: `rewardFunction`, written by the user. */
export const REWARD_SOURCES = ['rule', 'model', 'function'] as const;
export type RewardSource = (typeof REWARD_SOURCES)[number];

/** The settings panel's sections, in order: ids of their names (settings:groups.<id>). */
export const GROUPS = ['taskModel', 'rollout', 'rewardKl', 'advantages', 'ppoUpdate', 'optimiser', 'evaluation'] as const;
export type Group = (typeof GROUPS)[number];

/** A section's English name ("Task & model"). */
export function groupName(g: Group): string {
  return settingsEn.groups[g];
}

export interface NumRule {
  min: number;
  max: number;
  /** exclusive bounds (min < x / x < max) */
  minOpen?: boolean;
  maxOpen?: boolean;
  integer?: boolean;
  nullable?: boolean;
}

/** A knob's section, and the name of the same knob in verl / OpenRLHF where one exists. */
export interface KnobMeta {
  group: Group;
  /** verl Hydra key the exported job sets from this knob (src/export/verl.ts; checked in tests/unit/config_schema.test.ts). */
  verl?: string;
  /** OpenRLHF flag the exported job sets from this knob (src/export/openrlhf.ts; same check). */
  openrlhf?: string;
}

/** A free-text knob (source code): its size limit in UTF-8 bytes. */
export interface TextRule {
  maxBytes: number;
}

/** What the page shows for a knob: its label and a one-line help (settings:knobs.<key>), in English here. */
export interface KnobText {
  label: string;
  help: string;
}

/** A row of the table: default, range / choices / size limit, section and engine names. */
type Row<T> = KnobMeta & { default: T } & ({ kind: 'number'; range: NumRule } | { kind: 'choice'; choices: readonly T[] } | { kind: 'text'; rule: TextRule });
export type Knob<T> = Row<T> & KnobText;

const num = (d: number, range: Omit<NumRule, 'nullable'>, meta: KnobMeta): Row<number> => ({ ...meta, default: d, kind: 'number', range });
const nullableNum = (d: number | null, range: Omit<NumRule, 'nullable'>, meta: KnobMeta): Row<number | null> => ({
  ...meta,
  default: d,
  kind: 'number',
  range: { ...range, nullable: true },
});
const choice = <T extends string>(choices: readonly T[], d: NoInfer<T>, meta: KnobMeta): Row<T> => ({ ...meta, default: d, kind: 'choice', choices });
const bool = (d: boolean, meta: KnobMeta): Row<boolean> => ({ ...meta, default: d, kind: 'choice', choices: [true, false] });
const text = (d: string, rule: TextRule, meta: KnobMeta): Row<string> => ({ ...meta, default: d, kind: 'text', rule });

/**
 * The reward function a new page starts from: a naive rule (count one word, capped) that PPO
 * learns to game, the lesson of the preset "Write your own reward".
 */
export const DEFAULT_REWARD_FUNCTION = `// Reward: how often the response says "good", at most 3 times.
(prompt, response) => Math.min(3, response.split("good").length - 1)`;

/** The values the knobs' help texts name ({{callMs}} in settings:knobs.rewardFunction.help). */
export const KNOB_HELP_VALUES = { callMs: REWARD_FUNCTION_LIMITS.callMs, batchS: REWARD_FUNCTION_LIMITS.batchMs / 1000 };

/** `{{name}}` in an English text replaced by its value (the page's i18next does the same for its text). */
function fill(text: string, values: Record<string, unknown>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (all, name: string) => (Object.hasOwn(values, name) ? String(values[name]) : all));
}

/**
 * Every knob of the PPO/RLHF loop, one row each: default, range or choices, its section, and its
 * verl / OpenRLHF name; the label and help come from settings:knobs.<key> (English here).
 * PpoConfig, DEFAULT_CONFIG, the validator's NUMERIC_RULES and CHOICE_RULES, and the settings
 * panel's fields (src/ui/configFields.ts) are all read off this table; rows are in the panel's order.
 */
const ROWS = {
  // Task & model
  task: choice(TASK_NAMES, 'arithmetic', {
    group: 'taskModel',
  }),
  rewardSource: choice(REWARD_SOURCES, 'rule', {
    group: 'taskModel',
  }),
  rewardFunction: text(
    DEFAULT_REWARD_FUNCTION,
    { maxBytes: REWARD_FUNCTION_LIMITS.maxSourceBytes },
    {
      group: 'taskModel',
    },
  ),
  nLayer: num(2, { min: 1, max: 6, integer: true }, { group: 'taskModel' }),
  nHead: num(2, { min: 1, max: 8, integer: true }, { group: 'taskModel' }),
  dModel: num(64, { min: 32, max: 256, integer: true }, { group: 'taskModel' }),
  seed: num(1, { min: 0, max: 2 ** 31 - 1, integer: true }, { group: 'taskModel', openrlhf: '--train.seed' }),
  // Rollout
  promptsPerBatch: num(8, { min: 1, max: 64, integer: true }, { group: 'rollout', verl: 'data.train_batch_size', openrlhf: '--rollout.batch_size' }),
  samplesPerPrompt: num(
    4,
    { min: 1, max: 16, integer: true },
    {
      group: 'rollout',
      verl: 'actor_rollout_ref.rollout.n',
      openrlhf: '--rollout.n_samples_per_prompt',
    },
  ),
  maxResponseLength: num(
    8,
    { min: 1, max: 64, integer: true },
    {
      group: 'rollout',
      verl: 'data.max_response_length',
      openrlhf: '--rollout.max_new_tokens',
    },
  ),
  temperature: num(
    1,
    { min: 0.05, max: 5 },
    {
      group: 'rollout',
      verl: 'actor_rollout_ref.rollout.temperature',
      openrlhf: '--rollout.temperature',
    },
  ),
  topK: num(0, { min: 0, max: 256, integer: true }, { group: 'rollout', verl: 'actor_rollout_ref.rollout.top_k' }),
  topP: num(
    1,
    { min: 0, max: 1, minOpen: true },
    {
      group: 'rollout',
      verl: 'actor_rollout_ref.rollout.top_p',
      openrlhf: '--rollout.top_p',
    },
  ),
  dynamicSampling: bool(false, {
    group: 'rollout',
    verl: 'algorithm.filter_groups.enable',
    openrlhf: '--algo.dynamic_filtering_enable',
  }),
  maxExtraRollouts: num(
    4,
    { min: 0, max: 16, integer: true },
    {
      group: 'rollout',
    },
  ),
  // Reward & KL
  klCoef: num(
    0.05,
    { min: 0, max: 10 },
    {
      group: 'rewardKl',
      verl: 'algorithm.kl_ctrl.kl_coef',
      openrlhf: '--algo.kl.init_coef',
    },
  ),
  klEstimator: choice(KL_ESTIMATORS, 'k1', {
    group: 'rewardKl',
    verl: 'algorithm.kl_penalty',
    openrlhf: '--algo.kl.estimator',
  }),
  klInReward: bool(true, { group: 'rewardKl', verl: 'algorithm.use_kl_in_reward' }),
  useKlLoss: bool(false, {
    group: 'rewardKl',
    verl: 'actor_rollout_ref.actor.use_kl_loss',
    openrlhf: '--algo.kl.use_loss',
  }),
  klLossCoef: num(
    0.01,
    { min: 0, max: 10 },
    {
      group: 'rewardKl',
      verl: 'actor_rollout_ref.actor.kl_loss_coef',
      openrlhf: '--algo.kl.init_coef',
    },
  ),
  klLossEstimator: choice(KL_LOSS_ESTIMATORS, 'k3', {
    group: 'rewardKl',
    verl: 'actor_rollout_ref.actor.kl_loss_type',
    openrlhf: '--algo.kl.estimator',
  }),
  klController: choice(KL_CONTROLLERS, 'fixed', {
    group: 'rewardKl',
    verl: 'algorithm.kl_ctrl.type',
  }),
  // per token: the mean over sequences of each sequence's token-mean KL (verl's scale)
  klTarget: num(
    0.1,
    { min: 0, max: 10, minOpen: true },
    {
      group: 'rewardKl',
      verl: 'algorithm.kl_ctrl.target_kl',
      openrlhf: '--algo.kl.target',
    },
  ),
  klHorizon: num(
    10000,
    { min: 1, max: 1e7 },
    {
      group: 'rewardKl',
      verl: 'algorithm.kl_ctrl.horizon',
      openrlhf: '--algo.kl.horizon',
    },
  ),
  scoreClip: num(10, { min: 0, max: 1e4, minOpen: true }, { group: 'rewardKl' }),
  noEosPenalty: num(0, { min: -100, max: 0 }, { group: 'rewardKl' }),
  overlongBuffer: num(
    0,
    { min: 0, max: 64, integer: true },
    {
      group: 'rewardKl',
      openrlhf: '--reward.overlong_buffer_len',
      verl: '+reward.reward_kwargs.overlong_buffer_cfg.len',
    },
  ),
  overlongPenalty: num(
    1,
    { min: 0, max: 10 },
    {
      group: 'rewardKl',
      verl: '+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor',
      openrlhf: '--reward.overlong_penalty_factor',
    },
  ),
  // Advantages
  advantageEstimator: choice(ADVANTAGE_ESTIMATORS, 'gae', {
    group: 'advantages',
    verl: 'algorithm.adv_estimator',
    openrlhf: '--algo.advantage.estimator',
  }),
  groupKlOrder: choice(GROUP_KL_ORDERS, 'openrlhf', {
    group: 'advantages',
  }),
  gamma: num(
    1,
    { min: 0, max: 1 },
    {
      group: 'advantages',
      verl: 'algorithm.gamma',
      openrlhf: '--algo.advantage.gamma',
    },
  ),
  lam: num(0.95, { min: 0, max: 1 }, { group: 'advantages', verl: 'algorithm.lam', openrlhf: '--algo.advantage.lambd' }),
  // PPO update
  ppoEpochs: num(2, { min: 1, max: 16, integer: true }, { group: 'ppoUpdate', verl: 'actor_rollout_ref.actor.ppo_epochs', openrlhf: '--train.max_epochs' }),
  miniBatches: num(2, { min: 1, max: 64, integer: true }, { group: 'ppoUpdate' }),
  clipLow: num(
    0.2,
    { min: 0, max: 1, minOpen: true, maxOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'actor_rollout_ref.actor.clip_ratio_low',
      openrlhf: '--actor.eps_clip_low_high',
    },
  ),
  clipHigh: num(
    0.2,
    { min: 0, max: 10, minOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'actor_rollout_ref.actor.clip_ratio_high',
      openrlhf: '--actor.eps_clip_low_high',
    },
  ),
  dualClip: nullableNum(
    3,
    { min: 1, max: 100, minOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'actor_rollout_ref.actor.clip_ratio_c',
      openrlhf: '--actor.dual_clip',
    },
  ),
  valueClip: nullableNum(
    0.2,
    { min: 0, max: 100, minOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'critic.cliprange_value',
      openrlhf: '--critic.value_clip',
    },
  ),
  lossMode: choice(LOSS_MODES, 'vanilla', {
    group: 'ppoUpdate',
    verl: 'actor_rollout_ref.actor.policy_loss.loss_mode',
    openrlhf: '--actor.policy_loss_type',
  }),
  sapoTauPos: num(
    SAPO_TAU_POS_DEFAULT,
    { min: 0, max: 100, minOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'actor_rollout_ref.actor.tau_pos',
    },
  ),
  sapoTauNeg: num(
    SAPO_TAU_NEG_DEFAULT,
    { min: 0, max: 100, minOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'actor_rollout_ref.actor.tau_neg',
    },
  ),
  // Clip-Cov / KL-Cov (verl policy_loss.*; OpenRLHF has neither). Fractions of the minibatch's
  // valid tokens; verl's 0.0002 picks one token at the playground's sizes.
  clipCovRatio: num(COV_DEFAULTS.clipCovRatio, { min: 0, max: 1, minOpen: true }, { group: 'ppoUpdate', verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_ratio' }),
  clipCovLb: num(COV_DEFAULTS.clipCovLb, { min: -100, max: 100 }, { group: 'ppoUpdate', verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_lb' }),
  clipCovUb: num(COV_DEFAULTS.clipCovUb, { min: -100, max: 100 }, { group: 'ppoUpdate', verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_ub' }),
  klCovRatio: num(COV_DEFAULTS.klCovRatio, { min: 0, max: 1, minOpen: true }, { group: 'ppoUpdate', verl: 'actor_rollout_ref.actor.policy_loss.kl_cov_ratio' }),
  ppoKlCoef: num(COV_DEFAULTS.ppoKlCoef, { min: 0, max: 100 }, { group: 'ppoUpdate', verl: 'actor_rollout_ref.actor.policy_loss.ppo_kl_coef' }),
  lossAgg: choice(LOSS_AGGS, 'token-mean', {
    group: 'ppoUpdate',
    verl: 'actor_rollout_ref.actor.loss_agg_mode',
  }),
  normScale: choice(NORM_SCALES, 'per_seq', {
    group: 'ppoUpdate',
  }),
  tisCap: nullableNum(
    null,
    { min: 1, max: 100 },
    {
      group: 'ppoUpdate',
      verl: 'algorithm.rollout_correction.rollout_is_threshold',
      openrlhf: '--algo.advantage.is_correction_threshold',
    },
  ),
  // Rollout correction beyond token TIS (verl v0.9.0 algorithm.rollout_correction.*, OpenRLHF
  // --algo.advantage.is_correction_*); src/reference/rolloutCorrection.ts has the math.
  rolloutIs: choice(ROLLOUT_IS_LEVELS, 'token', {
    group: 'ppoUpdate',
    verl: 'algorithm.rollout_correction.rollout_is',
  }),
  icepopLower: nullableNum(
    null,
    { min: 0, max: 1, minOpen: true },
    {
      group: 'ppoUpdate',
      openrlhf: '--algo.advantage.is_correction_type',
    },
  ),
  tisLower: nullableNum(
    null,
    { min: 0, max: 1 },
    {
      group: 'ppoUpdate',
    },
  ),
  rolloutRs: choice(ROLLOUT_RS_CHOICES, 'off', {
    group: 'ppoUpdate',
    verl: 'algorithm.rollout_correction.rollout_rs',
  }),
  rolloutRsThreshold: num(
    2,
    { min: 0, max: 1e4, minOpen: true },
    {
      group: 'ppoUpdate',
      verl: 'algorithm.rollout_correction.rollout_rs_threshold',
    },
  ),
  entropyCoef: num(
    0,
    { min: 0, max: 1 },
    {
      group: 'ppoUpdate',
      verl: 'actor_rollout_ref.actor.entropy_coeff',
      openrlhf: '--actor.entropy_coef',
    },
  ),
  targetKl: nullableNum(
    null,
    { min: 0, max: 10, minOpen: true },
    {
      group: 'ppoUpdate',
    },
  ),
  // Optimiser
  actorLr: num(1e-4, { min: 0, max: 1, minOpen: true }, { group: 'optimiser', verl: 'actor_rollout_ref.actor.optim.lr', openrlhf: '--actor.adam.lr' }),
  criticLr: num(5e-4, { min: 0, max: 1, minOpen: true }, { group: 'optimiser', verl: 'critic.optim.lr', openrlhf: '--critic.adam.lr' }),
  warmupSteps: num(
    0,
    { min: 0, max: 100000, integer: true },
    {
      group: 'optimiser',
      verl: 'actor_rollout_ref.actor.optim.lr_warmup_steps',
      openrlhf: '--actor.lr_warmup_ratio',
    },
  ),
  weightDecay: num(0, { min: 0, max: 1 }, { group: 'optimiser', verl: 'actor_rollout_ref.actor.optim.weight_decay', openrlhf: '--actor.adam.weight_decay' }),
  maxGradNorm: num(
    1,
    { min: 0, max: 1e4 },
    {
      group: 'optimiser',
      verl: 'actor_rollout_ref.actor.grad_clip',
      openrlhf: '--actor.max_norm',
    },
  ),
  adamBeta1: num(0.9, { min: 0, max: 1, maxOpen: true }, { group: 'optimiser', verl: 'actor_rollout_ref.actor.optim.betas', openrlhf: '--actor.adam.betas' }),
  adamBeta2: num(0.999, { min: 0, max: 1, maxOpen: true }, { group: 'optimiser', verl: 'actor_rollout_ref.actor.optim.betas', openrlhf: '--actor.adam.betas' }),
  // Evaluation
  evalEvery: num(
    10,
    { min: 0, max: 1000, integer: true },
    {
      group: 'evaluation',
      verl: 'trainer.test_freq',
      openrlhf: '--eval.steps',
    },
  ),
};

type KnobTexts = typeof settingsEn.knobs;
/** The rows with their English label and help. */
export const KNOBS = Object.fromEntries(
  Object.entries(ROWS).map(([key, row]) => {
    const text = settingsEn.knobs[key as keyof KnobTexts];
    return [key, { ...row, label: text.label, help: fill(text.help, KNOB_HELP_VALUES) }];
  }),
) as { [K in keyof typeof ROWS]: (typeof ROWS)[K] & KnobText };

type KnobValue<K> = K extends Row<infer T> ? T : never;
export type PpoConfig = { [K in keyof typeof KNOBS]: KnobValue<(typeof KNOBS)[K]> };

/** Every knob, in the table's (the panel's) order. */
export const CONFIG_KEYS = Object.keys(KNOBS) as (keyof PpoConfig)[];

const knob = (k: keyof PpoConfig) => KNOBS[k] as Knob<unknown>;

export const DEFAULT_CONFIG: PpoConfig = Object.fromEntries(CONFIG_KEYS.map((k) => [k, knob(k).default])) as PpoConfig;

/** Why a number is refused (settings:problems.why.<id>). */
export type NumberWhy = 'notFinite' | 'notInteger' | 'tooSmall' | 'tooLarge' | 'notANumber';

/**
 * What is wrong, with the values a sentence about it needs, so the page can word it in the
 * visitor's language (settings:problems.<kind>); `message` is the same in English.
 */
export type ProblemDetail =
  | { kind: 'unknownSetting' }
  | { kind: 'number'; why: NumberWhy; rule: NumRule }
  /** quoted: the choices as JSON ("k1") rather than as written in a link (k1) */
  | { kind: 'choice'; choices: readonly unknown[]; quoted: boolean }
  | { kind: 'notText'; maxBytes: number }
  | { kind: 'tooManyBytes'; bytes: number; maxBytes: number }
  | { kind: 'noRewardModel'; task: string; allowed: readonly string[]; withModel: readonly string[] }
  | { kind: 'headsDivide'; dModel: number }
  | { kind: 'miniBatches'; batch: number }
  | { kind: 'groupSamples'; estimator: string }
  | { kind: 'groupGamma'; estimator: string }
  | { kind: 'dynamicSamples' }
  | { kind: 'overlong'; maxResponseLength: number }
  | { kind: 'adaptiveKl' }
  | { kind: 'rolloutCorrection'; reason: 'needsIs' | 'aboveCap' | 'exclusive'; cap: number | null };

export interface ConfigProblem {
  field: keyof PpoConfig | string;
  value: unknown;
  /** The problem in English (CLIs, the worker, logs). */
  message: string;
  detail: ProblemDetail;
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
  if (typeof value !== 'string')
    return { field, value, message: `${field}: not text; allowed: JavaScript source of at most ${r.maxBytes} bytes`, detail: { kind: 'notText', maxBytes: r.maxBytes } };
  const bytes = sourceBytes(value);
  return bytes > r.maxBytes
    ? { field, value, message: `${field}: ${bytes} bytes; allowed: at most ${r.maxBytes} bytes`, detail: { kind: 'tooManyBytes', bytes, maxBytes: r.maxBytes } }
    : null;
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

/** A key that is no setting: "foo: unknown setting". */
export function unknownSetting(key: string, value: unknown): ConfigProblem {
  return { field: key, value, message: `${shownKey(key)}: unknown setting`, detail: { kind: 'unknownSetting' } };
}

/** Own settings only: `toString`, `constructor` and `__proto__` are not settings. */
export function isConfigKey(key: string): key is keyof PpoConfig {
  return Object.hasOwn(DEFAULT_CONFIG, key);
}

export function checkNumber(field: string, value: unknown, r: NumRule): ConfigProblem | null {
  if (value === null && r.nullable) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) return numberProblem(field, value, 'notFinite', r);
  if (r.integer && !Number.isInteger(value)) return numberProblem(field, value, 'notInteger', r);
  if (value < r.min || (r.minOpen && value === r.min)) return numberProblem(field, value, 'tooSmall', r);
  if (value > r.max || (r.maxOpen && value === r.max)) return numberProblem(field, value, 'tooLarge', r);
  return null;
}

/** The English of each NumberWhy. */
export const NUMBER_WHY: Record<NumberWhy, string> = {
  notFinite: 'not a finite number',
  notInteger: 'not an integer',
  tooSmall: 'too small',
  tooLarge: 'too large',
  notANumber: 'not a number',
};

/** A numeric knob's value outside its rule: "topK = 300: too large; allowed: an integer from 0 to 256". */
export function numberProblem(field: string, value: unknown, why: NumberWhy, r: NumRule): ConfigProblem {
  return { field, value, message: `${field} = ${shown(value)}: ${NUMBER_WHY[why]}; allowed: ${describeRange(r)}`, detail: { kind: 'number', why, rule: r } };
}

/** A choice knob's value not among its choices; `quoted`: the choices as JSON, else as a link writes them. */
export function choiceProblem(field: string, value: unknown, choices: readonly unknown[], quoted: boolean): ConfigProblem {
  const list = choices.map((x) => (quoted ? JSON.stringify(x) : String(x))).join(', ');
  return { field, value, message: `${field} = ${shown(value)}: allowed: ${list}`, detail: { kind: 'choice', choices, quoted } };
}

/** Every problem with `c`, each naming the field, the given value and what is allowed. */
export function validateConfig(c: Partial<PpoConfig> & Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const key of Object.keys(c)) {
    if (!isConfigKey(key)) problems.push(unknownSetting(key, c[key]));
  }
  for (const [field, rule] of Object.entries(NUMERIC_RULES) as [keyof PpoConfig, NumRule][]) {
    const p = checkNumber(field, c[field], rule);
    if (p) problems.push(p);
  }
  for (const [field, choices] of Object.entries(CHOICE_RULES) as [keyof PpoConfig, readonly unknown[]][]) {
    if (!choices.includes(c[field])) problems.push(choiceProblem(field, c[field], choices, true));
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
    const allowed = REWARD_SOURCES.filter((s) => s !== 'model');
    problems.push({
      field: 'rewardSource',
      value: cfg.rewardSource,
      message: `rewardSource = "model": task ${cfg.task} has no learned reward model; allowed with it: ${allowed.map((s) => `"${s}"`).join(', ')} (a learned reward model: task ${withModel.join(', ')})`,
      detail: { kind: 'noRewardModel', task: cfg.task, allowed, withModel },
    });
  }
  if (cfg.dModel % cfg.nHead !== 0) {
    problems.push({ field: 'nHead', value: cfg.nHead, message: `nHead = ${cfg.nHead}: must divide dModel (${cfg.dModel})`, detail: { kind: 'headsDivide', dModel: cfg.dModel } });
  }
  const batch = cfg.promptsPerBatch * cfg.samplesPerPrompt;
  if (batch % cfg.miniBatches !== 0) {
    problems.push({
      field: 'miniBatches',
      value: cfg.miniBatches,
      message: `miniBatches = ${cfg.miniBatches}: the batch of ${batch} sequences (promptsPerBatch × samplesPerPrompt) must divide into equal minibatches`,
      detail: { kind: 'miniBatches', batch },
    });
  }
  if (cfg.advantageEstimator !== 'gae' && GROUPED_ESTIMATORS.has(cfg.advantageEstimator) && cfg.samplesPerPrompt < 2) {
    problems.push({
      field: 'samplesPerPrompt',
      value: cfg.samplesPerPrompt,
      message: `samplesPerPrompt = ${cfg.samplesPerPrompt}: the ${cfg.advantageEstimator} estimator compares samples of the same prompt, so it needs at least 2`,
      detail: { kind: 'groupSamples', estimator: cfg.advantageEstimator },
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
      detail: { kind: 'groupGamma', estimator: cfg.advantageEstimator },
    });
  }
  if (cfg.dynamicSampling && cfg.samplesPerPrompt < 2) {
    problems.push({
      field: 'samplesPerPrompt',
      value: cfg.samplesPerPrompt,
      message: `samplesPerPrompt = ${cfg.samplesPerPrompt}: dynamic sampling drops groups whose scores are all equal, so it needs at least 2 samples per prompt`,
      detail: { kind: 'dynamicSamples' },
    });
  }
  if (cfg.overlongBuffer >= cfg.maxResponseLength && cfg.overlongBuffer > 0) {
    problems.push({
      field: 'overlongBuffer',
      value: cfg.overlongBuffer,
      message: `overlongBuffer = ${cfg.overlongBuffer}: must be smaller than maxResponseLength (${cfg.maxResponseLength}); allowed: 0 (off) to ${cfg.maxResponseLength - 1}`,
      detail: { kind: 'overlong', maxResponseLength: cfg.maxResponseLength },
    });
  }
  for (const field of ['icepopLower', 'tisLower'] as const) {
    const v = cfg[field];
    if (v === null) continue;
    if (cfg.tisCap === null || v > cfg.tisCap || (field === 'tisLower' && cfg.icepopLower !== null)) {
      const reason = cfg.tisCap === null ? 'needsIs' : v > cfg.tisCap ? 'aboveCap' : 'exclusive';
      const why = {
        needsIs: 'needs importance sampling on (set tisCap)',
        aboveCap: `must not exceed tisCap (${cfg.tisCap})`,
        exclusive: 'excludes icepopLower (IcePop zeroes the weights below its lower bound)',
      }[reason];
      problems.push({ field, value: v, message: `${field} = ${v}: ${why}`, detail: { kind: 'rolloutCorrection', reason, cap: cfg.tisCap } });
    }
  }
  if (!cfg.klInReward && !cfg.useKlLoss && cfg.klController === 'adaptive') {
    problems.push({
      field: 'klController',
      value: cfg.klController,
      message: 'klController = "adaptive": needs KL in the reward or the KL loss enabled',
      detail: { kind: 'adaptiveKl' },
    });
  }
  return problems;
}

export function withDefaults(partial: Partial<PpoConfig>): PpoConfig {
  return { ...DEFAULT_CONFIG, ...partial };
}

/**
 * The rollout correction the config asks for, or null when it asks for none: importance weights
 * when tisCap is set (at rolloutIs level; IcePop band with icepopLower, OpenRLHF's floor with
 * tisLower), rejection sampling when rolloutRs is not 'off' (k1: ratio bounds [1/t, t]).
 */
export function rolloutCorrectionOf(c: Pick<PpoConfig, 'tisCap' | 'rolloutIs' | 'icepopLower' | 'tisLower' | 'rolloutRs' | 'rolloutRsThreshold'>): RolloutCorrectionParams | null {
  if (c.tisCap === null && c.rolloutRs === 'off') return null;
  return {
    isLevel: c.tisCap === null ? null : c.rolloutIs,
    isUpper: c.tisCap ?? 2,
    isLower: c.tisCap === null ? null : c.icepopLower,
    tisLower: c.tisCap === null ? null : c.tisLower,
    rs: c.rolloutRs === 'off' ? [] : [rsCriterion(c.rolloutRs as RolloutRsOption, c.rolloutRsThreshold)],
  };
}
