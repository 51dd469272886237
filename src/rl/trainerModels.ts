// The trainer's roles, the SFT model and the learned reward model in the family asked for: the
// character model's own Gpt (what the page trains), or the same weights on HfModel as the GPT-2 they
// are (src/model/hf/charFamily.ts). Both are TrainerModels — they sample, are read and trained,
// snapshot on the device and carry their state in the character model's parameter layout, so saved
// states and checkpoints are one format — and, with the reward head, RewardTrainables.
import type { Backend } from '../backend/backend.ts';
import { checkpointHostParams } from '../model/checkpoint.ts';
import type { GptConfig, HeadKind } from '../model/config.ts';
import { Gpt } from '../model/gpt.ts';
import { CharFamilyTrainable } from '../model/hf/charFamily.ts';
import { initParams, paramLayout } from '../model/params.ts';
import type { RewardTrainable, TrainerModel } from '../model/sequenceModel.ts';
import { Rng } from '../util/rng.ts';

/** 'gpt': the character model's own Gpt (the page's); 'hf': the same weights on HfModel. */
export type ModelFamily = 'gpt' | 'hf';
export const MODEL_FAMILIES: readonly ModelFamily[] = ['gpt', 'hf'];

/** The family a command line's `--family` names, or the problem with it (the flag, the value, the allowed ones). */
export function familyFlag(value: string | undefined): { family: ModelFamily; problem: null } | { family: null; problem: string } {
  const family = MODEL_FAMILIES.find((f) => f === value);
  return family ? { family, problem: null } : { family: null, problem: `--family = ${JSON.stringify(value)}: allowed: ${MODEL_FAMILIES.join(', ')}` };
}

/** A role of config `cfg` whose parameters are `host` (paramLayout(cfg)'s order), in `family`. */
export function trainerModel(be: Backend, family: ModelFamily, cfg: GptConfig, host: ArrayLike<number>): TrainerModel {
  return family === 'hf' ? CharFamilyTrainable.fromHost(be, cfg, host) : new Gpt(be, cfg, host);
}

/** A fresh model of config `cfg` with GPT-2's initialisation from `seed` (the weights `new Gpt(be, cfg, seed)` starts from), in `family`. */
export function freshTrainerModel(be: Backend, family: ModelFamily, cfg: GptConfig, seed: number): TrainerModel {
  return trainerModel(be, family, cfg, initParams(paramLayout(cfg), new Rng(seed)));
}

/** A role from a checkpoint, as modelFromCheckpoint makes it (a new head initialised from `seed`), in `family`. */
export function trainerModelFromCheckpoint(
  be: Backend,
  family: ModelFamily,
  bytes: Uint8Array,
  opts: { head?: HeadKind; seed?: number; alphabet?: string; task?: string } = {},
): TrainerModel {
  const { host, info } = checkpointHostParams(bytes, opts);
  return trainerModel(be, family, info.config, host);
}

/** A reward model (cfg.head 'reward') whose parameters are `host` (paramLayout(cfg)'s order), in `family`. */
export function rewardTrainable(be: Backend, family: ModelFamily, cfg: GptConfig, host: ArrayLike<number>): RewardTrainable {
  if (cfg.head !== 'reward') throw new Error(`a reward model needs the 'reward' head, got '${cfg.head}'`);
  return family === 'hf' ? CharFamilyTrainable.fromHost(be, cfg, host) : new Gpt(be, cfg, host);
}
