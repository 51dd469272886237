// The numbers both engines' jobs share: dataset sizes, steps, batch sizes per GPU. Checks the job before anything is written, naming the field and its allowed range.
import { type ConfigProblem, validateConfig, type PpoConfig } from '../rl/config.ts';
import { SFT_MODEL_DIMS } from '../model/config.ts';
import type { ActorModel } from '../rl/sftRun.ts';
import type { Engine } from './engines.ts';
import { type JobModel, type ModelField, modelProblems } from './model.ts';

export interface JobOptions {
  engine: Engine;
  /** GPUs on the one node the job runs on; every batch size below is checked against it. */
  gpus: number;
  /** Training prompts written to train.parquet (drawn with the task's own generator). */
  trainRows: number;
  /** The model the playground run trained (its size and origin); the shipped SFT model when absent. */
  actor?: ActorModel;
  /** The Hugging Face model the job trains, with or without LoRA; the script's default model when absent. */
  model?: JobModel;
}

/** The model a job describes when the page says nothing else: the shipped SFT checkpoint. */
export const SHIPPED_ACTOR: ActorModel = { origin: 'shipped', dims: { ...SFT_MODEL_DIMS } };

/**
 * "a 4-layer, 4-head, d_model 128 character transformer (SFT in the tab)": the model the run
 * trained. Model knobs that differ from it did not apply in the playground, and the text says so.
 */
export function playgroundModelText(a: ActorModel = SHIPPED_ACTOR, knobs?: Pick<PpoConfig, 'nLayer' | 'nHead' | 'dModel'>): string {
  const from = a.origin === 'shipped' ? 'the shipped SFT checkpoint, made by npm run pretrain' : a.origin === 'tab' ? 'SFT in the tab' : 'an SFT model loaded from a file';
  const text = `a ${a.dims.nLayer}-layer, ${a.dims.nHead}-head, d_model ${a.dims.dModel} character transformer (${from})`;
  if (!knobs || (knobs.nLayer === a.dims.nLayer && knobs.nHead === a.dims.nHead && knobs.dModel === a.dims.dModel)) return text;
  return `${text}; its settings asked for ${knobs.nLayer} layers, ${knobs.nHead} heads, d_model ${knobs.dModel}, which did not apply to that model`;
}

/** The script's `# model:` line: what the run trained, and what the job trains instead. */
export function modelNote(plan: JobPlan): string {
  const m = plan.options.model;
  const here = m ? `${m.modelPath} (chosen at export), ${m.lora ? 'with LoRA adapters' : 'every weight trained'}` : 'a pretrained instruct model';
  return `# model: the playground run trained ${playgroundModelText(plan.options.actor, plan.config)}; here MODEL is ${here}`;
}

export const DEFAULT_JOB_OPTIONS: Omit<JobOptions, 'engine'> = { gpus: 1, trainRows: 2048 };
export const GPU_RANGE = { min: 1, max: 64 };
export const TRAIN_ROWS_RANGE = { min: 1, max: 200_000 };

/**
 * Why a job cannot be built, as structure: the page words it in the visitor's language
 * (ScaleUpPanel), the CLI prints `jobProblemMessage`'s English.
 */
export type JobProblem =
  | { kind: 'config'; problems: readonly ConfigProblem[] }
  | { kind: 'range'; field: string; value: number; min: number; max: number }
  | { kind: 'trainRowsBelowBatch'; trainRows: number; promptsPerBatch: number }
  | { kind: 'gpuSplit'; gpus: number; sequences: number; allowed: readonly number[] }
  | { kind: 'verlGpuSplit'; gpus: number; sequences: number }
  | { kind: 'model'; field: ModelField; value: string; allowed: string };

/** The problem in English, for the CLI and the error's message. */
export function jobProblemMessage(p: JobProblem): string {
  switch (p.kind) {
    case 'config':
      return p.problems.map((c) => c.message).join('\n');
    case 'range':
      return `${p.field} = ${p.value}: allowed: an integer from ${p.min} to ${p.max}`;
    case 'trainRowsBelowBatch':
      return `trainRows = ${p.trainRows}: must be at least promptsPerBatch (${p.promptsPerBatch}), or no full batch exists`;
    case 'gpuSplit':
      return `gpus = ${p.gpus}: a minibatch of ${p.sequences} sequences must split evenly over the GPUs; allowed: ${p.allowed.join(', ')}`;
    case 'verlGpuSplit':
      return `gpus = ${p.gpus}: verl's minibatch of ${p.sequences} sequences must split evenly over the GPUs`;
    case 'model':
      return `${p.field} = ${JSON.stringify(p.value)}: allowed: ${p.allowed}`;
  }
}

export class JobError extends Error {
  constructor(readonly problem: JobProblem) {
    super(jobProblemMessage(problem));
  }
}

export interface JobPlan {
  config: PpoConfig;
  options: JobOptions;
  /** Sequences per iteration: prompts × samples. */
  seqsPerBatch: number;
  /** Sequences per optimiser step. */
  seqsPerMinibatch: number;
  /** Iterations in one pass over train.parquet (both engines drop the last partial batch). */
  iterationsPerEpoch: number;
  /** Optimiser steps in the whole job: iterations × PPO epochs × minibatches. */
  optimizerSteps: number;
}

function checkInt(field: string, value: number, r: { min: number; max: number }): void {
  if (!Number.isInteger(value) || value < r.min || value > r.max) {
    throw new JobError({ kind: 'range', field, value, min: r.min, max: r.max });
  }
}

export function planJob(config: PpoConfig, options: JobOptions): JobPlan {
  const problems = validateConfig(config as PpoConfig & Record<string, unknown>);
  if (problems.length > 0) throw new JobError({ kind: 'config', problems });
  checkInt('gpus', options.gpus, GPU_RANGE);
  checkInt('trainRows', options.trainRows, TRAIN_ROWS_RANGE);
  const modelProblem = options.model ? modelProblems(options.model)[0] : undefined;
  if (modelProblem) throw new JobError({ kind: 'model', ...modelProblem });
  if (options.trainRows < config.promptsPerBatch) {
    throw new JobError({ kind: 'trainRowsBelowBatch', trainRows: options.trainRows, promptsPerBatch: config.promptsPerBatch });
  }
  const seqsPerBatch = config.promptsPerBatch * config.samplesPerPrompt;
  const seqsPerMinibatch = seqsPerBatch / config.miniBatches;
  // Both engines split each minibatch evenly over the GPUs (data parallel).
  if (seqsPerMinibatch % options.gpus !== 0) {
    const ok = Array.from({ length: GPU_RANGE.max }, (_, i) => i + 1).filter((g) => seqsPerMinibatch % g === 0);
    throw new JobError({ kind: 'gpuSplit', gpus: options.gpus, sequences: seqsPerMinibatch, allowed: ok });
  }
  const iterationsPerEpoch = Math.floor(options.trainRows / config.promptsPerBatch);
  return {
    config,
    options,
    seqsPerBatch,
    seqsPerMinibatch,
    iterationsPerEpoch,
    optimizerSteps: iterationsPerEpoch * config.ppoEpochs * config.miniBatches,
  };
}
