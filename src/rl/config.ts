// One typed config with every knob of the PPO/RLHF loop, its defaults, and a validator that
// reports every problem at once (field, given value, allowed range or choices).
import {
  GROUP_ESTIMATORS,
  KL_ESTIMATORS,
  LOSS_AGGS,
  LOSS_MODES,
  NORM_SCALES,
  type GroupEstimator,
  type KlEstimator,
  type LossAgg,
  type LossMode,
  type NormScale,
} from '../backend/ppoOps.ts';
import { TASK_NAMES, type TaskName } from '../tasks/task.ts';


export type AdvantageEstimator = 'gae' | GroupEstimator;
export const ADVANTAGE_ESTIMATORS: readonly AdvantageEstimator[] = ['gae', ...GROUP_ESTIMATORS];

export type KlController = 'fixed' | 'adaptive';

/** The KL loss needs a gradient; AlpacaFarm's one-sided k1_clamped is a reward penalty only. */
export const KL_LOSS_ESTIMATORS: readonly KlEstimator[] = KL_ESTIMATORS.filter((k) => k !== 'k1_clamped');
export type RewardSource = 'rule' | 'model';

export interface PpoConfig {
  // Task & model
  task: TaskName;
  rewardSource: RewardSource;
  nLayer: number;
  nHead: number;
  dModel: number;
  seed: number;
  // Rollout
  promptsPerBatch: number;
  samplesPerPrompt: number;
  maxResponseLength: number;
  temperature: number;
  topK: number;
  topP: number;
  // Reward & KL
  klCoef: number;
  klEstimator: KlEstimator;
  klInReward: boolean;
  useKlLoss: boolean;
  klLossCoef: number;
  klLossEstimator: KlEstimator;
  klController: KlController;
  klTarget: number;
  klHorizon: number;
  scoreClip: number;
  noEosPenalty: number;
  // Advantages
  advantageEstimator: AdvantageEstimator;
  gamma: number;
  lam: number;
  // PPO update
  ppoEpochs: number;
  miniBatches: number;
  clipLow: number;
  clipHigh: number;
  dualClip: number | null;
  valueClip: number | null;
  lossAgg: LossAgg;
  /** Scale of seq-mean-token-sum-norm: 'per_seq' (Dr. GRPO paper, 1/B) or 'verl' (verl agg_loss, B× larger). */
  normScale: NormScale;
  /** Policy-loss family: PPO clip, GSPO (sequence ratio) or CISPO (stop-gradient clipped IS weight). */
  lossMode: LossMode;
  entropyCoef: number;
  targetKl: number | null;
  /** Token-level truncated importance sampling π_old/π_rollout capped at this (null = off). */
  tisCap: number | null;
  // DAPO
  /** Drop groups whose scores are all equal and sample more prompts until the batch is full. */
  dynamicSampling: boolean;
  /** Extra rollout rounds dynamic sampling may take per iteration before it fills up with dropped groups. */
  maxExtraRollouts: number;
  /** Soft overlong penalty: the last this many tokens before maxResponseLength are penalised (0 = off). */
  overlongBuffer: number;
  /** Penalty at the length limit; it grows linearly over the buffer from 0. */
  overlongPenalty: number;
  // Optimiser
  actorLr: number;
  criticLr: number;
  warmupSteps: number;
  weightDecay: number;
  maxGradNorm: number;
  adamBeta1: number;
  adamBeta2: number;
  // Evaluation
  /** Evaluate held-out prompts every this many iterations (0 = never). */
  evalEvery: number;
}

export const DEFAULT_CONFIG: PpoConfig = {
  task: 'arithmetic',
  rewardSource: 'rule',
  nLayer: 2,
  nHead: 2,
  dModel: 64,
  seed: 1,
  promptsPerBatch: 8,
  samplesPerPrompt: 4,
  maxResponseLength: 8,
  temperature: 1,
  topK: 0,
  topP: 1,
  klCoef: 0.05,
  klEstimator: 'k1',
  klInReward: true,
  useKlLoss: false,
  klLossCoef: 0.01,
  klLossEstimator: 'k3',
  klController: 'fixed',
  klTarget: 0.1,
  klHorizon: 10000,
  scoreClip: 10,
  noEosPenalty: 0,
  advantageEstimator: 'gae',
  gamma: 1,
  lam: 0.95,
  ppoEpochs: 2,
  miniBatches: 2,
  clipLow: 0.2,
  clipHigh: 0.2,
  dualClip: 3,
  valueClip: 0.2,
  lossAgg: 'token-mean',
  normScale: 'per_seq',
  lossMode: 'vanilla',
  entropyCoef: 0,
  targetKl: null,
  tisCap: null,
  dynamicSampling: false,
  maxExtraRollouts: 4,
  overlongBuffer: 0,
  overlongPenalty: 1,
  actorLr: 1e-4,
  criticLr: 5e-4,
  warmupSteps: 0,
  weightDecay: 0,
  maxGradNorm: 1,
  adamBeta1: 0.9,
  adamBeta2: 0.999,
  evalEvery: 10,
};

export interface ConfigProblem {
  field: keyof PpoConfig | string;
  value: unknown;
  message: string;
}

interface NumRule {
  min: number;
  max: number;
  /** exclusive bounds (min < x / x < max) */
  minOpen?: boolean;
  maxOpen?: boolean;
  integer?: boolean;
  nullable?: boolean;
}

/** Numeric fields: ranges the UI shows and the validator enforces. */
export const NUMERIC_RULES: Partial<Record<keyof PpoConfig, NumRule>> = {
  nLayer: { min: 1, max: 6, integer: true },
  nHead: { min: 1, max: 8, integer: true },
  dModel: { min: 32, max: 256, integer: true },
  seed: { min: 0, max: 2 ** 31 - 1, integer: true },
  promptsPerBatch: { min: 1, max: 64, integer: true },
  samplesPerPrompt: { min: 1, max: 16, integer: true },
  maxResponseLength: { min: 1, max: 64, integer: true },
  temperature: { min: 0.05, max: 5 },
  topK: { min: 0, max: 256, integer: true },
  topP: { min: 0, max: 1, minOpen: true },
  klCoef: { min: 0, max: 10 },
  klLossCoef: { min: 0, max: 10 },
  // per token: the mean over sequences of each sequence's token-mean KL (verl's scale)
  klTarget: { min: 0, max: 10, minOpen: true },
  klHorizon: { min: 1, max: 1e7 },
  scoreClip: { min: 0, max: 1e4, minOpen: true },
  noEosPenalty: { min: -100, max: 0 },
  gamma: { min: 0, max: 1 },
  lam: { min: 0, max: 1 },
  ppoEpochs: { min: 1, max: 16, integer: true },
  miniBatches: { min: 1, max: 64, integer: true },
  clipLow: { min: 0, max: 1, minOpen: true, maxOpen: true },
  clipHigh: { min: 0, max: 10, minOpen: true },
  dualClip: { min: 1, max: 100, minOpen: true, nullable: true },
  valueClip: { min: 0, max: 100, minOpen: true, nullable: true },
  entropyCoef: { min: 0, max: 1 },
  targetKl: { min: 0, max: 10, minOpen: true, nullable: true },
  tisCap: { min: 1, max: 100, nullable: true },
  maxExtraRollouts: { min: 0, max: 16, integer: true },
  overlongBuffer: { min: 0, max: 64, integer: true },
  overlongPenalty: { min: 0, max: 10 },
  actorLr: { min: 0, max: 1, minOpen: true },
  criticLr: { min: 0, max: 1, minOpen: true },
  warmupSteps: { min: 0, max: 100000, integer: true },
  weightDecay: { min: 0, max: 1 },
  maxGradNorm: { min: 0, max: 1e4 },
  adamBeta1: { min: 0, max: 1, maxOpen: true },
  adamBeta2: { min: 0, max: 1, maxOpen: true },
  evalEvery: { min: 0, max: 1000, integer: true },
};

export const CHOICE_RULES: Partial<Record<keyof PpoConfig, readonly unknown[]>> = {
  task: TASK_NAMES,
  rewardSource: ['rule', 'model'],
  klEstimator: KL_ESTIMATORS,
  klLossEstimator: KL_LOSS_ESTIMATORS,
  klController: ['fixed', 'adaptive'],
  advantageEstimator: ADVANTAGE_ESTIMATORS,
  lossAgg: LOSS_AGGS,
  normScale: NORM_SCALES,
  lossMode: LOSS_MODES,
  klInReward: [true, false],
  useKlLoss: [true, false],
  dynamicSampling: [true, false],
};

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

const GROUP_NEEDS_SAMPLES: readonly AdvantageEstimator[] = ['reinforce_baseline', 'group_norm', 'rloo', 'dr_grpo'];

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
  if (problems.length > 0) return problems;
  const cfg = c as PpoConfig;
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
  if (GROUP_NEEDS_SAMPLES.includes(cfg.advantageEstimator) && cfg.samplesPerPrompt < 2) {
    problems.push({
      field: 'samplesPerPrompt',
      value: cfg.samplesPerPrompt,
      message: `samplesPerPrompt = ${cfg.samplesPerPrompt}: the ${cfg.advantageEstimator} estimator compares samples of the same prompt, so it needs at least 2`,
    });
  }
  if (cfg.advantageEstimator !== 'gae' && cfg.gamma !== 1) {
    // OpenRLHF forces γ = 1 for its outcome-reward estimators; no reference defines them otherwise.
    problems.push({
      field: 'gamma',
      value: cfg.gamma,
      message: `gamma = ${cfg.gamma}: the ${cfg.advantageEstimator} estimator is defined only for γ = 1 (allowed: 1; use GAE for discounting)`,
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
