// Metrics exports: a long-format CSV (one row per run × iteration, one column per metric) and a
// JSON document with each run's config, backend and full history.
import type { RunRecord } from './runs.ts';

function csvCell(v: string | number | undefined): string {
  if (v === undefined) return '';
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function metricsToCsv(runs: readonly RunRecord[]): string {
  const keys = new Set<string>();
  for (const r of runs) for (const m of r.metrics) for (const k of Object.keys(m.values)) keys.add(k);
  const cols = [...keys].sort();
  const lines = [['run_id', 'run_name', 'iter', ...cols].join(',')];
  for (const r of runs) {
    for (const m of r.metrics) {
      lines.push([csvCell(r.id), csvCell(r.name), String(m.iter), ...cols.map((c) => csvCell(m.values[c]))].join(','));
    }
  }
  return lines.join('\n') + '\n';
}

export function metricsToJson(runs: readonly RunRecord[]): string {
  return JSON.stringify(
    {
      format: 'ppo-playground-metrics',
      version: 1,
      exportedAt: new Date().toISOString(),
      conventions: 'metric names follow verl/TRL (snake_case); see DESIGN.md for the estimator conventions',
      runs: runs.map((r) => ({ id: r.id, name: r.name, backend: r.backend, createdAt: r.createdAt, config: r.config, metrics: r.metrics })),
    },
    null,
    2,
  );
}
