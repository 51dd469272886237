// "Train your model with LoRA": what the panel draws of a training run of the visitor's own model —
// the settings (checked against one range table, hfTrainSettings.ts), the rows the worker posts
// per iteration, the task's held-out accuracy before and after, and how the run ended. The
// commands that send anything are in hfFlows.ts.
import { create } from 'zustand';
import { DEFAULT_HF_TRAIN, type HfTrainEval, type HfTrainRow, type HfTrainSettings } from '../rl/hf/hfTrainSettings.ts';
import type { WorkerToPage } from '../worker/protocol.ts';

export interface HfTrainState {
  settings: HfTrainSettings;
  running: boolean;
  stopping: boolean;
  rows: HfTrainRow[];
  evals: HfTrainEval[];
  /** How the last run ended; null before any. */
  ended: { iterations: number; stopped: boolean } | null;
  /** Why the last run could not start or failed (the worker's words). */
  problem: string | null;
  /** The model holds a trained adapter (sampling uses it; it can be downloaded). */
  trained: boolean;
  downloadProblem: string | null;

  setSettings(patch: Partial<HfTrainSettings>): void;
  started(): void;
  stopAsked(): void;
  rowReceived(msg: Extract<WorkerToPage, { type: 'hfTrainRow' }>): void;
  evalReceived(msg: Extract<WorkerToPage, { type: 'hfTrainEval' }>): void;
  finished(msg: Extract<WorkerToPage, { type: 'hfTrained' }>): void;
  failed(message: string): void;
  setDownloadProblem(message: string | null): void;
  /** The model went or changed: its adapter with it (the settings stay). */
  modelChanged(): void;
}

export const createHfTrainStore = () =>
  create<HfTrainState>()((set, get) => ({
    settings: DEFAULT_HF_TRAIN,
    running: false,
    stopping: false,
    rows: [],
    evals: [],
    ended: null,
    problem: null,
    trained: false,
    downloadProblem: null,

    setSettings: (patch) => set({ settings: { ...get().settings, ...patch } }),
    started: () => set({ running: true, stopping: false, rows: [], evals: [], ended: null, problem: null, downloadProblem: null }),
    stopAsked: () => set({ stopping: true }),
    rowReceived: (msg) => set({ rows: [...get().rows, msg.row] }),
    evalReceived: (msg) => set({ evals: [...get().evals, msg.eval] }),
    finished: (msg) =>
      set({
        running: false,
        stopping: false,
        ended: { iterations: msg.iterations, stopped: msg.stopped },
        problem: msg.refusal ?? null,
        trained: msg.refusal === undefined || msg.iterations > 0,
      }),
    failed: (message) => set({ running: false, stopping: false, problem: message }),
    setDownloadProblem: (message) => set({ downloadProblem: message }),
    modelChanged: () => set({ running: false, stopping: false, rows: [], evals: [], ended: null, problem: null, trained: false, downloadProblem: null }),
  }));

export const useHfTrain = createHfTrainStore();
