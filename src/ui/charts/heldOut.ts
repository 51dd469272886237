// The held-out evaluation curve: which of a task's evaluation metrics is its headline (what the
// preset cards promise), and the chart series of a set of runs, sampled and greedy.
import type { MetricPoint, RunRecord } from '../../store/runs.ts';
import { extract, mergeRuns, type XY } from './series.ts';

/** Headline held-out metric per task (the keys of src/tasks/*.ts `evaluate`) and its chart title. */
export const HELD_OUT_METRIC: Readonly<Record<string, { key: string; title: string }>> = {
  arithmetic: { key: 'accuracy', title: 'Held-out accuracy' },
  stop: { key: 'exact_length_rate', title: 'Held-out exact length' },
  sentiment: { key: 'positive_rate', title: 'Held-out positive rate' },
};

/** The metric to plot for a run's task; an unknown task falls back to its first sampled metric. */
export function heldOutKey(task: string, evals: readonly MetricPoint[]): string | null {
  const known = HELD_OUT_METRIC[task];
  if (known) return known.key;
  const first = evals[0] ? Object.keys(evals[0].values).find((k) => !k.startsWith('greedy_')) : undefined;
  return first ?? null;
}

/** Chart title for the runs shown: the task's own name when they share one, else a generic one. */
export function heldOutTitle(tasks: readonly string[]): string {
  const titles = new Set(tasks.map((t) => HELD_OUT_METRIC[t]?.title ?? 'Held-out score'));
  return titles.size === 1 ? [...titles][0] : 'Held-out score (each run: its task\'s metric)';
}

/** Series id of a run's greedy line (beside the run id, which is its sampled line). */
export const greedyId = (runId: string) => `${runId}::greedy`;

export interface HeldOutSeries {
  rows: Record<string, number>[];
  /** Runs with at least one point, and whether each has a greedy line. */
  lines: { run: Pick<RunRecord, 'id' | 'name' | 'color'>; greedy: boolean }[];
}

/** Rows keyed by iteration (0 = the SFT model) with a sampled and, where present, a greedy column per run. */
export function heldOutSeries(runs: readonly Pick<RunRecord, 'id' | 'name' | 'color' | 'config' | 'evals'>[]): HeldOutSeries {
  const series: { id: string; points: XY[] }[] = [];
  const lines: HeldOutSeries['lines'] = [];
  for (const r of runs) {
    const evals = r.evals ?? [];
    const key = heldOutKey(r.config.task, evals);
    if (!key) continue;
    const sampled = extract(evals, key);
    const greedy = extract(evals, `greedy_${key}`);
    if (sampled.length === 0 && greedy.length === 0) continue;
    series.push({ id: r.id, points: sampled });
    if (greedy.length > 0) series.push({ id: greedyId(r.id), points: greedy });
    lines.push({ run: { id: r.id, name: r.name, color: r.color }, greedy: greedy.length > 0 });
  }
  return { rows: mergeRuns(series), lines };
}
