// "Train your model with LoRA": what the panel draws of a training run of the visitor's own model —
// the settings (checked against one range table, hfTrainSettings.ts), the rows the worker posts
// per iteration, the task's held-out accuracy before and after, and how the run ended. The
// commands that send anything are in hfFlows.ts.
import { create } from 'zustand';
import { DEFAULT_HF_TRAIN, type HfAdapterInfo, type HfTrainEval, type HfTrainRow, type HfTrainSettings } from '../rl/hf/hfTrainSettings.ts';
import type { WorkerToPage } from '../worker/protocol.ts';
import type { HfRecordedRun } from './hfRunFile.ts';

export type HfAdapterSource = 'trained' | 'loaded' | 'kept' | 'recorded';

/** The adapter and training state after an iteration of the run in flight, until the page keeps it (hfFlows.ts). */
export type HfTrainCheckpoint = Omit<Extract<WorkerToPage, { type: 'hfTrainCheckpoint' }>, 'type' | 'requestId'>;

/** An earlier run of the open model whose curves the charts keep beside the current run's. */
export interface HfComparedRun {
  /** The model's label: the charts draw the open model's runs only. */
  model: string;
  settings: HfTrainSettings;
  rows: HfTrainRow[];
}

/** Earlier runs kept for the charts: the newest, after a fresh Start or Run both's next arm. */
export const COMPARED_KEPT = 3;

/**
 * The adapter kept for the open model, offered after a reload: its iterations and, when a Run both
 * was under way, the arm it is of (from 0), how many arms, and that arm's iterations still to train.
 */
export interface HfKeptOffer {
  label: string;
  iterations: number;
  runBoth?: { arm: number; arms: number; iterations: number };
}

/** A run file the visitor opened: its name and when it was saved. */
export interface RecordedFile {
  fileName: string;
  savedAt: string;
}

export interface HfTrainState {
  settings: HfTrainSettings;
  running: boolean;
  stopping: boolean;
  rows: HfTrainRow[];
  evals: HfTrainEval[];
  /** The model and settings the rows were trained with (a fresh run's at its start, a kept or loaded run's own); null with no rows. */
  runOf: { model: string; settings: HfTrainSettings } | null;
  /**
   * Earlier runs, oldest first: a fresh run or a put-on adapter's rows move the rows they replace
   * here (COMPARED_KEPT at most). A lost device or another model leaves them (each names its model).
   */
  compared: HfComparedRun[];
  /** "Run both" in progress: the arm training (from 0) of how many; null otherwise. */
  runBoth: { arm: number; arms: number } | null;
  /** How the last run ended; null before any. */
  ended: { iterations: number; stopped: boolean } | null;
  /** Why the last run could not start or failed (the worker's words). */
  problem: string | null;
  /** The model holds a trained or loaded adapter (sampling uses it; it can be downloaded and trained on). */
  trained: boolean;
  /**
   * Where the adapter the model holds came from, its settings when loaded, and whether Continue
   * carries the run's AdamW moments and critic (trained here, or kept with its training state).
   */
  adapter: { source: HfAdapterSource; info: HfAdapterInfo | null; withMoments: boolean; file?: RecordedFile } | null;
  /** The last iteration the held adapter was trained to (a continued run counts on from it). */
  iterationsDone: number;
  downloadProblem: string | null;
  /** Why a picked adapter was not loaded. */
  loadProblem: string | null;
  /** An adapter of this model kept in this browser, offered to continue (label, iterations). */
  keptOffer: HfKeptOffer | null;
  /** Why the trained adapter could not be kept for a reload (the run itself is fine). */
  keepProblem: string | null;
  /** The run's latest checkpoint not yet kept in this browser. */
  checkpoint: HfTrainCheckpoint | null;
  /**
   * A run file opened while its model is not the open one: shown as recorded until that model is
   * opened (its adapter is then put on it and its rows become the panel's) or it is closed.
   */
  recorded: (RecordedFile & { run: HfRecordedRun }) | null;
  /** What Save the run or Open a saved run last said (the file saved, or why one was refused). */
  runFileNotice: { tone: 'info' | 'error'; text: string } | null;

  setSettings(patch: Partial<HfTrainSettings>): void;
  /** A run of model `model` starts with the current settings; a continued one keeps the rows so far, a fresh one moves them to `compared`. */
  started(resume: boolean, model: string): void;
  clearCompared(): void;
  setRunBoth(at: HfTrainState['runBoth']): void;
  /** An adapter put on model `model`, with the run it was trained in when it comes with one (`kept`, and the earlier runs kept with it). */
  adapterLoaded(
    model: string,
    info: HfAdapterInfo,
    source: 'loaded' | 'kept' | 'recorded',
    kept?: { iterations: number; rows: HfTrainRow[]; evals: HfTrainEval[]; settings: HfTrainSettings; compared?: HfComparedRun[] },
    withMoments?: boolean,
    file?: RecordedFile,
  ): void;
  recordedOpened(file: RecordedFile, run: HfRecordedRun): void;
  recordedClosed(): void;
  setRunFileNotice(notice: HfTrainState['runFileNotice']): void;
  setLoadProblem(message: string | null): void;
  setKeptOffer(offer: HfKeptOffer | null): void;
  setKeepProblem(message: string | null): void;
  stopAsked(): void;
  rowReceived(msg: Extract<WorkerToPage, { type: 'hfTrainRow' }>): void;
  checkpointReceived(msg: Extract<WorkerToPage, { type: 'hfTrainCheckpoint' }>): void;
  /** The checkpoint is kept: the store lets go of its bytes. */
  checkpointTaken(): void;
  evalReceived(msg: Extract<WorkerToPage, { type: 'hfTrainEval' }>): void;
  finished(msg: Extract<WorkerToPage, { type: 'hfTrained' }>): void;
  failed(message: string): void;
  setDownloadProblem(message: string | null): void;
  /** The model went or changed: its adapter with it (the settings stay). */
  modelChanged(): void;
}

/** No run and no adapter: the state before any run, and after the model went or changed. */
const NO_RUN = {
  running: false,
  stopping: false,
  rows: [],
  evals: [],
  runOf: null,
  runBoth: null,
  ended: null,
  problem: null,
  trained: false,
  adapter: null,
  iterationsDone: 0,
  downloadProblem: null,
  loadProblem: null,
  keptOffer: null,
  keepProblem: null,
  checkpoint: null,
} as const satisfies Partial<HfTrainState>;

/** `compared` with the current rows added (they are about to be replaced), the oldest dropped past COMPARED_KEPT. */
function keptForComparison({ rows, runOf, compared }: Pick<HfTrainState, 'rows' | 'runOf' | 'compared'>): HfComparedRun[] {
  return rows.length > 0 && runOf ? [...compared, { ...runOf, rows }].slice(-COMPARED_KEPT) : compared;
}

export const createHfTrainStore = () =>
  create<HfTrainState>()((set, get) => ({
    settings: DEFAULT_HF_TRAIN,
    ...NO_RUN,
    compared: [],
    recorded: null,
    runFileNotice: null,

    setSettings: (patch) => set({ settings: { ...get().settings, ...patch } }),
    started: (resume, model) => {
      const { settings } = get();
      const kept = resume ? get().compared : keptForComparison(get());
      set({
        running: true,
        stopping: false,
        ended: null,
        problem: null,
        downloadProblem: null,
        loadProblem: null,
        // A fresh run's rows are no file's: what opening one said is past.
        ...(resume ? {} : { rows: [], evals: [], iterationsDone: 0, runOf: { model, settings }, compared: kept, runFileNotice: null }),
      });
    },
    clearCompared: () => set({ compared: [] }),
    setRunBoth: (runBoth) => set({ runBoth }),
    adapterLoaded: (model, info, source, kept, withMoments = false, file) =>
      set({
        // A kept run brings back the earlier runs drawn beside it (in place of this model's held now: the same runs after a lost device).
        compared: kept?.compared ? [...get().compared.filter((c) => c.model !== model), ...kept.compared] : keptForComparison(get()),
        trained: true,
        adapter: { source, info, withMoments, ...(file ? { file } : {}) },
        loadProblem: null,
        keptOffer: null,
        ended: null,
        problem: null,
        rows: kept?.rows ?? [],
        evals: kept?.evals ?? [],
        runOf: kept ? { model, settings: kept.settings } : null,
        iterationsDone: kept?.iterations ?? 0,
        settings: { ...(kept?.settings ?? get().settings), loraRank: info.r },
      }),
    setLoadProblem: (message) => set({ loadProblem: message }),
    recordedOpened: (file, run) => set({ recorded: { ...file, run } }),
    recordedClosed: () => set({ recorded: null }),
    setRunFileNotice: (notice) => set({ runFileNotice: notice }),
    setKeptOffer: (offer) => set({ keptOffer: offer }),
    setKeepProblem: (message) => set({ keepProblem: message }),
    stopAsked: () => set({ stopping: true }),
    rowReceived: (msg) => set({ rows: [...get().rows, msg.row] }),
    checkpointReceived: ({ iter, config, weights, state }) => set({ checkpoint: { iter, config, weights, state } }),
    checkpointTaken: () => set({ checkpoint: null }),
    // A continued run's evaluation after replaces the one before it: "before" is before any training.
    evalReceived: (msg) => set({ evals: [...get().evals.filter((e) => e.when !== msg.eval.when), msg.eval] }),
    finished: (msg) => {
      const ran = msg.iterations > 0;
      const held = get().trained;
      set({
        running: false,
        stopping: false,
        ended: { iterations: msg.iterations, stopped: msg.stopped },
        problem: msg.refusal ?? null,
        trained: held || ran || msg.refusal === undefined,
        ...(ran ? { adapter: { source: 'trained' as const, info: null, withMoments: true }, iterationsDone: get().rows.at(-1)?.iter ?? get().iterationsDone } : {}),
      });
    },
    failed: (message) => set({ running: false, stopping: false, problem: message }),
    setDownloadProblem: (message) => set({ downloadProblem: message }),
    // The run goes with the model; earlier runs stay in `compared`, each under its model (the charts draw the open one's).
    modelChanged: () => set(NO_RUN),
  }));

export const useHfTrain = createHfTrainStore();
