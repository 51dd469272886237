// The PPO trainer's full state as ONE safetensors file, so a run resumes exactly where it stopped
// (after a reload, or a NaN restore from the host copy):
//   actor.params / actor.adam_m / actor.adam_v      F64 (layout.total)  — F64 so the float64 CPU
//   critic.params / critic.adam_m / critic.adam_v   F64 (value layout)     backend resumes bit-exactly
//   reference.params                                F32 (layout.total)  — the SFT weights, which never move
// metadata (all strings): format "ppo-trainer-state", format_version, task, alphabet, config
// (JSON PpoConfig), model_config (JSON GptConfig of the actor), iteration, actor_steps,
// critic_steps, kl_beta (JSON number: float64 round-trips exactly).
// The RNG streams are all derived from (seed, iteration, …), so `iteration` is the RNG state.
// Decoding validates everything (names, shapes, dtypes, finiteness, metadata) on the host before
// the caller touches a model.
import { validateGptConfig, type GptConfig } from '../model/config.ts';
import { paramLayout } from '../model/params.ts';
import { decodeSafetensors, encodeSafetensors, quoted, type SafeTensor } from '../model/safetensors.ts';
import { checkConfig, DEFAULT_REWARD_FUNCTION, type CheckedConfig, type PpoConfig } from './config.ts';

export const TRAINER_STATE_FORMAT = 'ppo-trainer-state';
export const TRAINER_STATE_VERSION = '1';

/** Host copy of one model's weights and AdamW state. */
export interface ModelState {
  params: Float64Array; // (layout.total)
  m: Float64Array; // (layout.total)
  v: Float64Array; // (layout.total)
  steps: number;
}

export interface TrainerStateParts {
  task: string;
  alphabet: string;
  config: PpoConfig;
  modelConfig: GptConfig; // the actor's (head 'lm'); the critic is the same trunk with head 'value'
  iteration: number;
  klBeta: number;
  actor: ModelState;
  critic: ModelState | null;
  reference: Float32Array; // (layout.total) the SFT parameters
}

export function encodeTrainerState(s: TrainerStateParts): Uint8Array {
  const n = (x: ArrayLike<number>) => [x.length];
  const model = (prefix: string, m: ModelState): SafeTensor[] => [
    { name: `${prefix}.params`, dtype: 'F64', shape: n(m.params), data: m.params },
    { name: `${prefix}.adam_m`, dtype: 'F64', shape: n(m.m), data: m.m },
    { name: `${prefix}.adam_v`, dtype: 'F64', shape: n(m.v), data: m.v },
  ];
  const tensors: SafeTensor[] = [
    ...model('actor', s.actor),
    ...(s.critic ? model('critic', s.critic) : []),
    { name: 'reference.params', dtype: 'F32', shape: n(s.reference), data: s.reference },
  ];
  return encodeSafetensors(tensors, {
    format: TRAINER_STATE_FORMAT,
    format_version: TRAINER_STATE_VERSION,
    task: s.task,
    alphabet: s.alphabet,
    config: JSON.stringify(s.config),
    model_config: JSON.stringify(s.modelConfig),
    iteration: String(s.iteration),
    actor_steps: String(s.actor.steps),
    critic_steps: String(s.critic?.steps ?? 0),
    kl_beta: JSON.stringify(s.klBeta),
  });
}

const fail = (why: string): never => {
  throw new Error(`trainer state: ${why}`);
};

function nonNegInt(meta: Record<string, string>, key: string): number {
  const x = Number(meta[key]);
  if (!Number.isInteger(x) || x < 0) fail(`metadata "${key}" = ${quoted(meta[key])} is not a non-negative integer`);
  return x;
}

/** Parses and validates a trainer state file; throws a message naming the first problem. */
/** A metadata number as typed (format_version 99); anything else quoted and cut like any hostile value. */
function bare(v: unknown): string {
  return typeof v === 'string' && /^-?\d{1,20}(\.\d{1,20})?$/.test(v) ? v : quoted(v);
}

/** A state read from a file: its config checked here, where the file entered. */
export type DecodedTrainerState = TrainerStateParts & { config: CheckedConfig };

export function decodeTrainerState(bytes: Uint8Array): DecodedTrainerState {
  const { tensors, metadata: meta } = decodeSafetensors(bytes);
  for (const key of ['format', 'format_version', 'task', 'alphabet', 'config', 'model_config', 'iteration', 'actor_steps', 'critic_steps', 'kl_beta']) {
    if (typeof meta[key] !== 'string') fail(`metadata is missing "${key}" (is this a model checkpoint rather than a trainer state?)`);
  }
  if (meta.format !== TRAINER_STATE_FORMAT) fail(`format ${quoted(meta.format)} is not "${TRAINER_STATE_FORMAT}"`);
  if (meta.format_version !== TRAINER_STATE_VERSION) fail(`format_version ${bare(meta.format_version)} is not supported (expected ${TRAINER_STATE_VERSION})`);
  const json = (key: string): unknown => {
    try {
      return JSON.parse(meta[key]);
    } catch (e) {
      return fail(`metadata "${key}" is not valid JSON: ${(e as Error).message}`);
    }
  };
  const saved = json('config') as PpoConfig;
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) fail(`metadata "config" must be an object, got ${quoted(saved)}`);
  // States saved before the written reward existed have no rewardFunction: they used none.
  const { config, problems } = checkConfig({ ...saved, rewardFunction: saved.rewardFunction ?? DEFAULT_REWARD_FUNCTION });
  // A hostile file can break every setting at once: name the first few, count the rest.
  const shown = problems.slice(0, 3).map((p) => p.message);
  if (problems.length > 3) shown.push(`and ${problems.length - 3} more`);
  if (!config) return fail(`config is invalid: ${shown.join('; ')}`);
  if (config.task !== meta.task) fail(`config task ${quoted(config.task)} differs from the file's task ${quoted(meta.task)}`);
  const modelConfig = json('model_config') as GptConfig;
  validateGptConfig(modelConfig);
  if (modelConfig.head !== 'lm') fail(`model_config head is ${quoted(modelConfig.head)}, expected "lm"`);
  const klBeta = json('kl_beta') as number;
  if (typeof klBeta !== 'number' || !Number.isFinite(klBeta) || klBeta < 0) fail(`kl_beta = ${bare(meta.kl_beta)} is not a finite number ≥ 0`);

  const lmTotal = paramLayout(modelConfig).total;
  const valueTotal = paramLayout({ ...modelConfig, head: 'value' }).total;
  const take = (name: string, dtype: 'F32' | 'F64', size: number): Float64Array | Float32Array => {
    const t = tensors.get(name);
    if (!t) return fail(`tensor ${quoted(name)} is missing`);
    if (t.dtype !== dtype) fail(`tensor ${quoted(name)} has dtype ${t.dtype}, expected ${dtype}`);
    if (t.shape.length !== 1 || t.shape[0] !== size) fail(`tensor ${quoted(name)} has shape ${quoted(t.shape)}, expected [${size}]`);
    for (let i = 0; i < t.data.length; i++) if (!Number.isFinite(t.data[i])) fail(`tensor ${quoted(name)} holds a non-finite value at ${i}`);
    return t.data as Float64Array | Float32Array;
  };
  const model = (prefix: string, size: number, steps: number): ModelState => ({
    params: take(`${prefix}.params`, 'F64', size) as Float64Array,
    m: take(`${prefix}.adam_m`, 'F64', size) as Float64Array,
    v: take(`${prefix}.adam_v`, 'F64', size) as Float64Array,
    steps,
  });
  const hasCritic = tensors.has('critic.params');
  const known = new Set(['actor.params', 'actor.adam_m', 'actor.adam_v', 'reference.params', ...(hasCritic ? ['critic.params', 'critic.adam_m', 'critic.adam_v'] : [])]);
  for (const name of tensors.keys()) if (!known.has(name)) fail(`unexpected tensor ${quoted(name)}`);
  const actor = model('actor', lmTotal, nonNegInt(meta, 'actor_steps'));
  const critic = hasCritic ? model('critic', valueTotal, nonNegInt(meta, 'critic_steps')) : null;
  if (config.advantageEstimator === 'gae' && !critic) fail('the config uses GAE but the file has no critic');
  for (let i = 0; i < actor.v.length; i++) if (actor.v[i] < 0) fail('actor.adam_v holds a negative second moment');
  if (critic) for (let i = 0; i < critic.v.length; i++) if (critic.v[i] < 0) fail('critic.adam_v holds a negative second moment');
  return {
    task: meta.task,
    alphabet: meta.alphabet,
    config,
    modelConfig,
    iteration: nonNegInt(meta, 'iteration'),
    klBeta,
    actor,
    critic,
    reference: take('reference.params', 'F32', lmTotal) as Float32Array,
  };
}
