// The page's single zustand store: WebGPU status, the editable config, the trainer's state and
// every run's metric history. Components subscribe to slices; the trainer client writes batches.
import { create, type StateCreator } from 'zustand';
import { DEFAULT_CONFIG, validateConfig, type ConfigProblem, type PpoConfig } from '../rl/config.ts';
import type { BackendChoice, RewardFunctionReport, SelftestResult, TrainerStage } from '../worker/protocol.ts';
import { keepBatches, shownRunId, withBatch, type BatchRatios, type BatchSamples, type RunBatch, type RunBatches } from './batches.ts';
import type { RewardCheck } from './rewardFunctionLink.ts';
import { defaultRunName, makeRunId, nextRunColor, switchRunBackend, truncateRunRecord, type EvalPoint, type MetricPoint, type RunRecord } from './runs.ts';

export type GpuStatus =
  | { kind: 'checking' }
  | { kind: 'ready'; result: Extract<SelftestResult, { type: 'selftest-ok' }> }
  | {
      kind: 'unavailable';
      reason: Extract<SelftestResult, { type: 'selftest-unavailable' }>['reason'];
      message: string;
      /** For 'limit-too-small': each WebGPU limit the adapter lacks, with the needed and offered values. */
      shortfalls?: NonNullable<Extract<SelftestResult, { type: 'selftest-unavailable' }>['shortfalls']>;
      /** For 'device-failed': the browser's words for why. */
      browserError?: string;
    }
  | { kind: 'error'; message: string };

export type RunState = 'idle' | 'running' | 'paused';

/** "Run both": the arms of a paired preset, trained one after the other, each as its own run. */
export interface RunSequence {
  preset: string;
  arms: { label: string; config: PpoConfig }[];
  /** The arm training now (or paused). */
  index: number;
  /** Iterations per arm. */
  budget: number;
  /** The run of the arm at `index`, once it has begun. */
  runId?: string;
  /** Why the arm in progress stopped, when a trainer error stopped it (Start retries it). */
  stoppedBy?: string;
}

/** After a reload: a "Run both" the page left unfinished, and whether its arm in progress can resume. */
export interface SequenceOffer {
  seq: RunSequence;
  /** Iterations the arm in progress had trained; its saved state's iteration when `resumable`. */
  done: number;
  /** A trainer state of the arm's run is kept: it goes on from there rather than from the start. */
  resumable: boolean;
}

/** What a new run is started as (a preset arm's label and budget); all optional. */
export interface RunStart {
  name?: string;
  budget?: number | null;
  preset?: string | null;
}

/** What the page offers after a reload: the saved trainer state of a run (the bytes stay in IndexedDB). */
export interface ResumeOffer {
  runId: string;
  runName: string;
  /** Training continues with iteration `iter` (that many are done). */
  iter: number;
  savedAt: number;
  wasRunning: boolean;
}

/** After a lost GPU device that did not come back: continue on the CPU backend (from `iter` when a state is saved). */
export interface CpuOffer {
  message: string;
  iter: number | null;
}

export interface Notice {
  tone: 'info' | 'warn' | 'error';
  text: string;
  /** Confirms what the live region has said already (the user's own Pause): shown, not announced again. */
  echo?: true;
}

export interface AppState {
  gpu: GpuStatus;
  /** The backend the user chose for training; 'cpu' after the no-WebGPU fallback button. */
  backend: BackendChoice;
  /** Only ever holds a config that passed validateConfig. */
  config: PpoConfig;
  /** Settings hidden by the classroom option `?hide=`. */
  hidden: ReadonlySet<keyof PpoConfig>;
  runState: RunState;
  stage: TrainerStage;
  trainerLabel: string | null;
  runs: RunRecord[];
  activeRunId: string | null;
  /** Every run's latest iteration for the teaching views (batches.ts), by run id; saved with the runs. */
  batches: RunBatches;
  /** The run whose batch the student picked in the teaching views; null follows the run training. */
  viewRunId: string | null;
  /** The run whose batch the teaching views show now (shownRunId), and that batch's samples and ratios. */
  batchRunId: string | null;
  samples: BatchSamples | null;
  ratios: BatchRatios | null;
  /** EMA smoothing weight in [0, 0.99] for the charts (0 = raw). */
  smoothing: number;
  notice: Notice | null;
  /** The preset last clicked (its budget applies while the config still matches it). */
  preset: string | null;
  /** `?budget=N` in the link: every preset's iteration budget becomes N (short classroom demos, tests). */
  budgetOverride: number | null;
  sequence: RunSequence | null;
  /** Iterations per second of the run training now, over its last few iterations; null when not measured. */
  speed: number | null;
  resume: ResumeOffer | null;
  cpuOffer: CpuOffer | null;
  sequenceOffer: SequenceOffer | null;
  /** The trainer worker's kernel compilation (WebGPU): pipelines built of all; null before it reports. */
  compile: { done: number; total: number; seconds: number } | null;
  /** A reward function from the link, shown until the visitor accepts it (then it enters the config) or keeps their own. */
  pendingRewardFunction: string | null;
  /** The worker's check of the written reward function last sent. */
  rewardCheck: RewardCheck | null;
  /** The written reward function refused a sample during training (the run paused); cleared by an edit. */
  rewardFailure: (RewardFunctionReport & { source: string }) | null;
  /** Another tab of the page owns the saved runs (tabOwner.ts): this one writes nothing and does not train. */
  readOnlyTab: boolean;

  setGpu(gpu: GpuStatus): void;
  setBackend(b: BackendChoice): void;
  /** Applies a whole config if valid; returns the problems (and changes nothing) otherwise. */
  applyConfig(next: PpoConfig): ConfigProblem[];
  /** Applies one field if the resulting config is valid. */
  setField<K extends keyof PpoConfig>(key: K, value: PpoConfig[K]): ConfigProblem[];
  setHidden(keys: Iterable<keyof PpoConfig>): void;
  setRunState(s: RunState): void;
  setStage(s: TrainerStage): void;
  setTrainerLabel(label: string | null): void;
  /** Starts a new run record from the current config and makes it active. */
  beginRun(start?: RunStart): RunRecord;
  endRun(): void;
  appendMetrics(runId: string, points: readonly MetricPoint[]): void;
  appendEval(runId: string, point: EvalPoint): void;
  setPreset(name: string | null): void;
  setBudgetOverride(n: number | null): void;
  setSequence(s: RunSequence | null): void;
  setSpeed(itPerSec: number | null): void;
  /** The latest samples / ratios of run `runId` (each replaces that run's previous iteration). */
  setSamples(runId: string, s: BatchSamples): void;
  setRatios(runId: string, r: BatchRatios): void;
  /** The teaching views show run `id`'s batch; null: the run training (or the newest). */
  viewRun(id: string | null): void;
  /** Batches read back after a reload; those of runs the store does not hold are dropped. */
  restoreBatches(batches: Record<string, RunBatch>): void;
  toggleRun(id: string): void;
  renameRun(id: string, name: string): void;
  deleteRun(id: string): void;
  restoreRuns(runs: RunRecord[]): void;
  setSmoothing(x: number): void;
  setNotice(n: Notice | null): void;
  setReadOnlyTab(readOnly: boolean): void;
  setResume(r: ResumeOffer | null): void;
  setCpuOffer(o: CpuOffer | null): void;
  setCompile(c: AppState['compile']): void;
  setSequenceOffer(o: SequenceOffer | null): void;
  /** Makes an existing run the active one again (resume): later metrics append to it. */
  activateRun(id: string): void;
  /** Keeps a run's metrics before iteration `iter` and evaluations up to it (a resumed or replayed run goes on from there). */
  truncateRun(id: string, iter: number): void;
  /** The run trains on `backend` from iteration `fromIter` on (its record says so from there). */
  setRunBackend(id: string, backend: BackendChoice, fromIter: number): void;
  setPendingRewardFunction(source: string | null): void;
  /** "Run this reward function": the link's function enters the config. */
  acceptRewardFunction(): ConfigProblem[];
  setRewardCheck(c: RewardCheck | null): void;
  setRewardFailure(f: AppState['rewardFailure']): void;
  /** The run's saved config takes the edited reward function (it trains with it from the next iteration). */
  setRunRewardFunction(id: string, source: string): void;
}

/** The batch fields that follow from the runs, the active run, the student's pick and the batches. */
function shown(st: Pick<AppState, 'runs' | 'activeRunId' | 'viewRunId' | 'batches'>): Pick<AppState, 'batchRunId' | 'samples' | 'ratios'> {
  const batchRunId = shownRunId(st);
  const b = batchRunId ? st.batches[batchRunId] : undefined;
  return { batchRunId, samples: b?.samples ?? null, ratios: b?.ratios ?? null };
}

const appState: StateCreator<AppState> = (set, get) => ({
  gpu: { kind: 'checking' },
  backend: 'webgpu',
  config: DEFAULT_CONFIG,
  hidden: new Set(),
  runState: 'idle',
  stage: 'idle',
  trainerLabel: null,
  runs: [],
  activeRunId: null,
  batches: {},
  viewRunId: null,
  batchRunId: null,
  samples: null,
  ratios: null,
  smoothing: 0.6,
  notice: null,
  preset: null,
  budgetOverride: null,
  sequence: null,
  speed: null,
  resume: null,
  cpuOffer: null,
  compile: null,
  sequenceOffer: null,
  pendingRewardFunction: null,
  rewardCheck: null,
  rewardFailure: null,
  readOnlyTab: false,

  setGpu: (gpu) => set({ gpu }),
  setBackend: (backend) => set({ backend }),
  applyConfig(next) {
    const problems = validateConfig(next as PpoConfig & Record<string, unknown>);
    if (problems.length === 0) set({ config: next });
    return problems;
  },
  setField(key, value) {
    return get().applyConfig({ ...get().config, [key]: value });
  },
  setHidden: (keys) => set({ hidden: new Set(keys) }),
  setRunState: (runState) => set({ runState }),
  setStage: (stage) => set({ stage }),
  setTrainerLabel: (trainerLabel) => set({ trainerLabel }),
  beginRun(start = {}) {
    const { runs, config, backend } = get();
    const run: RunRecord = {
      id: makeRunId(),
      name: start.name ?? defaultRunName(config, runs.length + 1),
      color: nextRunColor(runs),
      visible: true,
      config,
      backend,
      createdAt: Date.now(),
      metrics: [],
      evals: [],
      ...(start.budget ? { budget: start.budget } : {}),
      ...(start.preset ? { preset: start.preset } : {}),
    };
    // The views follow the new run (empty until its first batch); the student's pick ends here.
    const next = { runs: [...runs, run], activeRunId: run.id, viewRunId: null, batches: get().batches };
    set({ ...next, ...shown(next) });
    return run;
  },
  endRun: () => set({ activeRunId: null, stage: 'idle', runState: 'idle', ...shown({ ...get(), activeRunId: null }) }),
  appendMetrics(runId, points) {
    if (points.length === 0) return;
    // New array identities only for the run that changed, so other runs' memoised series survive.
    set({ runs: get().runs.map((r) => (r.id === runId ? { ...r, metrics: r.metrics.concat(points) } : r)) });
  },
  appendEval(runId, point) {
    // A repeated iteration (an evaluation re-sent after a restore) replaces the earlier one.
    set({
      runs: get().runs.map((r) => (r.id === runId ? { ...r, evals: [...(r.evals ?? []).filter((e) => e.iter !== point.iter), point].sort((a, b) => a.iter - b.iter) } : r)),
    });
  },
  setPreset: (preset) => set({ preset }),
  setBudgetOverride: (budgetOverride) => set({ budgetOverride }),
  setSequence: (sequence) => set({ sequence }),
  setSpeed: (speed) => set({ speed }),
  setSamples(runId, samples) {
    const batches = withBatch(get().batches, runId, { samples });
    set({ batches, ...shown({ ...get(), batches }) });
  },
  setRatios(runId, ratios) {
    const batches = withBatch(get().batches, runId, { ratios });
    set({ batches, ...shown({ ...get(), batches }) });
  },
  viewRun(id) {
    const viewRunId = id !== null && get().runs.some((r) => r.id === id) ? id : null;
    set({ viewRunId, ...shown({ ...get(), viewRunId }) });
  },
  restoreBatches(saved) {
    const { runs, batches: held } = get();
    // A batch the page already holds is newer than the saved one (its run trained since the page opened).
    const batches = keepBatches({ ...saved, ...held }, new Set(runs.map((r) => r.id)));
    set({ batches, ...shown({ ...get(), batches }) });
  },
  toggleRun: (id) => set({ runs: get().runs.map((r) => (r.id === id ? { ...r, visible: !r.visible } : r)) }),
  renameRun: (id, name) => set({ runs: get().runs.map((r) => (r.id === id ? { ...r, name } : r)) }),
  deleteRun(id) {
    const { runs, activeRunId, viewRunId, batches } = get();
    const left = runs.filter((r) => r.id !== id);
    const next = {
      runs: left,
      activeRunId: activeRunId === id ? null : activeRunId,
      viewRunId: viewRunId === id ? null : viewRunId,
      batches: keepBatches(batches, new Set(left.map((r) => r.id))),
    };
    set({ ...next, ...shown(next) });
  },
  restoreRuns: (runs) => set({ runs, ...shown({ ...get(), runs }) }),
  setSmoothing: (smoothing) => set({ smoothing: Math.min(0.99, Math.max(0, smoothing)) }),
  setNotice: (notice) => set({ notice }),
  setReadOnlyTab: (readOnlyTab) => set({ readOnlyTab }),
  setResume: (resume) => set({ resume }),
  setCpuOffer: (cpuOffer) => set({ cpuOffer }),
  setCompile: (compile) => set({ compile }),
  setSequenceOffer: (sequenceOffer) => set({ sequenceOffer }),
  activateRun(id) {
    if (!get().runs.some((r) => r.id === id)) return;
    // The run's own last batch stays on show until its next iteration replaces it.
    set({ activeRunId: id, viewRunId: null, ...shown({ ...get(), activeRunId: id, viewRunId: null }) });
  },
  truncateRun(id, iter) {
    set({ runs: get().runs.map((r) => (r.id === id ? truncateRunRecord(r, iter) : r)) });
  },
  setRunBackend(id, backend, fromIter) {
    set({ runs: get().runs.map((r) => (r.id === id ? switchRunBackend(r, backend, fromIter) : r)) });
  },
  setPendingRewardFunction: (pendingRewardFunction) => set({ pendingRewardFunction }),
  acceptRewardFunction() {
    const pending = get().pendingRewardFunction;
    if (pending === null) return [];
    const problems = get().setField('rewardFunction', pending);
    if (problems.length === 0) set({ pendingRewardFunction: null });
    return problems;
  },
  setRewardCheck: (rewardCheck) => set({ rewardCheck }),
  setRewardFailure: (rewardFailure) => set({ rewardFailure }),
  setRunRewardFunction(id, source) {
    set({ runs: get().runs.map((r) => (r.id === id ? { ...r, config: { ...r.config, rewardFunction: source } } : r)) });
  },
});

/** A fresh store: the page has one, `useApp`; tests make their own. */
export const createAppStore = () => create<AppState>()(appState);

export const useApp = createAppStore();
