// When the page's start-up is over: the work that can wait for it (the offline copy's download,
// pwa.ts) then takes no CPU from the first chart point. On a software adapter the service worker's
// precache (~7 MB in ~160 files) fetched and stored beside the trainer's kernel compilation made
// that compilation ~1 s slower (docs/benchmarks.md, "First chart point").
import type { BackendChoice } from '../worker/protocol.ts';
import { useApp } from './appStore.ts';
import type { GpuStatus, RunState } from './statusTypes.ts';

/** What start-up is judged on. */
export interface StartupView {
  gpu: GpuStatus['kind'];
  backend: BackendChoice;
  /** The trainer worker's first kernels: null before it reports any. */
  compile: { done: number; total: number } | null;
  runState: RunState;
  /** Iterations on the page's charts, over all runs. */
  iterations: number;
}

/**
 * Over when nothing is starting on a GPU (no WebGPU, or the CPU backend chosen), or once the first
 * kernels are built and either nothing is training or an iteration arrived since the page opened
 * (`iterationsAtOpen`): a Start pressed during the warm-up keeps start-up going until its first point.
 */
export function startupOver(v: StartupView, iterationsAtOpen: number): boolean {
  if (v.gpu === 'unavailable' || v.gpu === 'error' || v.backend === 'cpu') return true;
  if (v.gpu !== 'ready' || v.compile === null || v.compile.done < v.compile.total) return false;
  return v.runState !== 'running' || v.iterations > iterationsAtOpen;
}

/** Latest call of `run` when the page never reports its start-up over (no warm-up, a stuck worker). */
export const STARTUP_FALLBACK_MS = 20_000;

const viewOf = (s: ReturnType<typeof useApp.getState>): StartupView => ({
  gpu: s.gpu.kind,
  backend: s.backend,
  compile: s.compile,
  runState: s.runState,
  iterations: s.runs.reduce((n, r) => n + r.metrics.length, 0),
});

/** Calls `run` once, when start-up is over or STARTUP_FALLBACK_MS after this call, whichever is first. */
export function afterStartup(run: () => void, fallbackMs = STARTUP_FALLBACK_MS): void {
  let done = false;
  const atOpen = viewOf(useApp.getState()).iterations;
  const finish = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    unsubscribe();
    run();
  };
  const timer = setTimeout(finish, fallbackMs);
  const unsubscribe = useApp.subscribe((s) => {
    if (startupOver(viewOf(s), atOpen)) finish();
  });
  if (startupOver(viewOf(useApp.getState()), atOpen)) finish();
}
