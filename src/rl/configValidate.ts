// Validation of a config where it enters (a link, a field, a file, the CLI's flags): every problem
// at once, each naming the field, the given value and what is allowed, in English (`message`) and
// as data the page words in the visitor's language (`detail`). A config that passed is a
// CheckedConfig: the type says so, and nothing after the entry checks it again.
import { GROUPED_ESTIMATORS } from '../reference/groupAdvantages.ts';
import { TASKS_BY_NAME } from '../tasks/index.ts';
import { TASK_NAMES } from '../tasks/task.ts';
import { sourceBytes } from './rewardFunction/problem.ts';
import { CHOICE_RULES, isConfigKey, NUMERIC_RULES, REWARD_SOURCES, TEXT_RULES, type NumRule, type PpoConfig, type TextRule } from './configKnobs.ts';

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

declare const checkedBrand: unique symbol;
/** A config that passed validateConfig where it entered; typed so, it is never checked again. */
export type CheckedConfig = PpoConfig & { readonly [checkedBrand]: true };

/** `c` checked: the config, typed CheckedConfig, or every problem. */
export function checkConfig(c: unknown): { config: CheckedConfig; problems: [] } | { config: null; problems: ConfigProblem[] } {
  const problems = validateConfig(c as Partial<PpoConfig> & Record<string, unknown>);
  return problems.length === 0 ? { config: c as CheckedConfig, problems: [] } : { config: null, problems };
}

/** `c`, which must pass (a constant, a test's fixture): typed CheckedConfig, or an error naming every problem. */
export function checked(c: PpoConfig): CheckedConfig {
  const r = checkConfig(c);
  if (!r.config) throw new Error(`invalid PPO config:\n  ${r.problems.map((p) => p.message).join('\n  ')}`);
  return r.config;
}
