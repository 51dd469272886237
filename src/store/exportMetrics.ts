// Metrics exports: a long-format CSV (one row per run × iteration, one column per metric; held-out
// evaluations as `eval_<metric>` columns on the row of the iteration count they were taken at, so
// iteration 0 holds the SFT model's) and a JSON document with each run's config, backend, budget,
// full history and evaluations.
import type { MetricName } from '../rl/metricNames.ts';
import type { MetricPoint, RunRecord } from './runs.ts';

/**
 * Text cells a spreadsheet would run as a formula (OWASP "CSV Injection"): a run name such as
 * `=HYPERLINK(...)` or `@SUM(...)` opened in Excel, LibreOffice or Google Sheets. Such a cell is
 * written with a leading apostrophe, which the spreadsheet shows as text. Numbers are never
 * touched (a negative metric stays a number).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** The text a string cell holds once neutralised: `'` before a formula-starting character. */
export function csvText(s: string): string {
  return FORMULA_START.test(s) ? `'${s}` : s;
}

function csvCell(v: string | number | undefined): string {
  if (v === undefined) return '';
  const neutralised = typeof v === 'string' && FORMULA_START.test(v);
  const s = typeof v === 'string' ? csvText(v) : String(v);
  // CR too: spreadsheet and RFC 4180 readers end a row at a bare CR as well. A neutralised cell is
  // quoted as well, as OWASP recommends.
  return neutralised || /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const EVAL_PREFIX = 'eval_';

/** A CSV column: a metric of the vocabulary (src/rl/metricNames.ts), or a held-out evaluation's, prefixed. */
export type ExportColumn = MetricName | `${typeof EVAL_PREFIX}${string}`;

/** What the CSV writes of a run: a playground run, or an own-model run's rows as metric points. */
type CsvRun = Pick<RunRecord, 'id' | 'name' | 'evals'> & { metrics: readonly MetricPoint[] };

/** One CSV row's values by column. */
type RowValues = Map<ExportColumn, number>;

/**
 * A run's rows: one per metrics message, in order, and each evaluation's values, prefixed, on the
 * last row of the same iteration (an evaluation at k scores the weights iteration k starts from,
 * the same weights that row's rollout sampled), or on a row of its own where there is none.
 */
function runRows(r: CsvRun): { iter: number; values: RowValues }[] {
  const rows = r.metrics.map((m) => ({ iter: m.iter, values: new Map(Object.entries(m.values) as [MetricName, number][]) as RowValues }));
  for (const e of r.evals ?? []) {
    let row: (typeof rows)[number] | undefined;
    for (const x of rows) if (x.iter === e.iter) row = x;
    if (!row) {
      row = { iter: e.iter, values: new Map() };
      const at = rows.findIndex((x) => x.iter > e.iter);
      rows.splice(at < 0 ? rows.length : at, 0, row);
    }
    for (const [k, v] of Object.entries(e.values)) row.values.set(`${EVAL_PREFIX}${k}`, v);
  }
  return rows;
}

export function metricsToCsv(runs: readonly CsvRun[]): string {
  const perRun = runs.map((r) => ({ r, rows: runRows(r) }));
  const keys = new Set<ExportColumn>();
  for (const { rows } of perRun) for (const m of rows) for (const k of m.values.keys()) keys.add(k);
  // `iter` is a column of its own; a metric of that name would only repeat it.
  keys.delete('iter');
  const cols = [...keys].sort();
  const lines = [['run_id', 'run_name', 'iter', ...cols].map(csvCell).join(',')];
  for (const { r, rows } of perRun) {
    for (const m of rows) {
      lines.push([csvCell(r.id), csvCell(r.name), String(m.iter), ...cols.map((c) => csvCell(m.values.get(c)))].join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

export function metricsToJson(runs: readonly RunRecord[]): string {
  return JSON.stringify(
    {
      format: 'ppo-playground-metrics',
      version: 1,
      exportedAt: new Date().toISOString(),
      conventions: 'metric names follow verl/TRL (snake_case); see docs/algorithms.md, Numerical conventions, for the estimator conventions',
      runs: runs.map((r) => ({
        id: r.id,
        name: r.name,
        backend: r.backend,
        ...(r.backends ? { backends: r.backends } : {}),
        createdAt: r.createdAt,
        config: r.config,
        ...(r.preset ? { preset: r.preset } : {}),
        ...(r.budget ? { budget: r.budget } : {}),
        metrics: r.metrics,
        evals: r.evals ?? [],
      })),
    },
    null,
    2,
  );
}
