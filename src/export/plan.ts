// The numbers both engines' jobs share: dataset sizes, steps, batch sizes per GPU. Checks the job before anything is written, naming the field and its allowed range.
import { validateConfig, type PpoConfig } from '../rl/config.ts';
import { SFT_MODEL_DIMS } from '../model/config.ts';
import type { ActorModel } from '../rl/sftRun.ts';
import type { Engine } from './engines.ts';

export interface JobOptions {
  engine: Engine;
  /** GPUs on the one node the job runs on; every batch size below is checked against it. */
  gpus: number;
  /** Training prompts written to train.parquet (drawn with the task's own generator). */
  trainRows: number;
  /** The model the playground run trained (its size and origin); the shipped SFT model when absent. */
  actor?: ActorModel;
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

export const DEFAULT_JOB_OPTIONS: Omit<JobOptions, 'engine'> = { gpus: 1, trainRows: 2048 };
export const GPU_RANGE = { min: 1, max: 64 };
export const TRAIN_ROWS_RANGE = { min: 1, max: 200_000 };

export class JobError extends Error {}

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
    throw new JobError(`${field} = ${value}: allowed: an integer from ${r.min} to ${r.max}`);
  }
}

export function planJob(config: PpoConfig, options: JobOptions): JobPlan {
  const problems = validateConfig(config as PpoConfig & Record<string, unknown>);
  if (problems.length > 0) throw new JobError(problems.map((p) => p.message).join('\n'));
  checkInt('gpus', options.gpus, GPU_RANGE);
  checkInt('trainRows', options.trainRows, TRAIN_ROWS_RANGE);
  if (options.trainRows < config.promptsPerBatch) {
    throw new JobError(`trainRows = ${options.trainRows}: must be at least promptsPerBatch (${config.promptsPerBatch}), or no full batch exists`);
  }
  const seqsPerBatch = config.promptsPerBatch * config.samplesPerPrompt;
  const seqsPerMinibatch = seqsPerBatch / config.miniBatches;
  // Both engines split each minibatch evenly over the GPUs (data parallel).
  if (seqsPerMinibatch % options.gpus !== 0) {
    const ok = Array.from({ length: GPU_RANGE.max }, (_, i) => i + 1).filter((g) => seqsPerMinibatch % g === 0);
    throw new JobError(`gpus = ${options.gpus}: a minibatch of ${seqsPerMinibatch} sequences must split evenly over the GPUs; allowed: ${ok.join(', ')}`);
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
