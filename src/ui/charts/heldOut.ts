// The held-out evaluation curve: which of a task's evaluation metrics is its headline (what the
// preset cards promise), and the chart series of a set of runs, sampled and greedy. Titles and the
// caption's words are in the `charts` namespace (heldOut.*), looked up at each call.
import { formatNumber, t } from '../../i18n/index.ts';
import type { PpoConfig } from '../../rl/config.ts';
import type { MetricPoint, RunRecord } from '../../store/runs.ts';
import { passAtKKey } from '../../rl/passAtK.ts';
import { EVAL_SAMPLES_PER_PROMPT, evalSize } from '../../worker/evalSchedule.ts';
import { extract, mergeRuns, type XY } from './series.ts';

/** Headline held-out metric per task (the keys of src/tasks/*.ts `evaluate`) and its chart title (charts:heldOut.titles.<title>). */
export const HELD_OUT_METRIC: Readonly<Record<string, { key: string; title: string }>> = {
  arithmetic: { key: 'accuracy', title: 'accuracy' },
  stop: { key: 'exact_length_rate', title: 'exactLength' },
  sentiment: { key: 'positive_rate', title: 'positiveRate' },
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
  const titles = new Set(tasks.map((task) => HELD_OUT_METRIC[task]?.title ?? 'score'));
  return t(`charts:heldOut.titles.${titles.size === 1 ? [...titles][0] : 'mixed'}`);
}

/** Series id of a run's greedy line (beside the run id, which is its sampled line). */
export const greedyId = (runId: string) => `${runId}::greedy`;

/** Series id of a run's pass@k line (k = the page's draws per prompt), on tasks with a correctness notion. */
export const passId = (runId: string) => `${runId}::pass`;

/** The evaluation key of the page's pass@k: `pass_at_4` for 4 draws per prompt. */
export const HELD_OUT_PASS_KEY = passAtKKey(EVAL_SAMPLES_PER_PROMPT);

export interface HeldOutSeries {
  rows: Record<string, number>[];
  /** Runs with at least one point, and whether each has a greedy line and a pass@k line. */
  lines: { run: Pick<RunRecord, 'id' | 'name' | 'color'>; greedy: boolean; pass: boolean }[];
}

/** Rows keyed by iteration (0 = the SFT model) with a sampled and, where present, a greedy and a pass@k column per run. */
export function heldOutSeries(runs: readonly Pick<RunRecord, 'id' | 'name' | 'color' | 'config' | 'evals'>[]): HeldOutSeries {
  const series: { id: string; points: XY[] }[] = [];
  const lines: HeldOutSeries['lines'] = [];
  for (const r of runs) {
    const evals = r.evals ?? [];
    const key = heldOutKey(r.config.task, evals);
    if (!key) continue;
    const sampled = extract(evals, key);
    const greedy = extract(evals, `greedy_${key}`);
    // pass@k beside the headline only where it is the same kind of number (a rate of correct answers).
    const pass = key === HELD_OUT_METRIC.arithmetic.key ? extract(evals, HELD_OUT_PASS_KEY) : [];
    if (sampled.length === 0 && greedy.length === 0) continue;
    series.push({ id: r.id, points: sampled });
    if (greedy.length > 0) series.push({ id: greedyId(r.id), points: greedy });
    if (pass.length > 0) series.push({ id: passId(r.id), points: pass });
    lines.push({ run: { id: r.id, name: r.name, color: r.color }, greedy: greedy.length > 0, pass: pass.length > 0 });
  }
  return { rows: mergeRuns(series), lines };
}

/** "38 prompts never trained on, scored every 10 iterations" for one schedule. */
function schedule(prompts: number, evalEvery: number): string {
  const count = t('charts:heldOut.prompts', { count: prompts });
  return evalEvery > 0 ? t('charts:heldOut.every', { prompts: count, count: evalEvery }) : t('charts:heldOut.off', { prompts: count });
}

/**
 * What the held-out caption says about the evaluations of the runs shown: each run's own prompt
 * count (what its evaluations recorded, else what its config gives) and schedule, in one phrase
 * when they agree; with no run, what the current settings will do. Plus the duration of the
 * latest evaluation of `latestOf` (the run training now, else the last run shown that has one).
 */
export function heldOutCaption(
  runs: readonly Pick<RunRecord, 'name' | 'config' | 'evals'>[],
  current: Pick<PpoConfig, 'promptsPerBatch' | 'samplesPerPrompt' | 'evalEvery'>,
  latestOf?: Pick<RunRecord, 'evals'> | null,
): { scope: string; took: string | null } {
  const each = runs.map((r) => {
    const recorded = (r.evals ?? []).map((e) => e.prompts).filter((n): n is number => Number.isInteger(n) && (n as number) > 0);
    const prompts = recorded.length > 0 ? recorded[recorded.length - 1] : evalSize(r.config).count;
    return { name: r.name, text: schedule(prompts, r.config.evalEvery) };
  });
  let scope: string;
  if (each.length === 0) scope = t('charts:heldOut.currentSettings', { schedule: schedule(evalSize(current).count, current.evalEvery) });
  else if (new Set(each.map((e) => e.text)).size === 1) scope = each[0].text;
  else scope = each.map((e) => t('charts:heldOut.runScope', { name: e.name, schedule: e.text })).join(t('charts:heldOut.runSeparator'));
  const withTime = latestOf?.evals?.filter((e) => typeof e.seconds === 'number' && Number.isFinite(e.seconds)) ?? [];
  const last = withTime[withTime.length - 1];
  const took = last ? t('charts:heldOut.took', { count: last.iter, duration: formatSeconds(last.seconds!) }) : null;
  return { scope, took };
}

/** "0.84 s", "3.2 s", "12 s", "2 min 05 s". */
export function formatSeconds(s: number): string {
  if (s < 1) return t('charts:heldOut.seconds', { s: s.toFixed(2) });
  if (s < 10) return t('charts:heldOut.seconds', { s: s.toFixed(1) });
  if (s < 60) return t('charts:heldOut.seconds', { s: String(Math.round(s)) });
  const r = Math.round(s);
  return t('charts:heldOut.minutes', { m: formatNumber(Math.floor(r / 60)), s: String(r % 60).padStart(2, '0') });
}
