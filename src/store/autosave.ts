// The active run's trainer state, kept for a resume after a reload (resume.ts has the rules), on a
// schedule of its own: every STATE_SAVE_INTERVAL_MS while the run trains, and at once on Pause, at
// the end of a budget and after a NaN restore (saveNow). The charts' path never asks for a save.
// A storage failure is reported once per run, not at every save.
import type { StoreApi } from 'zustand';
import type { AppState } from './appStore.ts';
import * as notices from './notices.ts';
import { RequestDroppedError } from './requests.ts';
import { classifyStateProblem, savedOf, STATE_SAVE_INTERVAL_MS } from './resume.ts';
import type { ResumePoints } from './runFlows.ts';
import type { TrainerConnection } from './trainerConnection.ts';

export interface AutosaveDeps {
  store: StoreApi<AppState>;
  connection: TrainerConnection;
  resumePoints: ResumePoints;
  now(): number;
  /** Whether the worker can answer for the active run now (no Reset waiting, a device to read). */
  canAsk(): boolean;
  /** Iterations received and not yet in the store; `flush` moves them there. */
  pending(): number;
  flush(): void;
}

export class Autosave {
  private timer: ReturnType<typeof setInterval> | null = null;
  private askedAt = -Infinity;
  /** The run whose storage failure was reported already. */
  private problemRun: string | null = null;

  constructor(private readonly deps: AutosaveDeps) {
    deps.store.subscribe((s, prev) => {
      if (s.runState !== prev.runState) this.follow(s.runState === 'running');
    });
  }

  /** Asks for the state now (Pause, the end of a budget, a NaN restore). */
  saveNow(): void {
    this.ask(true);
  }

  /** The state just loaded is the saved one: the next scheduled save can wait its interval. */
  markSaved(): void {
    this.askedAt = this.deps.now();
  }

  /** The worker has answered, or never will, every state request sent before `why` happened. */
  dropRequests(why: string): void {
    this.deps.connection.requests.failAll((kind) => new RequestDroppedError(kind, why), 'saveState');
  }

  private follow(running: boolean): void {
    if (running && this.timer === null) this.timer = setInterval(() => this.ask(false), STATE_SAVE_INTERVAL_MS);
    if (!running && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private ask(force: boolean): void {
    const { store, connection } = this.deps;
    const s = store.getState();
    if (!connection.exists || !this.deps.canAsk() || !s.activeRunId) return;
    const run = s.runs.find((r) => r.id === s.activeRunId);
    // A trainer exists once the run has an iteration.
    if (!run || (run.metrics.length === 0 && this.deps.pending() === 0)) return;
    const now = this.deps.now();
    // A quiet request may get no answer (no trainer yet); its time-out ends it after a minute.
    // A scheduled save right after a forced one (Pause, then Start) waits for the next tick.
    if (!force && (connection.requests.has('saveState') || now - this.askedAt < STATE_SAVE_INTERVAL_MS / 2)) return;
    this.askedAt = now;
    connection.quietRequest('saveState', { quiet: true })?.then(
      (r) => this.keep(r.iter, r.bytes),
      () => {}, // a failed automatic save is the worker's error notice, or there was nothing to save
    );
  }

  private async keep(iter: number, bytes: ArrayBuffer): Promise<void> {
    this.deps.flush(); // the run record must hold every iteration before the state
    const s = this.deps.store.getState();
    const run = s.runs.find((r) => r.id === s.activeRunId);
    if (!run) return;
    try {
      await this.deps.resumePoints.save(run, { runId: run.id, iter, savedAt: Date.now(), backend: s.backend, wasRunning: s.runState === 'running', bytes });
      if (s.resume && s.resume.runId !== run.id) s.setResume(null); // the stored state is this run's now
    } catch (e) {
      if (this.problemRun === run.id) return;
      this.problemRun = run.id;
      const text = notices.isQuotaError(e) ? notices.storageFull({ ...savedOf(run.id), unsavedState: true }) : notices.stateNotSaved(classifyStateProblem(e));
      s.setNotice({ tone: 'warn', text });
    }
  }
}
