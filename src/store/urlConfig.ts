// The whole config lives in the query string, so a link reproduces a run (seed included).
// `?hide=klCoef,clipLow` hides chosen controls for classroom use. Bad values are reported and
// left out; the rest of the link still applies. `?budget=N` sets every preset's iteration budget to
// N (a short classroom demo, or a fast end-to-end test of "Run both"). `?present=1` opens the page in
// presenter mode (large type, the four charts a lecture needs). A written reward function travels
// in the link only while Reward source = function; one that arrives is held for the visitor to
// accept (rewardFunctionLink.ts) and is not in the parsed config. `?lang=en|zh-CN` is the page's
// language (src/i18n/choice.ts), written back so a shared link keeps it. `?run=` and `?embed=`
// choose what the page shows (viewLink.ts).
import { MAX_BUDGET } from './presetRun.ts';
import {
  CHOICE_RULES,
  checkNumber,
  checkText,
  choiceProblem,
  DEFAULT_CONFIG,
  isConfigKey,
  NUMERIC_RULES,
  numberProblem,
  shown,
  TEXT_RULES,
  unknownSetting,
  checkConfig,
  DEFAULT_CHECKED,
  type CheckedConfig,
  type PpoConfig,
  type ProblemDetail,
} from '../rl/config.ts';
import { LANG_PARAM, LOCALES, localeOf } from '../i18n/locales.ts';
import { needsAcceptance } from './rewardFunctionLink.ts';
import { EMBED_CHOICES, EMBED_PARAM, type EmbedView, embedViewOf, RUN_PARAM, RUN_PATH_MAX, runPathOf } from './viewLink.ts';

export const HIDE_PARAM = 'hide';
export const BUDGET_PARAM = 'budget';
export const PRESENT_PARAM = 'present';

export function configToQuery(config: PpoConfig, hidden: Iterable<string> = [], budget: number | null = null, present = false, lang: string | null = null): string {
  const q = new URLSearchParams();
  for (const key of Object.keys(DEFAULT_CONFIG) as (keyof PpoConfig)[]) {
    // A function in force only with Reward source = function: other links stay short.
    if (Object.hasOwn(TEXT_RULES, key) && config.rewardSource !== 'function') continue;
    const v = config[key];
    q.set(key, v === null ? '' : String(v));
  }
  const h = [...hidden];
  if (h.length > 0) q.set(HIDE_PARAM, h.join(','));
  if (budget !== null) q.set(BUDGET_PARAM, String(budget));
  if (present) q.set(PRESENT_PARAM, '1');
  if (lang !== null) q.set(LANG_PARAM, lang);
  return q.toString();
}

/** What is wrong with a link's own parameters (?present=, ?lang=, ?budget=, ?hide=), as settings:problems.<kind> words it. */
export type LinkDetail =
  | { kind: 'present' }
  | { kind: 'lang'; choices: readonly string[] }
  | { kind: 'budget'; max: number }
  | { kind: 'hideUnknown' }
  | { kind: 'notInUrl' }
  | { kind: 'runPath'; max: number }
  | { kind: 'embed'; choices: string };

/** One ignored parameter of a link: `field` is the parameter, `message` the problem in English. */
export interface LinkProblem {
  field: string;
  value: unknown;
  message: string;
  detail: ProblemDetail | LinkDetail;
}

export interface ParsedUrl {
  /** Config from the URL where valid, `base` elsewhere; checked here, where the link entered. */
  config: CheckedConfig;
  /** Keys the URL set and that were applied. */
  applied: (keyof PpoConfig)[];
  hidden: (keyof PpoConfig)[];
  /** `?budget=`: iterations every preset trains for instead of its own budget; null when absent or invalid. */
  budget: number | null;
  /** `?present=1` / `?present=0`: presenter mode on or off; null when absent or invalid. */
  present: boolean | null;
  /** `?run=`: a run file served with the page to open as a recorded run (viewLink.ts); null when absent or invalid. */
  run: string | null;
  /** `?embed=`: the one view the page shows, for a frame (viewLink.ts); null when absent or invalid. */
  embed: EmbedView | null;
  /** One English line per ignored parameter. */
  problems: string[];
  /** The same problems with their structure, for the page to word in the visitor's language. */
  linkProblems: LinkProblem[];
  /** A reward function from the link that runs only once the visitor accepts it; not in `config`. */
  pendingRewardFunction: string | null;
}

function parseValue(key: keyof PpoConfig, raw: string): { ok: true; value: unknown } | { ok: false; why: LinkProblem } {
  const rule = Object.hasOwn(NUMERIC_RULES, key) ? NUMERIC_RULES[key] : undefined;
  if (rule) {
    const value = raw.trim() === '' || raw === 'null' ? (rule.nullable ? null : NaN) : Number(raw);
    const p = checkNumber(key, value, rule);
    // NaN would print as `null`: name what the link actually said.
    if (p && Number.isNaN(value)) return { ok: false, why: numberProblem(key, raw, 'notANumber', rule) };
    return p ? { ok: false, why: p } : { ok: true, value };
  }
  const choices = Object.hasOwn(CHOICE_RULES, key) ? CHOICE_RULES[key] : undefined;
  if (choices) {
    const value = choices.find((c) => String(c) === raw);
    return value === undefined ? { ok: false, why: choiceProblem(key, raw, choices, false) } : { ok: true, value };
  }
  const text = Object.hasOwn(TEXT_RULES, key) ? TEXT_RULES[key] : undefined;
  if (text) {
    const p = checkText(key, raw, text);
    return p ? { ok: false, why: p } : { ok: true, value: raw };
  }
  return { ok: false, why: { field: key, value: raw, message: `${key}: not settable from the URL`, detail: { kind: 'notInUrl' } } };
}

export function parseQuery(search: string, base: CheckedConfig = DEFAULT_CHECKED): ParsedUrl {
  const q = new URLSearchParams(search);
  const problems: LinkProblem[] = [];
  const partial: Partial<Record<keyof PpoConfig, unknown>> = {};
  const hidden: (keyof PpoConfig)[] = [];
  let budget: number | null = null;
  let present: boolean | null = null;
  let run: string | null = null;
  let embed: EmbedView | null = null;
  for (const [key, raw] of q) {
    if (key === RUN_PARAM) {
      run = runPathOf(raw);
      if (run === null)
        problems.push({
          field: RUN_PARAM,
          value: raw,
          message: `${RUN_PARAM} = ${shown(raw)}: allowed: the path of a run file served with the page, relative to it (letters, digits, . _ - and /, ending in .json, at most ${RUN_PATH_MAX} characters)`,
          detail: { kind: 'runPath', max: RUN_PATH_MAX },
        });
      continue;
    }
    if (key === EMBED_PARAM) {
      embed = embedViewOf(raw);
      if (embed === null)
        problems.push({
          field: EMBED_PARAM,
          value: raw,
          message: `${EMBED_PARAM} = ${shown(raw)}: allowed: ${EMBED_CHOICES} (e.g. chart:reward_mean)`,
          detail: { kind: 'embed', choices: EMBED_CHOICES },
        });
      continue;
    }
    if (key === PRESENT_PARAM) {
      const v = raw.trim().toLowerCase();
      if (v === '1' || v === 'true' || v === '') present = true;
      else if (v === '0' || v === 'false') present = false;
      else problems.push({ field: PRESENT_PARAM, value: raw, message: `${PRESENT_PARAM} = ${shown(raw)}: allowed: 1 (presenter mode) or 0`, detail: { kind: 'present' } });
      continue;
    }
    // The language is the page's (src/i18n/choice.ts reads it); here only a value it cannot read is named.
    if (key === LANG_PARAM) {
      if (!localeOf(raw))
        problems.push({ field: LANG_PARAM, value: raw, message: `${LANG_PARAM} = ${shown(raw)}: allowed: ${LOCALES.join(', ')}`, detail: { kind: 'lang', choices: LOCALES } });
      continue;
    }
    if (key === BUDGET_PARAM) {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (Number.isInteger(n) && n >= 1 && n <= MAX_BUDGET) budget = n;
      else
        problems.push({
          field: BUDGET_PARAM,
          value: raw,
          message: `${BUDGET_PARAM} = ${shown(raw)}: allowed: a whole number of iterations from 1 to ${MAX_BUDGET}`,
          detail: { kind: 'budget', max: MAX_BUDGET },
        });
      continue;
    }
    if (key === HIDE_PARAM) {
      for (const h of raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        if (isConfigKey(h)) hidden.push(h);
        else problems.push({ field: HIDE_PARAM, value: h, message: `${HIDE_PARAM}: unknown setting ${shown(h)}`, detail: { kind: 'hideUnknown' } });
      }
      continue;
    }
    if (!isConfigKey(key)) {
      problems.push(unknownSetting(key, raw));
      continue;
    }
    const r = parseValue(key as keyof PpoConfig, raw);
    if (r.ok) partial[key as keyof PpoConfig] = r.value;
    else problems.push(r.why);
  }
  let pendingRewardFunction: string | null = null;
  if (typeof partial.rewardFunction === 'string' && needsAcceptance(partial.rewardFunction, base.rewardFunction)) {
    pendingRewardFunction = partial.rewardFunction;
    delete partial.rewardFunction;
  }
  // Cross-field rules (e.g. heads must divide width): drop the offending URL values one round at a time.
  let config: CheckedConfig = base;
  for (let round = 0; round < 8; round++) {
    const checked = checkConfig({ ...base, ...partial });
    if (checked.config) {
      config = checked.config;
      break;
    }
    let dropped = false;
    for (const p of checked.problems) {
      problems.push(p);
      if (p.field in partial) {
        delete partial[p.field as keyof PpoConfig];
        dropped = true;
      }
    }
    if (!dropped) break;
  }
  // A repeated key with the same bad value is one problem, not two.
  const linkProblems = [...new Map(problems.map((p) => [p.message, p])).values()];
  return {
    config,
    applied: Object.keys(partial) as (keyof PpoConfig)[],
    hidden: [...new Set(hidden)],
    budget,
    present,
    run,
    embed,
    problems: linkProblems.map((p) => p.message),
    linkProblems,
    pendingRewardFunction,
  };
}
