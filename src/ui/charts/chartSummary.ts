// Text summaries of the charts for assistive technology: per run, the last value, where it was
// reached and which way the curve went lately ("Reward: run 1 last 0.43 at iteration 15, rising
// over the last 10 iterations"). Pure but for the language (the `charts` namespace, summary.*),
// so the wording is unit-tested.
import { formatNumber, t } from '../../i18n/index.ts';
import type { XY } from './series.ts';

export type Trend = 'rising' | 'falling' | 'flat';

/** How many of the last points the trend is judged over. */
export const TREND_WINDOW = 10;

/**
 * The trend of the last `window` points: the least-squares slope across them, as a change over the
 * window, against the spread of the whole series. A change under 5% of that spread (or of the
 * values' magnitude when the series is constant) is flat; so is a series of fewer than two points.
 */
export function trend(points: readonly XY[], window: number = TREND_WINDOW): Trend {
  const tail = points.slice(-Math.max(2, window));
  if (tail.length < 2) return 'flat';
  const n = tail.length;
  const mx = tail.reduce((s, p) => s + p.x, 0) / n;
  const my = tail.reduce((s, p) => s + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of tail) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
  }
  if (sxx === 0) return 'flat';
  const change = (sxy / sxx) * (tail[n - 1].x - tail[0].x);
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of points) {
    lo = Math.min(lo, p.y);
    hi = Math.max(hi, p.y);
  }
  const scale = hi - lo > 0 ? hi - lo : Math.max(Math.abs(my), 1e-12);
  if (Math.abs(change) < 0.05 * scale) return 'flat';
  return change > 0 ? 'rising' : 'falling';
}

/** A value as the charts' axes print it: three significant figures, exponents for the very large or small. */
export function formatValue(v: number): string {
  return Math.abs(v) >= 1000 || (Math.abs(v) < 0.01 && v !== 0) ? v.toExponential(1) : Number(v.toPrecision(3)).toString();
}

/** An iteration (axis tick, tooltip, summary): a count, grouped as the locale writes large numbers. */
export function formatIteration(x: unknown): string {
  return typeof x === 'number' ? formatNumber(x) : String(x);
}

/** One run's phrase: "run 1 last 0.43 at iteration 15, rising over the last 10 iterations"; null without points. */
export function runSummary(name: string, points: readonly XY[], unit: 'iterations' | 'evaluations' = 'iterations'): string | null {
  if (points.length === 0) return null;
  const last = points[points.length - 1];
  // The value keeps the axes' precision; the iteration is a count, grouped as the locale writes it.
  const head = t('charts:summary.head', { name, value: formatValue(last.y), iter: formatIteration(last.x) });
  if (points.length < 2) return head;
  const key = unit === 'iterations' ? 'charts:summary.trendIterations' : 'charts:summary.trendEvaluations';
  return t(key, { head, trend: t(`charts:summary.trend.${trend(points)}`), window: formatNumber(Math.min(points.length, TREND_WINDOW)) });
}

/** The chart's whole summary: its title, then each run with data; "no data yet" when none has any. */
export function chartSummary(title: string, runs: readonly { name: string; points: readonly XY[] }[], unit: 'iterations' | 'evaluations' = 'iterations'): string {
  const parts = runs.map((r) => runSummary(r.name, r.points, unit)).filter((s): s is string => s !== null);
  return parts.length === 0 ? t('charts:summary.noData', { title }) : t('charts:summary.chart', { title, runs: parts.join(t('charts:summary.runSeparator')) });
}
