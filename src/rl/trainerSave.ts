// Saving, loading and restoring the trainer's full state (the file format is trainerState.ts):
// everything is validated on the host before any model is touched, so a bad file throws and
// leaves the trainer as it was.
import type { Backend } from '../backend/backend.ts';
import { checkpointBytes } from '../model/checkpoint.ts';
import type { TrainerModel } from '../model/sequenceModel.ts';
import { quoted } from '../model/safetensors.ts';
import type { CharTokenizer } from '../model/tokenizer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import type { Task } from '../tasks/task.ts';
import type { PpoConfig } from './config.ts';
import { type ModelFamily, trainerModel } from './trainerModels.ts';
import { decodeTrainerState, encodeTrainerState, type TrainerStateParts } from './trainerState.ts';

/** Settings that fix the models or the data stream: changing them needs a new trainer. */
export const RESTART_FIELDS: readonly (keyof PpoConfig)[] = ['task', 'nLayer', 'nHead', 'dModel', 'seed'];

/** The trainer's parts a saved state holds. */
export interface SavedParts {
  task: Task;
  tok: CharTokenizer;
  cfg: PpoConfig;
  actor: TrainerModel;
  reference: TrainerModel;
  critic: TrainerModel | null;
  iter: number;
  klBeta: number;
}

/** The whole state as one safetensors file, in one readback (each role's buffers in the character model's layout). */
export async function saveTrainerState(be: Backend, p: SavedParts): Promise<Uint8Array> {
  const a = p.actor.stateTensors();
  const c = p.critic?.stateTensors() ?? null;
  const ts = [a.params, a.m, a.v, p.reference.stateTensors().params, ...(c ? [c.params, c.m, c.v] : [])];
  const host = await be.readMany(ts);
  const [ap, am, av] = host.slice(0, 3).map((x) => p.actor.toGptLayout(x));
  const ref = p.reference.toGptLayout(host[3]);
  const [cp, cm, cv] = p.critic ? host.slice(4).map((x) => p.critic!.toGptLayout(x)) : [];
  return encodeTrainerState({
    task: p.task.name,
    alphabet: p.tok.alphabet,
    config: { ...p.cfg },
    modelConfig: { ...p.actor.cfg },
    iteration: p.iter,
    klBeta: p.klBeta,
    actor: { params: ap, m: am, v: av, steps: p.actor.steps },
    critic: p.critic && cp ? { params: cp, m: cm, v: cv, steps: p.critic.steps } : null,
    reference: Float32Array.from(ref),
  });
}

export function requireRewardModel(c: PpoConfig, hasRewardModel: boolean): void {
  if (c.rewardSource === 'model' && !hasRewardModel) throw new Error('rewardSource = "model" needs a trained reward model');
}

export function requireRewardSandbox(c: PpoConfig, hasSandbox: boolean): void {
  if (c.rewardSource === 'function' && !hasSandbox) throw new Error('rewardSource = "function" needs the reward-function sandbox (loadRewardSandbox)');
}

/** A decoded state with the models a new trainer starts from (in `family`): actor and reference set, the SFT checkpoint rebuilt. */
export async function modelsFromState(be: Backend, state: Uint8Array, hasRewardModel: boolean, family: ModelFamily) {
  const st = decodeTrainerState(state);
  const task = getTask(st.config.task);
  const tok = taskTokenizer(task);
  if (st.alphabet !== tok.alphabet) throw new Error(`trainer state: alphabet ${quoted(st.alphabet)} does not match task "${task.name}"`);
  if (st.modelConfig.vocabSize !== tok.vocabSize) throw new Error(`trainer state: vocabSize ${st.modelConfig.vocabSize} does not match task "${task.name}" (${tok.vocabSize})`);
  requireRewardModel(st.config, hasRewardModel);
  const reference = trainerModel(be, family, st.modelConfig, st.reference);
  const sft = checkpointBytes(reference.cfg, st.reference, { alphabet: tok.alphabet, task: task.name });
  const actor = trainerModel(be, family, st.modelConfig, st.actor.params);
  actor.setState(st.actor.params, st.actor.m, st.actor.v, st.actor.steps);
  return { st, task, tok, actor, reference, sft };
}

/** saveState's bytes decoded and checked against a running trainer's models (throws before any change). */
export function restorableState(state: Uint8Array, p: Pick<SavedParts, 'cfg' | 'actor' | 'tok'>, hasRewardModel: boolean): TrainerStateParts {
  const st = decodeTrainerState(state);
  const changed = RESTART_FIELDS.filter((f) => st.config[f] !== p.cfg[f]);
  if (changed.length > 0) throw new Error(`trainer state: ${changed.join(', ')} differ from this trainer's; load it into a new trainer`);
  if (JSON.stringify(st.modelConfig) !== JSON.stringify(p.actor.cfg)) throw new Error("trainer state: the model config differs from this trainer's");
  if (st.alphabet !== p.tok.alphabet) throw new Error("trainer state: the alphabet differs from this trainer's");
  requireRewardModel(st.config, hasRewardModel);
  return st;
}

/** Actor and reference weights and moments from a decoded state. */
export function setPolicyState(st: TrainerStateParts, actor: TrainerModel, reference: TrainerModel): void {
  const n = st.reference.length;
  reference.setState(st.reference, new Float64Array(n), new Float64Array(n), 0);
  actor.setState(st.actor.params, st.actor.m, st.actor.v, st.actor.steps);
}

/** The critic a decoded state asks for: `critic` updated in place (built when missing), or disposed when the state has none. */
export function criticFromState(be: Backend, family: ModelFamily, actor: TrainerModel, critic: TrainerModel | null, st: TrainerStateParts): TrainerModel | null {
  if (!st.critic) {
    critic?.dispose();
    return null;
  }
  const c = critic ?? trainerModel(be, family, { ...actor.cfg, head: 'value' }, st.critic.params);
  c.setState(st.critic.params, st.critic.m, st.critic.v, st.critic.steps);
  return c;
}
