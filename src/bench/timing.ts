// Benchmark helpers: median of repeats after warm-up, structural counters per call, tables.
import type { Backend } from '../backend/backend.ts';
import { diffCounters, zeroCounters, type GpuCounters } from '../gpu/recorder.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';

export interface Timed {
  medianMs: number;
  /** Counter deltas of one call (dispatches, submits, readbacks, copies, uploads, bytes each way). */
  perCall: GpuCounters;
}

/** Waits for every submitted command on the backend (no-op on the CPU). */
export async function settle(be: Backend): Promise<void> {
  be.flush();
  if (be instanceof WebGpuBackend) await be.rt.device.queue.onSubmittedWorkDone();
}

/**
 * Times `call` (which records work and may return tensors to dispose) until the GPU is idle.
 * The median over `repeats` after `warmup` calls; counters are taken from the last call.
 */
export async function timeIt(be: Backend, call: () => unknown | Promise<unknown>, repeats = 7, warmup = 2): Promise<Timed> {
  const times: number[] = [];
  let perCall = zeroCounters();
  for (let i = 0; i < warmup + repeats; i++) {
    await settle(be);
    const before = { ...be.counters() };
    const t0 = performance.now();
    await call();
    await settle(be);
    const t1 = performance.now();
    perCall = diffCounters(before, be.counters());
    if (i >= warmup) times.push(t1 - t0);
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)], perCall };
}

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => `| ${r.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(cells[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x); // counts
  if (Math.abs(x) >= 100) return x.toFixed(0);
  if (Math.abs(x) >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}
