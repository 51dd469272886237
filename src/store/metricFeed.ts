// The trainer's metrics on their way into the store: batched and flushed on an animation frame at
// most every MIN_FLUSH_INTERVAL_MS, so a fast trainer cannot make the charts redraw more often than
// that; and the iterations-per-second readout from their arrival times.
import type { StoreApi } from 'zustand';
import type { AppState } from './appStore.ts';
import { speedFrom } from './presetRun.ts';
import type { MetricPoint } from './runs.ts';
import type { WorkerToPage } from '../worker/protocol.ts';

/**
 * Redrawing the ten charts costs tens of milliseconds on a slow machine (software rendering:
 * measured with `npm run bench -- --only page`), so at 10+ iterations a second a per-frame flush
 * would take every frame. Five redraws a second still look live.
 */
export const MIN_FLUSH_INTERVAL_MS = 200;
/** Hidden tabs get no animation frames: a timer this long flushes instead. */
const HIDDEN_FLUSH_MS = 250;
/** Enough iterations to smooth the rate, few enough to follow a change (an eval every 10 is inside). */
const SPEED_WINDOW = 11;

type AppStore = Pick<StoreApi<AppState>, 'getState'>;

export class MetricFeed {
  private pending: MetricPoint[] = [];
  private runId: string | null = null;
  /** The scheduled flush (a timer or animation frame id); 0 when none is. */
  private frame = 0;
  private lastFlush = 0;
  /** Arrival times (ms) of the running run's latest metrics messages. */
  private arrivals: number[] = [];

  constructor(
    private readonly store: AppStore,
    private readonly now: () => number,
  ) {}

  /** Points not yet in the store. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** The worker's `metrics`: an iteration of the active run (one begins if none is), on its way to the charts. */
  receive(msg: Extract<WorkerToPage, { type: 'metrics' }>): void {
    const s = this.store.getState();
    this.push(s.activeRunId ?? s.beginRun().id, { iter: msg.iter, values: { ...msg.values } });
    if (s.runState === 'running') this.recordArrival();
  }

  push(runId: string, point: MetricPoint): void {
    if (this.runId !== runId) {
      this.flush();
      this.runId = runId;
    }
    this.pending.push(point);
    this.schedule();
  }

  /** Moves every pending point into the store now. */
  flush(): void {
    this.frame = 0;
    if (this.runId && this.pending.length > 0) {
      this.store.getState().appendMetrics(this.runId, this.pending);
      // Only a redraw starts the interval: the empty flush a run's first point makes would hold it back.
      this.lastFlush = this.now();
    }
    this.pending = [];
  }

  /** One more iteration arrived while running: updates the speed readout. */
  recordArrival(): void {
    this.arrivals.push(this.now());
    if (this.arrivals.length > SPEED_WINDOW) this.arrivals.shift();
    this.store.getState().setSpeed(speedFrom(this.arrivals));
  }

  resetSpeed(): void {
    this.arrivals = [];
    this.store.getState().setSpeed(null);
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    const flush = () => this.flush();
    if (typeof requestAnimationFrame !== 'function' || document.hidden) {
      this.frame = setTimeout(flush, HIDDEN_FLUSH_MS) as unknown as number;
      return;
    }
    const wait = this.lastFlush + MIN_FLUSH_INTERVAL_MS - this.now();
    this.frame = wait > 0 ? (setTimeout(() => (this.frame = requestAnimationFrame(flush)), wait) as unknown as number) : requestAnimationFrame(flush);
  }
}
