// Config fuzzing: validateConfig, the CLI's defaults ← file ← flags merge (buildConfig), the
// page's URL parser (parseQuery) and a live trainer's setConfig. Every input must give either a
// config that passes validation or problems that each name the field; nothing may throw, and the
// base config / running trainer must come out unchanged when the input is refused.
import { CHOICE_RULES, checked, DEFAULT_CONFIG, NUMERIC_RULES, shownKey, validateConfig, type PpoConfig } from '../rl/config.ts';
import { buildConfig } from '../rl/configMerge.ts';
import { configToQuery, HIDE_PARAM, parseQuery } from '../store/urlConfig.ts';
import type { Rng } from '../util/rng.ts';
import { chance, HOSTILE_STRINGS, pick, randomNumber, randomString, randomValue, sketch } from './gen.ts';
import { MAX_MESSAGE_CHARS, runCase, record, emptyReport, type TargetReport } from './outcome.ts';

const FIELDS = Object.keys(DEFAULT_CONFIG) as (keyof PpoConfig)[];
const ODD_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'Seed', 'seed ', '', 'a'.repeat(10_240), 'hide', 'klcoef'];

const isConfigKey = (k: string): boolean => Object.hasOwn(DEFAULT_CONFIG, k);

/** A value for `field`: valid, at an edge, or of the wrong type. */
function valueFor(rng: Rng, field: keyof PpoConfig, jsonOnly: boolean): unknown {
  const rule = NUMERIC_RULES[field];
  const choices = CHOICE_RULES[field];
  switch (rng.int(0, 6)) {
    case 0:
      if (rule) return rule.integer ? rng.int(rule.min, Math.min(rule.max, rule.min + 100) + 1) : rng.uniform(rule.min, Math.min(rule.max, rule.min + 100));
      return choices ? pick(rng, choices) : DEFAULT_CONFIG[field];
    case 1:
      if (rule) return pick(rng, [rule.min, rule.max, rule.min - 1, rule.max + 1, rule.min + 0.5, -rule.max]);
      return choices ? String(pick(rng, choices)).toUpperCase() : null;
    case 2: {
      const x = randomNumber(rng);
      return jsonOnly && !Number.isFinite(x) ? null : x;
    }
    case 3:
      return pick(rng, HOSTILE_STRINGS);
    default:
      return randomValue(rng, 0, jsonOnly);
  }
}

/** A config-like object: defaults, a subset, or nothing, then hostile edits. */
export function randomConfigObject(rng: Rng, jsonOnly: boolean): Record<string, unknown> {
  const start = rng.int(0, 3);
  const o: Record<string, unknown> = start === 0 ? { ...DEFAULT_CONFIG } : {};
  if (start === 1) for (const f of FIELDS) if (chance(rng, 0.5)) o[f] = DEFAULT_CONFIG[f];
  // A third of the objects stay close to valid: one or two in-range edits.
  const gentle = start === 0 && chance(rng, 0.35);
  for (let i = gentle ? rng.int(0, 3) : rng.int(1, 6); i > 0; i--) {
    if (gentle) {
      const f = pick(rng, FIELDS);
      const rule = NUMERIC_RULES[f];
      o[f] = rule ? (rule.integer ? rng.int(rule.min, Math.min(rule.max, rule.min + 4) + 1) : rng.uniform(rule.min, rule.max)) : pick(rng, CHOICE_RULES[f] ?? [DEFAULT_CONFIG[f]]);
      continue;
    }
    if (chance(rng, 0.8)) o[pick(rng, FIELDS)] = valueFor(rng, pick(rng, FIELDS), jsonOnly);
    else
      Object.defineProperty(o, chance(rng, 0.5) ? pick(rng, ODD_KEYS) : randomString(rng, 8), {
        value: randomValue(rng, 0, jsonOnly),
        enumerable: true,
        configurable: true,
        writable: true,
      });
  }
  return o;
}

/** encodeURIComponent, or the raw text where it has a lone surrogate (which a browser would send as-is). */
function safeEncode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A query string with config keys, unknown keys, repeats, `hide`, malformed escapes and 10 kB values. */
export function randomQuery(rng: Rng): string {
  const parts: string[] = [];
  for (let i = rng.int(0, 8); i > 0; i--) {
    const key = chance(rng, 0.7) ? pick(rng, FIELDS) : chance(rng, 0.5) ? pick(rng, ODD_KEYS) : randomString(rng, 8);
    let value: string;
    if (key === HIDE_PARAM || chance(rng, 0.05)) value = Array.from({ length: rng.int(0, 4) }, () => (chance(rng, 0.6) ? pick(rng, FIELDS) : pick(rng, ODD_KEYS))).join(',');
    else value = String(chance(rng, 0.5) ? valueFor(rng, key as keyof PpoConfig, false) : pick(rng, HOSTILE_STRINGS));
    const enc = chance(rng, 0.8) ? safeEncode : (s: string) => s;
    let part = `${enc(key)}=${enc(value)}`;
    if (chance(rng, 0.05)) part = pick(rng, ['%', '%E0%A4%A', '%ZZ', '==', '&', '=', key]);
    parts.push(part);
    if (chance(rng, 0.15)) parts.push(part); // repeated key
  }
  return (chance(rng, 0.5) ? '?' : '') + parts.join('&');
}

/** null when `c` is a complete, valid config with no foreign keys; else what is wrong. */
function notAValidConfig(c: unknown): string | null {
  if (typeof c !== 'object' || c === null) return `config is ${sketch(c)}`;
  const foreign = Object.keys(c).filter((k) => !isConfigKey(k));
  if (foreign.length > 0) return `config carries foreign keys ${sketch(foreign)}`;
  const missing = FIELDS.filter((f) => !Object.hasOwn(c, f));
  if (missing.length > 0) return `config lacks ${missing.join(', ')}`;
  const p = validateConfig(c as PpoConfig & Record<string, unknown>);
  return p.length > 0 ? `config fails validation: ${p[0].message.slice(0, 200)}` : null;
}

/** A well-formed refusal, counted as a named error (its message was checked before). */
class Refused extends Error {}

/** A message names a key as typed or JSON-escaped (control characters made visible), maybe cut short. */
function namesKey(message: string, key: string): boolean {
  return message.includes(key.slice(0, 20)) || message.includes(shownKey(key).slice(0, 20));
}

function badMessage(m: unknown): string | null {
  if (typeof m !== 'string' || m.trim() === '') return `problem is ${sketch(m)}`;
  if (m.length > MAX_MESSAGE_CHARS) return `problem of ${m.length} chars: ${m.slice(0, 100)}…`;
  return null;
}

function checkValidate(obj: Record<string, unknown>): string | null {
  const before = sketch(obj, 1e9);
  const problems = validateConfig(obj as Partial<PpoConfig> & Record<string, unknown>);
  if (!Array.isArray(problems)) return 'validateConfig did not return an array';
  if (sketch(obj, 1e9) !== before) return 'validateConfig changed its input';
  for (const p of problems) {
    const bad = badMessage(p.message);
    if (bad) return bad;
    const name = String(p.field).slice(0, 20);
    if (!namesKey(p.message, String(p.field))) return `message does not name field ${sketch(name)}: ${p.message.slice(0, 120)}`;
  }
  if (problems.length === 0) return notAValidConfig(obj);
  throw new Refused(problems[0].message);
}

function checkBuild(fileJson: unknown, flags: { task?: string; seed?: string }): string | null {
  const { config, problems } = buildConfig(fileJson, flags);
  for (const p of problems) {
    const bad = badMessage(p);
    if (bad) return bad;
  }
  if (problems.length === 0) return notAValidConfig(config);
  throw new Refused(problems[0]);
}

function checkQuery(search: string): string | null {
  const base = checked({ ...DEFAULT_CONFIG });
  const r = parseQuery(search, base);
  if (sketch(base) !== sketch(DEFAULT_CONFIG)) return 'parseQuery changed the base config';
  const invalid = notAValidConfig(r.config);
  if (invalid) return invalid;
  for (const p of r.problems) {
    const bad = badMessage(p);
    if (bad) return bad;
  }
  for (const h of r.hidden) if (!isConfigKey(h)) return `hidden holds foreign key ${sketch(h)}`;
  for (const a of r.applied) if (!isConfigKey(a)) return `applied holds foreign key ${sketch(a)}`;
  // A reward function held for the visitor's acceptance is never in the config the worker sees.
  if (r.pendingRewardFunction !== null && r.config.rewardFunction === r.pendingRewardFunction) return 'a reward function from the link was applied before acceptance';
  // Every ignored config key is reported by name; a reward function held for acceptance is not ignored.
  for (const [key] of new URLSearchParams(search)) {
    if (key === HIDE_PARAM || r.applied.includes(key as keyof PpoConfig)) continue;
    if (key === 'rewardFunction' && r.pendingRewardFunction !== null) continue;
    const name = key.slice(0, 20);
    if (!r.problems.some((p) => namesKey(p, key))) return `parameter ${sketch(name)} was dropped without a message`;
  }
  // What the page writes back reads back to the same config, silently.
  const again = parseQuery(configToQuery(r.config, r.hidden));
  if (again.problems.length > 0 || sketch(again.config) !== sketch(r.config)) return `round trip changed the config: ${again.problems[0] ?? ''}`;
  if (r.problems.length > 0) throw new Refused(r.problems[0]);
  return null;
}

/** The part of a live trainer that config changes touch. */
export interface ConfigurableTrainer {
  readonly config: PpoConfig;
  setConfig(c: PpoConfig): void;
}

function checkSetConfig(trainer: ConfigurableTrainer, candidate: Record<string, unknown>): string | null {
  const before = sketch(trainer.config, 1e9);
  try {
    trainer.setConfig(candidate as unknown as PpoConfig);
  } catch (e) {
    if (sketch(trainer.config, 1e9) !== before) return 'a refused setConfig changed the running config';
    throw e;
  }
  return notAValidConfig(trainer.config);
}

export async function fuzzConfigs(rng: Rng, count: number, limitMs: number, trainer?: ConfigurableTrainer): Promise<TargetReport[]> {
  const reps = {
    validate: emptyReport('configs: validateConfig'),
    build: emptyReport('configs: CLI --config (buildConfig)'),
    url: emptyReport('configs: page URL (parseQuery)'),
    live: emptyReport('configs: running trainer setConfig'),
  };
  for (let i = 0; i < count; i++) {
    const obj = randomConfigObject(rng, false);
    record(reps.validate, await runCase(() => checkValidate(obj), limitMs), `case ${i} ${sketch(obj)}`);
    // A config file is JSON: round-trip it so NaN/undefined become what JSON.parse would give.
    const fileJson: unknown = chance(rng, 0.9) ? JSON.parse(JSON.stringify(randomConfigObject(rng, true))) : randomValue(rng, 0, true);
    const flags = { task: chance(rng, 0.3) ? String(valueFor(rng, 'task', false)) : undefined, seed: chance(rng, 0.3) ? pick(rng, HOSTILE_STRINGS) : undefined };
    record(reps.build, await runCase(() => checkBuild(fileJson, flags), limitMs), `case ${i} ${sketch({ fileJson, flags })}`);
    const q = randomQuery(rng);
    record(reps.url, await runCase(() => checkQuery(q), limitMs), `case ${i} ${sketch(q)}`);
    if (trainer && i % 4 === 0) {
      const cand: Record<string, unknown> = { ...trainer.config };
      for (let k = rng.int(1, 3); k > 0; k--) cand[pick(rng, FIELDS)] = valueFor(rng, pick(rng, FIELDS), false);
      record(reps.live, await runCase(() => checkSetConfig(trainer, cand), limitMs), `case ${i} ${sketch(cand)}`);
    }
  }
  return trainer ? Object.values(reps) : [reps.validate, reps.build, reps.url];
}
