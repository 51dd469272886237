// Run records: one per training run (config snapshot + metric history), overlaid in the charts.
import type { PpoConfig } from '../rl/config.ts';
import type { MetricValues } from '../rl/metricNames.ts';
import { t } from '../i18n/index.ts';
import type { BackendChoice } from '../worker/protocol.ts';

/** One `metrics` message: iteration index and its values (the metric vocabulary, src/rl/metricNames.ts). */
export interface MetricPoint {
  iter: number;
  values: MetricValues;
}

/** A held-out evaluation's values: the task's own metrics (tasks/task.ts evaluate), sampled and `greedy_…`. */
export type EvalValues = Record<string, number>;

/** A held-out evaluation: its values, and (runs saved since they were recorded) its size and duration. */
export interface EvalPoint {
  /** Iterations done (0 = the SFT model). */
  iter: number;
  values: EvalValues;
  /** Held-out prompts scored (each drawn several times, plus once greedily). */
  prompts?: number;
  /** Wall-clock seconds the evaluation took in the worker. */
  seconds?: number;
}

export interface RunRecord {
  id: string;
  name: string;
  color: string;
  visible: boolean;
  config: PpoConfig;
  /** The backend the run trains on now (its latest iterations). */
  backend: BackendChoice;
  /**
   * Where the run changed backend: from iteration `fromIter` on it trained on `backend` (the first
   * entry is where it started). Absent when it never changed, e.g. until a "Continue on the CPU
   * backend" after a lost GPU device.
   */
  backends?: { fromIter: number; backend: BackendChoice }[];
  createdAt: number;
  metrics: MetricPoint[];
  /**
   * Held-out evaluations (`eval` messages): iter = iterations done (0 = the SFT model), values =
   * the task's metrics, sampled and `greedy_…`. Absent in runs saved before evaluations existed.
   */
  evals?: EvalPoint[];
  /** Iteration budget of the preset this run trains (the page stops there and shows the ETA to it). */
  budget?: number;
  /** The preset (and arm) it was started from, when it was. */
  preset?: string;
  /** The comparison it was begun in (comparisons.ts); absent in runs saved before comparisons: 0. */
  comparison?: number;
  /** A run opened from a run file (runFile.ts): shown as recorded, never trained further here. */
  recorded?: { file: string; savedAt: string };
}

/** Colour-blind-friendly palette (Okabe–Ito, minus black and yellow that vanish on white). */
export const RUN_COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#56B4E9', '#E69F00', '#6A3D9A', '#8C564B'];

/** The first colour none of `shown` (the runs on the charts) has; past eight, they repeat. */
export function nextRunColor(shown: readonly Pick<RunRecord, 'color'>[]): string {
  const used = new Set(shown.map((r) => r.color));
  return RUN_COLORS.find((c) => !used.has(c)) ?? RUN_COLORS[shown.length % RUN_COLORS.length];
}

export function makeRunId(): string {
  return `run-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** A short default name that says what differs: task, estimator and seed. */
export function defaultRunName(config: PpoConfig, index: number): string {
  // Worded once, in the language of the moment: the name is the run's, kept and shown as it was made.
  return t('common:runs.defaultName', { n: index, task: config.task, estimator: config.advantageEstimator, seed: config.seed });
}

/** The run's metrics before iteration `iter` and its evaluations up to and including it (resume, replay). */
export function truncateRunRecord(run: RunRecord, iter: number): RunRecord {
  const metrics = run.metrics.filter((p) => p.iter < iter);
  const evals = run.evals?.filter((p) => p.iter <= iter);
  if (metrics.length === run.metrics.length && evals?.length === run.evals?.length) return run;
  return { ...run, metrics, ...(evals ? { evals } : {}) };
}

/**
 * The run trains on `backend` from iteration `fromIter` on (a resume on another backend): its
 * `backend` says so, and `backends` keeps where it changed. Switches after `fromIter` (iterations
 * that will be trained again) are dropped; the same backend again changes nothing.
 */
export function switchRunBackend(run: RunRecord, backend: BackendChoice, fromIter: number): RunRecord {
  if (fromIter <= 0) return run.backend === backend && !run.backends ? run : { ...run, backend, backends: undefined };
  const kept = (run.backends ?? [{ fromIter: 0, backend: run.backend }]).filter((b) => b.fromIter < fromIter);
  const history = kept.at(-1)?.backend === backend ? kept : [...kept, { fromIter, backend }];
  const backends = history.length >= 2 ? history : undefined;
  if (run.backend === backend && JSON.stringify(run.backends) === JSON.stringify(backends)) return run;
  return { ...run, backend, backends };
}

/** "WebGPU", or "WebGPU, CPU from iteration 12" for a run that changed backend. */
export function describeRunBackend(run: Pick<RunRecord, 'backend' | 'backends'>): string {
  const name = (b: BackendChoice) => (b === 'cpu' ? 'CPU' : 'WebGPU');
  if (!run.backends || run.backends.length < 2) return name(run.backend);
  return run.backends.map((b, i) => (i === 0 ? name(b.backend) : t('common:runs.backendFrom', { backend: name(b.backend), iter: b.fromIter }))).join(t('common:runs.backendJoin'));
}
