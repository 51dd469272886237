// The runs: every run's record (config snapshot, metric history, evaluations), the comparison the
// charts draw (comparisons.ts), the run training now, each run's latest batch for the teaching views
// and the run they show; with the actions that apply the worker's per-run messages (eval, samples,
// ratios; metrics arrive batched through metricFeed.ts).
import type { StateCreator } from 'zustand';
import type { WorkerToPage } from '../../worker/protocol.ts';
import { keepBatches, shownRunId, withBatch, type BatchRatios, type BatchSamples, type RunBatch, type RunBatches } from '../batches.ts';
import { hideAll, latestComparison, showOnly, toggled, withNewRun } from '../comparisons.ts';
import { defaultRunName, makeRunId, switchRunBackend, truncateRunRecord, type EvalPoint, type MetricPoint, type RunRecord } from '../runs.ts';
import type { BackendChoice } from '../../worker/protocol.ts';
import type { RecordedRun } from '../runFile.ts';
import type { ConfigSlice } from './configSlice.ts';
import type { PpoConfig } from '../../rl/config.ts';
import type { OwnModelBatch } from '../ownModelBatches.ts';

/** What a new run is started as (a preset arm's label and budget); all optional. */
export interface RunStart {
  name?: string;
  budget?: number | null;
  preset?: string | null;
}

export interface RunsSlice {
  runs: RunRecord[];
  /** The comparison new runs join (comparisons.ts): the charts show its runs, and older ones when picked. */
  comparison: number;
  activeRunId: string | null;
  /** Every run's latest iteration for the teaching views (batches.ts), by run id; saved with the runs. */
  batches: RunBatches;
  /** The run whose batch the student picked in the teaching views; null follows the run training. */
  viewRunId: string | null;
  /** The run whose batch the teaching views show now (shownRunId), and that batch's samples and ratios. */
  batchRunId: string | null;
  samples: BatchSamples | null;
  ratios: BatchRatios | null;
  /** The own-model run's batches (ownModelBatches.ts): shown when picked, or when no playground run has one. */
  ownBatches: readonly OwnModelBatch[];
  /** EMA smoothing weight in [0, 0.99] for the charts (0 = raw). */
  smoothing: number;

  /** Starts a new run record from the current config and makes it active. */
  beginRun(start?: RunStart): RunRecord;
  /**
   * A run read from a run file (`file` its name), added as a new run of the current comparison with
   * its batch; the teaching views show it. The run training, if any, goes on untouched.
   */
  addRecordedRun(rec: RecordedRun, file: string): RunRecord;
  /** A recorded run trains here from now on (Continue training): it is no longer marked recorded. */
  liveAgain(id: string): void;
  /** No run is active any more (it stays in the list). */
  closeRun(): void;
  appendMetrics(runId: string, points: readonly MetricPoint[]): void;
  appendEval(runId: string, point: EvalPoint): void;
  /** The latest samples / ratios of run `runId` (each replaces that run's previous iteration). */
  setSamples(runId: string, s: BatchSamples): void;
  setRatios(runId: string, r: BatchRatios): void;
  /** The teaching views show run `id`'s batch (a playground run's or an own-model batch's); null: the run training (or the newest). */
  viewRun(id: string | null): void;
  /** The own-model batches the views can show now (the inspector's traces changed). */
  setOwnBatches(batches: readonly OwnModelBatch[]): void;
  /** Batches read back after a reload; those of runs the store does not hold are dropped. */
  restoreBatches(batches: Record<string, RunBatch>): void;
  toggleRun(id: string): void;
  renameRun(id: string, name: string): void;
  deleteRun(id: string): void;
  restoreRuns(runs: RunRecord[]): void;
  /** A new comparison: every run leaves the charts (they stay in the list), and the runs begun next are drawn on their own. */
  newComparison(): void;
  /** Comparison `id` again (a "Run both" resumed after a reload): its runs on the charts, the others hidden. */
  showComparison(id: number): void;
  /** Deletes every run but the active one. */
  clearRuns(): void;
  setSmoothing(x: number): void;
  /** Makes an existing run the active one again (resume): later metrics append to it. */
  activateRun(id: string): void;
  /** Keeps a run's metrics before iteration `iter` and evaluations up to it (a resumed or replayed run goes on from there). */
  truncateRun(id: string, iter: number): void;
  /** The run trains on `backend` from iteration `fromIter` on (its record says so from there). */
  setRunBackend(id: string, backend: BackendChoice, fromIter: number): void;
  /** The run's saved config takes the edited reward function (it trains with it from the next iteration). */
  setRunRewardFunction(id: string, source: string): void;

  /** The worker's `eval`: a held-out evaluation of the active run (one begins if none is). */
  evalReceived(msg: Extract<WorkerToPage, { type: 'eval' }>): void;
  /** The worker's `samples` of the active run's latest iteration. */
  samplesReceived(msg: Extract<WorkerToPage, { type: 'samples' }>): void;
  /**
   * The worker's `ratios`: they join the active run's batch with the clip settings they were
   * trained with, the worker's, else the run's own config (it trains with the config it began
   * with, not the settings edited since).
   */
  ratiosReceived(msg: Extract<WorkerToPage, { type: 'ratios' }>): void;
}

/**
 * The batch fields that follow from the runs, the active run, the student's pick and the batches:
 * the picked own-model batch, else shownRunId's run, else the own model's newest when no
 * playground run has a batch.
 */
export function shownBatch(st: Pick<RunsSlice, 'runs' | 'activeRunId' | 'viewRunId' | 'batches' | 'ownBatches'>): Pick<RunsSlice, 'batchRunId' | 'samples' | 'ratios'> {
  const own = (b: OwnModelBatch) => ({ batchRunId: b.id, samples: b.batch.samples, ratios: b.batch.ratios });
  const picked = st.ownBatches.find((b) => b.id === st.viewRunId);
  if (picked) return own(picked);
  const batchRunId = shownRunId(st);
  const b = batchRunId ? st.batches[batchRunId] : undefined;
  if (!b && !st.activeRunId && st.ownBatches.length > 0) return own(st.ownBatches[0]);
  return { batchRunId, samples: b?.samples ?? null, ratios: b?.ratios ?? null };
}

/** The own-model batch the views show, if the shown batch is one. */
export function shownOwnBatch(st: Pick<RunsSlice, 'batchRunId' | 'ownBatches'>): OwnModelBatch | undefined {
  return st.ownBatches.find((b) => b.id === st.batchRunId);
}

/** The settings the shown batch trained with: its run's (an own-model batch's own), else the settings now. */
export function shownConfig(st: Pick<RunsSlice, 'runs' | 'batchRunId' | 'ownBatches'> & Pick<ConfigSlice, 'config'>): PpoConfig {
  return shownOwnBatch(st)?.config ?? st.runs.find((r) => r.id === st.batchRunId)?.config ?? st.config;
}

/** Each run's record replaced by `f`'s where `f` changes it (other runs keep their identity, so their memoised series survive). */
const mapRun = (runs: RunRecord[], id: string, f: (r: RunRecord) => RunRecord) => runs.map((r) => (r.id === id ? f(r) : r));

export const runsSlice: StateCreator<RunsSlice & ConfigSlice, [], [], RunsSlice> = (set, get) => ({
  runs: [],
  comparison: 0,
  activeRunId: null,
  batches: {},
  viewRunId: null,
  batchRunId: null,
  samples: null,
  ratios: null,
  ownBatches: [],
  smoothing: 0.6,

  beginRun(start = {}) {
    const { runs, config, backend, comparison } = get();
    const begun: Omit<RunRecord, 'color'> = {
      id: makeRunId(),
      name: start.name ?? defaultRunName(config, runs.length + 1),
      visible: true,
      comparison,
      config,
      backend,
      createdAt: Date.now(),
      metrics: [],
      evals: [],
      ...(start.budget ? { budget: start.budget } : {}),
      ...(start.preset ? { preset: start.preset } : {}),
    };
    // The views follow the new run (empty until its first batch); the student's pick ends here.
    const next = { runs: withNewRun(runs, begun), activeRunId: begun.id, viewRunId: null, batches: get().batches };
    set({ ...next, ...shownBatch({ ...get(), ...next }) });
    return next.runs.at(-1)!;
  },
  addRecordedRun(rec, file) {
    const { runs, comparison, batches } = get();
    const added: Omit<RunRecord, 'color'> = { ...rec.run, id: makeRunId(), visible: true, comparison, recorded: { file, savedAt: rec.savedAt } };
    const next = {
      runs: withNewRun(runs, added),
      viewRunId: added.id,
      batches: rec.batch ? withBatch(batches, added.id, rec.batch) : batches,
    };
    set({ ...next, ...shownBatch({ ...get(), ...next }) });
    return next.runs.at(-1)!;
  },
  liveAgain: (id) =>
    set({
      runs: mapRun(get().runs, id, ({ recorded: _recorded, ...live }) => live),
    }),
  closeRun: () => set({ activeRunId: null, ...shownBatch({ ...get(), activeRunId: null }) }),
  appendMetrics(runId, points) {
    if (points.length === 0) return;
    set({ runs: mapRun(get().runs, runId, (r) => ({ ...r, metrics: r.metrics.concat(points) })) });
  },
  appendEval(runId, point) {
    // A repeated iteration (an evaluation re-sent after a restore) replaces the earlier one.
    set({ runs: mapRun(get().runs, runId, (r) => ({ ...r, evals: [...(r.evals ?? []).filter((e) => e.iter !== point.iter), point].sort((a, b) => a.iter - b.iter) })) });
  },
  setSamples(runId, samples) {
    const batches = withBatch(get().batches, runId, { samples });
    set({ batches, ...shownBatch({ ...get(), batches }) });
  },
  setRatios(runId, ratios) {
    const batches = withBatch(get().batches, runId, { ratios });
    set({ batches, ...shownBatch({ ...get(), batches }) });
  },
  viewRun(id) {
    const { runs, ownBatches } = get();
    const viewRunId = id !== null && (runs.some((r) => r.id === id) || ownBatches.some((b) => b.id === id)) ? id : null;
    set({ viewRunId, ...shownBatch({ ...get(), viewRunId }) });
  },
  setOwnBatches(ownBatches) {
    if (ownBatches === get().ownBatches) return;
    set({ ownBatches, ...shownBatch({ ...get(), ownBatches }) });
  },
  restoreBatches(saved) {
    const { runs, batches: held } = get();
    // A batch the page already holds is newer than the saved one (its run trained since the page opened).
    const batches = keepBatches({ ...saved, ...held }, new Set(runs.map((r) => r.id)));
    set({ batches, ...shownBatch({ ...get(), batches }) });
  },
  toggleRun: (id) => set({ runs: toggled(get().runs, id) }),
  renameRun: (id, name) => set({ runs: mapRun(get().runs, id, (r) => ({ ...r, name })) }),
  deleteRun(id) {
    const { runs, activeRunId, viewRunId, batches } = get();
    const left = runs.filter((r) => r.id !== id);
    const next = {
      runs: left,
      activeRunId: activeRunId === id ? null : activeRunId,
      viewRunId: viewRunId === id ? null : viewRunId,
      batches: keepBatches(batches, new Set(left.map((r) => r.id))),
    };
    set({ ...next, ...shownBatch({ ...get(), ...next }) });
  },
  restoreRuns: (runs) => set({ runs, comparison: Math.max(get().comparison, latestComparison(runs)), ...shownBatch({ ...get(), runs }) }),
  newComparison: () => set({ runs: hideAll(get().runs), comparison: Math.max(get().comparison, latestComparison(get().runs)) + 1 }),
  showComparison: (id) => set({ runs: showOnly(get().runs, id), comparison: id }),
  clearRuns() {
    const { runs, activeRunId, viewRunId, batches } = get();
    const left = runs.filter((r) => r.id === activeRunId);
    const next = { runs: left, activeRunId, viewRunId: viewRunId === activeRunId ? viewRunId : null, batches: keepBatches(batches, new Set(left.map((r) => r.id))) };
    set({ ...next, ...shownBatch({ ...get(), ...next }) });
  },
  setSmoothing: (smoothing) => set({ smoothing: Math.min(0.99, Math.max(0, smoothing)) }),
  activateRun(id) {
    if (!get().runs.some((r) => r.id === id)) return;
    // The run's own last batch stays on show until its next iteration replaces it.
    set({ activeRunId: id, viewRunId: null, ...shownBatch({ ...get(), activeRunId: id, viewRunId: null }) });
  },
  truncateRun: (id, iter) => set({ runs: mapRun(get().runs, id, (r) => truncateRunRecord(r, iter)) }),
  setRunBackend: (id, backend, fromIter) => set({ runs: mapRun(get().runs, id, (r) => switchRunBackend(r, backend, fromIter)) }),
  setRunRewardFunction: (id, source) => set({ runs: mapRun(get().runs, id, (r) => ({ ...r, config: { ...r.config, rewardFunction: source } })) }),

  evalReceived(msg) {
    const runId = get().activeRunId ?? get().beginRun().id;
    get().appendEval(runId, { iter: msg.iter, values: { ...msg.values }, prompts: msg.prompts, seconds: msg.seconds });
  },
  samplesReceived(msg) {
    get().setSamples(get().activeRunId ?? get().beginRun().id, { iter: msg.iter, rows: msg.rows });
  },
  ratiosReceived(msg) {
    const runId = get().activeRunId ?? get().beginRun().id;
    const config = get().runs.find((r) => r.id === runId)?.config ?? get().config;
    const clip = msg.clip ?? { clipLow: config.clipLow, clipHigh: config.clipHigh, dualClip: config.dualClip };
    get().setRatios(runId, { iter: msg.iter, ratios: msg.ratios, advantages: msg.advantages, seqRatios: msg.seqRatios, seqAdvantages: msg.seqAdvantages, clip });
  },
});
