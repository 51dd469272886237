// The knobs of the PPO/RLHF loop: one table row per knob (default, range or choices, the settings
// panel's section), and what is read off it: PpoConfig, DEFAULT_CONFIG and the validator's rules.
// Validation and its messages are configValidate.ts; each knob's verl / OpenRLHF key is
// src/export/engineKeys.ts.
import { GROUP_ESTIMATORS, type GroupEstimator } from '../reference/groupAdvantages.ts';
import { KL_ESTIMATORS, type KlEstimator } from '../reference/kl.ts';
import { LOSS_AGGS, NORM_SCALES } from '../reference/aggregate.ts';
import { LOSS_MODES } from '../reference/policyLoss.ts';
import { COV_DEFAULTS, SAPO_TAU_NEG_DEFAULT, SAPO_TAU_POS_DEFAULT } from '../reference/policyLoss.ts';
import { GROUP_KL_ORDERS, type GroupKlOrder } from '../reference/groupAdvantages.ts';
import { ROLLOUT_IS_LEVELS, ROLLOUT_RS_OPTIONS } from '../reference/rolloutCorrection.ts';
import { TASK_NAMES } from '../tasks/task.ts';
import { REWARD_FUNCTION_LIMITS } from './rewardFunction/problem.ts';
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

/** A free-text knob (source code): its size limit in UTF-8 bytes. */
export interface TextRule {
  maxBytes: number;
}

/** What the page shows for a knob: its label and a one-line help (settings:knobs.<key>), in English here. */
export interface KnobText {
  label: string;
  help: string;
}

/** A row of the table: default, range / choices / size limit, and the settings panel's section. */
type Row<T> = { group: Group; default: T } & ({ kind: 'number'; range: NumRule } | { kind: 'choice'; choices: readonly T[] } | { kind: 'text'; rule: TextRule });
export type Knob<T> = Row<T> & KnobText;

const num = (d: number, range: Omit<NumRule, 'nullable'>, group: Group): Row<number> => ({ group, default: d, kind: 'number', range });
const nullableNum = (d: number | null, range: Omit<NumRule, 'nullable'>, group: Group): Row<number | null> => ({
  group,
  default: d,
  kind: 'number',
  range: { ...range, nullable: true },
});
const choice = <T extends string>(choices: readonly T[], d: NoInfer<T>, group: Group): Row<T> => ({ group, default: d, kind: 'choice', choices });
const bool = (d: boolean, group: Group): Row<boolean> => ({ group, default: d, kind: 'choice', choices: [true, false] });
const text = (d: string, rule: TextRule, group: Group): Row<string> => ({ group, default: d, kind: 'text', rule });

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
 * Every knob of the PPO/RLHF loop, one row each: default, range or choices and its section; the
 * label and help come from settings:knobs.<key> (English here). PpoConfig, DEFAULT_CONFIG, the
 * validator's NUMERIC_RULES and CHOICE_RULES, and the settings panel's fields
 * (src/ui/configFields.ts) are all read off this table; rows are in the panel's order.
 */
const ROWS = {
  // Task & model
  task: choice(TASK_NAMES, 'arithmetic', 'taskModel'),
  rewardSource: choice(REWARD_SOURCES, 'rule', 'taskModel'),
  rewardFunction: text(DEFAULT_REWARD_FUNCTION, { maxBytes: REWARD_FUNCTION_LIMITS.maxSourceBytes }, 'taskModel'),
  nLayer: num(2, { min: 1, max: 6, integer: true }, 'taskModel'),
  nHead: num(2, { min: 1, max: 8, integer: true }, 'taskModel'),
  dModel: num(64, { min: 32, max: 256, integer: true }, 'taskModel'),
  seed: num(1, { min: 0, max: 2 ** 31 - 1, integer: true }, 'taskModel'),
  // Rollout
  promptsPerBatch: num(8, { min: 1, max: 64, integer: true }, 'rollout'),
  samplesPerPrompt: num(4, { min: 1, max: 16, integer: true }, 'rollout'),
  maxResponseLength: num(8, { min: 1, max: 64, integer: true }, 'rollout'),
  temperature: num(1, { min: 0.05, max: 5 }, 'rollout'),
  topK: num(0, { min: 0, max: 256, integer: true }, 'rollout'),
  topP: num(1, { min: 0, max: 1, minOpen: true }, 'rollout'),
  dynamicSampling: bool(false, 'rollout'),
  maxExtraRollouts: num(4, { min: 0, max: 16, integer: true }, 'rollout'),
  // Reward & KL
  klCoef: num(0.05, { min: 0, max: 10 }, 'rewardKl'),
  klEstimator: choice(KL_ESTIMATORS, 'k1', 'rewardKl'),
  klInReward: bool(true, 'rewardKl'),
  useKlLoss: bool(false, 'rewardKl'),
  klLossCoef: num(0.01, { min: 0, max: 10 }, 'rewardKl'),
  klLossEstimator: choice(KL_LOSS_ESTIMATORS, 'k3', 'rewardKl'),
  klController: choice(KL_CONTROLLERS, 'fixed', 'rewardKl'),
  // per token: the mean over sequences of each sequence's token-mean KL (verl's scale)
  klTarget: num(0.1, { min: 0, max: 10, minOpen: true }, 'rewardKl'),
  klHorizon: num(10000, { min: 1, max: 1e7 }, 'rewardKl'),
  scoreClip: num(10, { min: 0, max: 1e4, minOpen: true }, 'rewardKl'),
  noEosPenalty: num(0, { min: -100, max: 0 }, 'rewardKl'),
  overlongBuffer: num(0, { min: 0, max: 64, integer: true }, 'rewardKl'),
  overlongPenalty: num(1, { min: 0, max: 10 }, 'rewardKl'),
  // Advantages
  advantageEstimator: choice(ADVANTAGE_ESTIMATORS, 'gae', 'advantages'),
  groupKlOrder: choice(GROUP_KL_ORDERS, 'openrlhf', 'advantages'),
  gamma: num(1, { min: 0, max: 1 }, 'advantages'),
  lam: num(0.95, { min: 0, max: 1 }, 'advantages'),
  // PPO update
  ppoEpochs: num(2, { min: 1, max: 16, integer: true }, 'ppoUpdate'),
  miniBatches: num(2, { min: 1, max: 64, integer: true }, 'ppoUpdate'),
  clipLow: num(0.2, { min: 0, max: 1, minOpen: true, maxOpen: true }, 'ppoUpdate'),
  clipHigh: num(0.2, { min: 0, max: 10, minOpen: true }, 'ppoUpdate'),
  dualClip: nullableNum(3, { min: 1, max: 100, minOpen: true }, 'ppoUpdate'),
  valueClip: nullableNum(0.2, { min: 0, max: 100, minOpen: true }, 'ppoUpdate'),
  lossMode: choice(LOSS_MODES, 'vanilla', 'ppoUpdate'),
  sapoTauPos: num(SAPO_TAU_POS_DEFAULT, { min: 0, max: 100, minOpen: true }, 'ppoUpdate'),
  sapoTauNeg: num(SAPO_TAU_NEG_DEFAULT, { min: 0, max: 100, minOpen: true }, 'ppoUpdate'),
  // Clip-Cov / KL-Cov (verl policy_loss.*; OpenRLHF has neither). Fractions of the minibatch's
  // valid tokens; verl's 0.0002 picks one token at the playground's sizes.
  clipCovRatio: num(COV_DEFAULTS.clipCovRatio, { min: 0, max: 1, minOpen: true }, 'ppoUpdate'),
  clipCovLb: num(COV_DEFAULTS.clipCovLb, { min: -100, max: 100 }, 'ppoUpdate'),
  clipCovUb: num(COV_DEFAULTS.clipCovUb, { min: -100, max: 100 }, 'ppoUpdate'),
  klCovRatio: num(COV_DEFAULTS.klCovRatio, { min: 0, max: 1, minOpen: true }, 'ppoUpdate'),
  ppoKlCoef: num(COV_DEFAULTS.ppoKlCoef, { min: 0, max: 100 }, 'ppoUpdate'),
  lossAgg: choice(LOSS_AGGS, 'token-mean', 'ppoUpdate'),
  normScale: choice(NORM_SCALES, 'per_seq', 'ppoUpdate'),
  tisCap: nullableNum(null, { min: 1, max: 100 }, 'ppoUpdate'),
  // Rollout correction beyond token TIS (verl v0.9.0 algorithm.rollout_correction.*, OpenRLHF
  // --algo.advantage.is_correction_*); src/reference/rolloutCorrection.ts has the math.
  rolloutIs: choice(ROLLOUT_IS_LEVELS, 'token', 'ppoUpdate'),
  icepopLower: nullableNum(null, { min: 0, max: 1, minOpen: true }, 'ppoUpdate'),
  tisLower: nullableNum(null, { min: 0, max: 1 }, 'ppoUpdate'),
  rolloutRs: choice(ROLLOUT_RS_CHOICES, 'off', 'ppoUpdate'),
  rolloutRsThreshold: num(2, { min: 0, max: 1e4, minOpen: true }, 'ppoUpdate'),
  entropyCoef: num(0, { min: 0, max: 1 }, 'ppoUpdate'),
  targetKl: nullableNum(null, { min: 0, max: 10, minOpen: true }, 'ppoUpdate'),
  // Optimiser
  actorLr: num(1e-4, { min: 0, max: 1, minOpen: true }, 'optimiser'),
  criticLr: num(5e-4, { min: 0, max: 1, minOpen: true }, 'optimiser'),
  warmupSteps: num(0, { min: 0, max: 100000, integer: true }, 'optimiser'),
  weightDecay: num(0, { min: 0, max: 1 }, 'optimiser'),
  maxGradNorm: num(1, { min: 0, max: 1e4 }, 'optimiser'),
  adamBeta1: num(0.9, { min: 0, max: 1, maxOpen: true }, 'optimiser'),
  adamBeta2: num(0.999, { min: 0, max: 1, maxOpen: true }, 'optimiser'),
  // Evaluation
  evalEvery: num(10, { min: 0, max: 1000, integer: true }, 'evaluation'),
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

/** Own settings only: `toString`, `constructor` and `__proto__` are not settings. */
export function isConfigKey(key: string): key is keyof PpoConfig {
  return Object.hasOwn(DEFAULT_CONFIG, key);
}

export function withDefaults(partial: Partial<PpoConfig>): PpoConfig {
  return { ...DEFAULT_CONFIG, ...partial };
}
