// Shared by `npm run train -- --preset` and `npm run learning`: look a preset (and arm) up by
// name, build its exact config, and train it with the project's own PpoTrainer while recording the
// held-out evaluation curve (before training, every `evalEvery` iterations, and at the end).
import type { ModelFamily } from '../rl/trainerModels.ts';
import { loadRewardSandbox } from '../rl/rewardFunction/sandbox.ts';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend } from '../backend/backend.ts';
import type { PpoConfig } from '../rl/config.ts';
import { PRESETS, findPreset, presetArms, type Preset } from '../rl/presets.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { getTask } from '../tasks/index.ts';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export { makeBackend, type BackendKind } from '../node/backend.ts';

/** The message for an unknown preset name: every valid name, one per line. */
export function unknownPresetMessage(name: string): string {
  return `unknown preset ${JSON.stringify(name)}; valid presets:\n${PRESETS.map((p) => `  "${p.name}"`).join('\n')}`;
}

export interface ResolvedArm {
  preset: Preset;
  /** The arm's label (the preset's name when it has no arms). */
  label: string;
  /** The arm's index in presetArms(preset). */
  arm: number;
  /** Preset values with the arm's values on top (not yet merged with the defaults). */
  values: Partial<PpoConfig>;
}

/**
 * The arm `armLabel` of the preset called `name` (the first arm when no label is given).
 * Returns an error message naming the valid choices instead of throwing.
 */
export function resolvePresetArm(name: string, armLabel?: string): ResolvedArm | { error: string } {
  const preset = findPreset(name);
  if (!preset) return { error: unknownPresetMessage(name) };
  const arms = presetArms(preset);
  const index = armLabel === undefined ? 0 : arms.findIndex((a) => a.label === armLabel);
  const arm = arms[index];
  if (!arm) return { error: `preset "${name}" has no arm ${JSON.stringify(armLabel)}; its arms: ${arms.map((a) => `"${a.label}"`).join(', ')}` };
  return { preset, label: arm.label, arm: index, values: arm.values };
}

export interface EvalRow {
  iter: number;
  values: Record<string, number>;
}

export interface RunRecord {
  seed: number;
  /** Held-out evaluation of the SFT policy, before any update. */
  evalBefore: Record<string, number>;
  /** Held-out evaluations after `iter` iterations (every evalEvery, and the last). */
  evals: EvalRow[];
  /** Per-iteration training metrics. */
  metrics: Record<string, number>[];
  /** Seconds for the whole run, evaluations included. */
  wallS: number;
}

export interface RunOptions {
  be: Backend;
  config: PpoConfig;
  iters: number;
  /** Held-out prompts per evaluation and draws per prompt (sampled accuracy). */
  evalCount: number;
  evalSamples: number;
  /** Override the SFT checkpoint / reward model paths. */
  checkpointPath?: string;
  rewardModelPath?: string;
  /** The family the trainer's roles run in (default 'gpt', the page's). */
  family?: ModelFamily;
  /** Called with every row as it is produced ({eval_before}, metrics, {eval, iter}). */
  onRow?: (row: Record<string, unknown>) => void;
}

export function checkpointPath(task: string): string {
  return join(REPO_ROOT, 'public', 'checkpoints', `${task}.safetensors`);
}

export function rewardModelPath(task: string): string {
  return join(REPO_ROOT, 'public', 'checkpoints', `${task}_rm.safetensors`);
}

/** Trains one run of `config` for `iters` iterations and returns everything it measured. */
export async function runPreset(o: RunOptions): Promise<RunRecord> {
  const { be, config } = o;
  const ckPath = o.checkpointPath ?? checkpointPath(config.task);
  if (!existsSync(ckPath)) throw new Error(`no SFT checkpoint at ${ckPath}: run \`npm run pretrain -- --task ${config.task}\` first`);
  const rmPath = o.rewardModelPath ?? rewardModelPath(config.task);
  if (config.rewardSource === 'model' && !existsSync(rmPath))
    throw new Error(`rewardSource "model": no reward model at ${rmPath}: run \`npm run train-rm -- --task ${config.task}\``);
  const rewardModel =
    config.rewardSource === 'model'
      ? RewardModel.fromCheckpoint(be, new Uint8Array(readFileSync(rmPath)), { alphabet: getTask(config.task).alphabet, task: config.task }, o.family)
      : undefined;
  // A written reward function runs in the same QuickJS sandbox as in the page's worker.
  const rewardSandbox = config.rewardSource === 'function' ? await loadRewardSandbox() : undefined;
  const t0 = performance.now();
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: new Uint8Array(readFileSync(ckPath)), rewardModel, rewardSandbox, family: o.family });
  const emit = o.onRow ?? (() => {});
  try {
    const evalBefore = await trainer.evaluate(o.evalCount, o.evalSamples);
    emit({ eval_before: evalBefore });
    const evals: EvalRow[] = [];
    const metrics: Record<string, number>[] = [];
    for (let i = 0; i < o.iters; i++) {
      const r = await trainer.iteration();
      for (const [k, v] of Object.entries(r.metrics)) if (!Number.isFinite(v)) throw new Error(`iteration ${r.iter}: metric ${k} is ${v}`);
      metrics.push(r.metrics);
      emit(r.metrics);
      const done = i + 1;
      if (done === o.iters || (config.evalEvery > 0 && done % config.evalEvery === 0)) {
        const values = await trainer.evaluate(o.evalCount, o.evalSamples);
        evals.push({ iter: done, values });
        emit({ eval: values, iter: done });
      }
    }
    if (o.iters === 0) {
      const values = await trainer.evaluate(o.evalCount, o.evalSamples);
      evals.push({ iter: 0, values });
      emit({ eval: values, iter: 0 });
    }
    return { seed: config.seed, evalBefore, evals, metrics, wallS: (performance.now() - t0) / 1000 };
  } finally {
    trainer.dispose();
    rewardModel?.dispose();
  }
}
