// The "1 · SFT" stage's state: the SFT model the page holds for each task (trained in the tab or
// loaded from a file; the shipped checkpoint when none), the run in progress with its loss curve,
// phase evaluations and ETA, and the measured step time behind "about N s on this GPU".
import { create } from 'zustand';
import type { ModelDims, SftMeta } from '../rl/sftRun.ts';
import type { WorkerToPage } from '../worker/protocol.ts';
import type { ActorOrigin } from './modelSize.ts';

/** An SFT model the page keeps (IndexedDB `sft`, one per task) and hands to every trainer worker. */
export interface KeptSftModel {
  task: string;
  origin: Exclude<ActorOrigin, 'shipped'>;
  dims: ModelDims;
  /** What the run was (tab), or null for a file (its seed and steps are not in the file). */
  meta: SftMeta | null;
  fileName?: string;
  bytes: ArrayBuffer;
  savedAt: number;
}

export interface SftLossPoint {
  step: number;
  loss: number;
}

export interface SftRunView {
  task: string;
  dims: ModelDims;
  status: 'running' | 'done' | 'cancelled' | 'failed';
  phase: number;
  phases: number;
  doneSteps: number;
  totalSteps: number;
  seconds: number;
  loss: SftLossPoint[];
  evals: { phase: number; label: string; metrics: Record<string, number> }[];
  message?: string;
}

export interface SftState {
  models: Record<string, KeptSftModel>;
  run: SftRunView | null;
  /** Measured seconds per SFT step for a task and size (key from timingKey), with the recipe's steps. */
  timings: Record<string, { secondsPerStep: number; recipeSteps: number }>;
  /** A refused file or a failed run, shown inline in the SFT card. */
  problem: string | null;
  setModel(m: KeptSftModel): void;
  dropModel(task: string): void;
  setRun(r: SftRunView | null): void;
  patchRun(p: Partial<SftRunView>): void;
  setTiming(key: string, t: { secondsPerStep: number; recipeSteps: number }): void;
  setProblem(p: string | null): void;
  /** The worker's `sftProgress` of the run in progress: its phase, steps and loss curve. */
  progressReceived(msg: Extract<WorkerToPage, { type: 'sftProgress' }>): void;
  /** The worker's `sftPhaseEval`: a phase's evaluation of the run in progress. */
  phaseEvalReceived(msg: Extract<WorkerToPage, { type: 'sftPhaseEval' }>): void;
}

export const timingKey = (task: string, d: ModelDims) => `${task}:${d.nLayer}x${d.nHead}x${d.dModel}`;

export const useSft = create<SftState>()((set, get) => ({
  models: {},
  run: null,
  timings: {},
  problem: null,
  setModel: (m) => set((s) => ({ models: { ...s.models, [m.task]: m } })),
  dropModel: (task) =>
    set((s) => {
      const { [task]: _, ...rest } = s.models;
      return { models: rest };
    }),
  setRun: (run) => set({ run }),
  patchRun: (p) => set((s) => (s.run ? { run: { ...s.run, ...p } } : {})),
  setTiming: (key, t) => set((s) => ({ timings: { ...s.timings, [key]: t } })),
  setProblem: (problem) => set({ problem }),
  progressReceived(msg) {
    const run = get().run;
    if (run?.status !== 'running') return;
    get().patchRun({
      phase: msg.phase,
      phases: msg.phases,
      doneSteps: msg.doneSteps,
      totalSteps: msg.totalSteps,
      seconds: msg.seconds,
      loss: [...run.loss, { step: msg.doneSteps, loss: msg.loss }],
    });
  },
  phaseEvalReceived(msg) {
    const run = get().run;
    if (run?.status === 'running') get().patchRun({ evals: [...run.evals, { phase: msg.phase, label: msg.label, metrics: msg.metrics }] });
  },
}));

/** The model size of the SFT model the page keeps for `task`, if it keeps one: a preset's recipe trains that model. */
export const keptModelDims = (task: string): ModelDims | undefined => useSft.getState().models[task]?.dims;
