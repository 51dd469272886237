// Comparisons: which runs the charts overlay. A preset's "Run both" / "Run all" and a card's Start
// begin a new comparison, so its runs are drawn on their own: the older runs stay in the run list,
// hidden until picked. A run of another task never joins the charts by default (its axes and
// metrics mean something else). Colours are unique among the runs on the charts.
import { nextRunColor, type RunRecord } from './runs.ts';

/** The comparison a run was begun in (runs saved before comparisons existed: 0). */
export const comparisonOf = (r: Pick<RunRecord, 'comparison'>): number => r.comparison ?? 0;

/** The newest comparison among `runs` (0 with none). */
export function latestComparison(runs: readonly Pick<RunRecord, 'comparison'>[]): number {
  return runs.reduce((m, r) => Math.max(m, comparisonOf(r)), 0);
}

/** Every run hidden (unchanged records keep their identity, so their memoised series survive). */
export function hideAll(runs: readonly RunRecord[]): RunRecord[] {
  return runs.map((r) => (r.visible ? { ...r, visible: false } : r));
}

/** Only the runs of `comparison` on the charts. */
export function showOnly(runs: readonly RunRecord[], comparison: number): RunRecord[] {
  return withDistinctColors(runs.map((r) => (r.visible === (comparisonOf(r) === comparison) ? r : { ...r, visible: !r.visible })));
}

/**
 * The runs once `run` begins: those of another task leave the charts, and the new run takes a
 * colour none of the runs left on them has.
 */
export function withNewRun(runs: readonly RunRecord[], run: Omit<RunRecord, 'color'>): RunRecord[] {
  const kept = runs.map((r) => (r.visible && r.config.task !== run.config.task ? { ...r, visible: false } : r));
  return [...kept, { ...run, color: nextRunColor(kept.filter((r) => r.visible)) }];
}

/** Run `id` shown or hidden; shown, it takes a free colour if another run on the charts has its own. */
export function toggled(runs: readonly RunRecord[], id: string): RunRecord[] {
  return withDistinctColors(
    runs.map((r) => (r.id === id ? { ...r, visible: !r.visible } : r)),
    id,
  );
}

/**
 * Each run on the charts with a colour of its own: where two share one, the later run (or the run
 * `moved`, when it is one of them) takes the first free colour.
 */
function withDistinctColors(runs: RunRecord[], moved?: string): RunRecord[] {
  const shown = runs.filter((r) => r.visible);
  const order = moved ? [...shown.filter((r) => r.id !== moved), ...shown.filter((r) => r.id === moved)] : shown;
  const taken: Pick<RunRecord, 'color'>[] = [];
  const recolor = new Map<string, string>();
  for (const r of order) {
    if (taken.some((t) => t.color === r.color)) {
      const color = nextRunColor(taken);
      recolor.set(r.id, color);
      taken.push({ color });
    } else taken.push(r);
  }
  return recolor.size === 0 ? runs : runs.map((r) => (recolor.has(r.id) ? { ...r, color: recolor.get(r.id)! } : r));
}
