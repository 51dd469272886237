// Turning metric histories into chart series: EMA smoothing, then LTTB downsampling to a fixed
// point budget so a 10 000-iteration run draws as fast as a 100-iteration one.

export interface XY {
  x: number;
  y: number;
}

export const MAX_POINTS = 300;

/** The finite values of `key` in each point, by iteration: a metric of a run, or a held-out evaluation's. */
export function extract<K extends string>(metrics: readonly { iter: number; values: Partial<Record<K, number>> }[], key: K): XY[] {
  const out: XY[] = [];
  for (const m of metrics) {
    const y = m.values[key];
    if (typeof y === 'number' && Number.isFinite(y)) out.push({ x: m.iter, y });
  }
  return out;
}

/**
 * Debiased exponential moving average (as TensorBoard draws it): the first points are not
 * pulled towards zero. weight 0 returns the input.
 */
export function ema(points: readonly XY[], weight: number): XY[] {
  if (weight <= 0) return points.slice();
  let acc = 0;
  let norm = 0;
  return points.map((p) => {
    acc = acc * weight + (1 - weight) * p.y;
    norm = norm * weight + (1 - weight);
    return { x: p.x, y: acc / norm };
  });
}

/**
 * Largest-Triangle-Three-Buckets (Steinarsson 2013): keeps first and last points and, per bucket,
 * the point forming the largest triangle with its neighbours, so peaks and dips survive.
 */
export function lttb(points: readonly XY[], threshold: number = MAX_POINTS): XY[] {
  const n = points.length;
  if (threshold >= n || threshold < 3) return points.slice();
  const out: XY[] = [points[0]];
  const every = (n - 2) / (threshold - 2);
  let a = 0;
  for (let i = 0; i < threshold - 2; i++) {
    const avgStart = Math.floor((i + 1) * every) + 1;
    const avgEnd = Math.min(Math.floor((i + 2) * every) + 1, n);
    let avgX = 0;
    let avgY = 0;
    for (let j = avgStart; j < avgEnd; j++) {
      avgX += points[j].x;
      avgY += points[j].y;
    }
    const len = Math.max(1, avgEnd - avgStart);
    avgX /= len;
    avgY /= len;
    const start = Math.floor(i * every) + 1;
    const end = Math.floor((i + 1) * every) + 1;
    let best = start;
    let bestArea = -1;
    for (let j = start; j < end; j++) {
      const area = Math.abs((points[a].x - avgX) * (points[j].y - points[a].y) - (points[a].x - points[j].x) * (avgY - points[a].y));
      if (area > bestArea) {
        bestArea = area;
        best = j;
      }
    }
    out.push(points[best]);
    a = best;
  }
  out.push(points[n - 1]);
  return out;
}

/** Rows keyed by iteration with one column per run id (recharts' data shape for overlaid lines). */
export function mergeRuns(series: readonly { id: string; points: readonly XY[] }[]): Record<string, number>[] {
  const rows = new Map<number, Record<string, number>>();
  for (const s of series) {
    for (const p of s.points) {
      let row = rows.get(p.x);
      if (!row) {
        row = { iter: p.x };
        rows.set(p.x, row);
      }
      row[s.id] = p.y;
    }
  }
  return [...rows.values()].sort((a, b) => a.iter - b.iter);
}

/**
 * About `count` evenly spaced round ticks (1, 2, 2.5, 5 × 10^k) covering [lo, hi]; a flat
 * series gets a band around its value instead of float-noise ticks.
 */
export function niceTicks(lo: number, hi: number, count = 4): number[] {
  if (!(hi - lo > Math.max(Math.abs(lo), Math.abs(hi), 1e-12) * 1e-6)) {
    const pad = Math.abs(lo) > 1e-12 ? Math.abs(lo) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  // Integer multiples of step, not a running sum: the tick at zero is exactly 0, never −1.4e-17.
  const first = Math.floor(lo / step);
  const ticks: number[] = [];
  for (let k = first; k * step < hi + step * 0.999; k++) ticks.push(Number((k * step).toPrecision(12)));
  return ticks;
}
