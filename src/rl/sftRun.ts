// One SFT run of a task at a chosen model size: the one function behind `npm run pretrain` and the
// page's "1 · SFT" stage (the worker's trainSft command), so the two cannot drift. It follows the
// task's recipe (src/tasks/*: sftRecipe, e.g. tutor then sloppy), evaluates greedily on held-out
// prompts after each phase (as the CLI has always printed) and returns the safetensors bytes.
import type { Backend } from '../backend/backend.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { gptConfigProblems, sftModelConfig } from '../model/config.ts';
import { buildSftBatch, DEFAULT_SFT, sftLossAndBackward, trainSftRecipe } from '../model/sft.ts';
import { Rng } from '../util/rng.ts';
import { getTask, taskTokenizer, type SftPhase, type TaskSample } from '../tasks/index.ts';
import { NUMERIC_RULES } from './config.ts';
import { greedySamples } from './evaluation.ts';
import { freshTrainerModel, type ModelFamily } from './trainerModels.ts';

/** The three model knobs (PpoConfig's nLayer / nHead / dModel). */
export interface ModelDims {
  nLayer: number;
  nHead: number;
  dModel: number;
}

/** Where a PPO run's actor comes from: the shipped checkpoint, SFT in the page's tab, or a file loaded there. */
export type ActorOrigin = 'shipped' | 'tab' | 'file';

/** The model a PPO run trains: its size and where it came from (the header, the exports). */
export interface ActorModel {
  origin: ActorOrigin;
  dims: ModelDims;
}

export interface SftRunOptions {
  task: string;
  dims: ModelDims;
  seed: number;
  /**
   * Caps every phase at this many steps: a reduced run (tests, the e2e suite, the bench) that the
   * CLI (`--phase-steps`) and the page's command share, so both reduce the same way.
   */
  phaseSteps?: number;
  /** Overrides of the recipe's last phase (the CLI's --steps / --batch / --lr). */
  lastPhase?: Partial<Pick<SftPhase, 'steps' | 'batchSize' | 'lr'>>;
  /** Held-out prompts of the greedy evaluation after each phase (the CLI's 64 by default). */
  evalPrompts?: number;
  /** The family the model trains in (default 'gpt', the page's); either writes the same checkpoint format. */
  family?: ModelFamily;
}

export interface SftProgress {
  phase: number;
  /** Steps done in this phase and in the whole run. */
  step: number;
  doneSteps: number;
  totalSteps: number;
  loss: number;
  lr: number;
  gradNorm: number;
}

export interface SftPhaseEval {
  phase: number;
  label: string;
  /** The task's metrics on greedy responses to held-out prompts (task.evaluate). */
  metrics: Record<string, number>;
  /** A few of the greedy samples, for a log or the page. */
  samples: TaskSample[];
}

export interface SftRunHooks {
  onProgress?(p: SftProgress): void;
  onPhaseEnd?(e: SftPhaseEval): void | Promise<void>;
  /** Polled before every step: true ends the run (it then throws SftCancelled). */
  shouldStop?(): boolean;
}

/** What a finished SFT run was: kept with its bytes (the page's IndexedDB) and shown in the header. */
export interface SftMeta extends ModelDims {
  task: string;
  seed: number;
  /** Optimiser steps over all phases. */
  steps: number;
  /** The backend's label (e.g. "webgpu (SwiftShader)" or "cpu (float64 reference)"). */
  backend: string;
}

export class SftCancelled extends Error {
  constructor() {
    super('SFT cancelled');
  }
}

/** The phases a run follows: the task's recipe with the run's overrides and cap. */
export function sftPhases(opts: Pick<SftRunOptions, 'task' | 'phaseSteps' | 'lastPhase'>): SftPhase[] {
  const phases = getTask(opts.task).sftRecipe.map((p) => ({ ...p }));
  Object.assign(phases[phases.length - 1], opts.lastPhase ?? {});
  if (opts.phaseSteps !== undefined) for (const p of phases) p.steps = Math.min(p.steps, opts.phaseSteps);
  return phases;
}

/** Every problem with a model size, naming each knob by `names` (the page's labels or the CLI's flags). */
export function modelDimsProblems(d: ModelDims, names: Record<keyof ModelDims, string>): string[] {
  const p: string[] = [];
  for (const k of ['nLayer', 'nHead', 'dModel'] as const) {
    const r = NUMERIC_RULES[k]!;
    if (!Number.isInteger(d[k]) || d[k] < r.min || d[k] > r.max) p.push(`${names[k]} = ${String(d[k])}: expected an integer from ${r.min} to ${r.max}`);
  }
  if (p.length > 0) return p;
  if (d.dModel % d.nHead !== 0) p.push(`${names.nHead} = ${d.nHead}: must divide ${names.dModel} (${d.dModel})`);
  else if (d.dModel / d.nHead > 64) p.push(`${names.dModel} / ${names.nHead} = ${d.dModel / d.nHead}: at most 64 per head (the attention kernel's limit)`);
  return p;
}

/** Trains a fresh model of `opts.dims` from `opts.seed` through the task's recipe; its checkpoint and what it was. */
export async function runSft(be: Backend, opts: SftRunOptions, hooks: SftRunHooks = {}): Promise<{ bytes: Uint8Array; meta: SftMeta }> {
  const task = getTask(opts.task);
  const tok = taskTokenizer(task);
  const problems = modelDimsProblems(opts.dims, { nLayer: 'nLayer', nHead: 'nHead', dModel: 'dModel' });
  const cfg = { ...sftModelConfig(tok.vocabSize, task.maxPromptChars, NUMERIC_RULES.maxResponseLength?.max ?? 64), ...opts.dims };
  problems.push(...gptConfigProblems(cfg));
  if (problems.length > 0) throw new Error(`SFT model size not allowed: ${problems.join('; ')}`);
  const phases = sftPhases(opts);
  const totalSteps = phases.reduce((n, p) => n + p.steps, 0);
  const before = phases.map((_, i) => phases.slice(0, i).reduce((n, p) => n + p.steps, 0));
  const model = freshTrainerModel(be, opts.family ?? 'gpt', cfg, opts.seed);
  try {
    await trainSftRecipe(model, task, phases, tok, {
      seed: opts.seed,
      beforeStep: () => {
        if (hooks.shouldStop?.()) throw new SftCancelled();
      },
      onLog: (l) => hooks.onProgress?.({ ...l, doneSteps: before[l.phase] + l.step, totalSteps }),
      onPhaseEnd: async (i) => {
        if (!hooks.onPhaseEnd) return;
        const samples = await greedySamples(model, task, tok, opts.evalPrompts ?? 64, task.maxResponseChars + 1);
        await hooks.onPhaseEnd({ phase: i, label: phases[i].label, metrics: task.evaluate(samples), samples });
      },
    });
    const bytes = await saveCheckpoint(model, { alphabet: task.alphabet, task: task.name });
    return { bytes, meta: { task: task.name, ...opts.dims, seed: opts.seed, steps: totalSteps, backend: be.label } };
  } finally {
    model.dispose();
  }
}

/**
 * Seconds per SFT step at `dims` on `be`, measured: `warmup` steps (pipelines, pools) then the
 * median of `timed` steps of the recipe's first phase, each read back (so the device has finished
 * it). The page's "about N s on this GPU" and `npm run bench -- --only sizes` both use it.
 */
export async function timeSftSteps(be: Backend, opts: { task: string; dims: ModelDims; seed: number; family?: ModelFamily }, timed = 2, warmup = 1): Promise<number> {
  const task = getTask(opts.task);
  const tok = taskTokenizer(task);
  const cfg = { ...sftModelConfig(tok.vocabSize, task.maxPromptChars, NUMERIC_RULES.maxResponseLength?.max ?? 64), ...opts.dims };
  const problems = gptConfigProblems(cfg);
  if (problems.length > 0) throw new Error(`SFT model size not allowed: ${problems.join('; ')}`);
  const phase = task.sftRecipe[0];
  const example = phase.example ?? ((rng: Rng) => task.sftExample(rng));
  const rng = new Rng(opts.seed);
  const model = freshTrainerModel(be, opts.family ?? 'gpt', cfg, opts.seed);
  const times: number[] = [];
  try {
    for (let i = 0; i < warmup + timed; i++) {
      const batch = buildSftBatch(
        tok,
        Array.from({ length: phase.batchSize }, () => example(rng)),
      );
      const t0 = performance.now();
      model.zeroGrad();
      const loss = sftLossAndBackward(model, batch);
      const norm = model.optimizerStep({ ...DEFAULT_SFT.optimizer, lr: phase.lr });
      await be.readMany([loss, norm]);
      be.dispose(loss, norm);
      if (i >= warmup) times.push((performance.now() - t0) / 1000);
    }
  } finally {
    model.dispose();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
