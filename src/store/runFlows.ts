// The page's multi-step runs, built from the client's commands: "Run both" (a paired preset's arms
// trained one after the other, each a run of its own), resuming a run after a reload from its saved
// trainer state, and going on on the CPU backend after a GPU device that did not come back.
import type { StoreApi } from 'zustand';
import { t } from '../i18n/index.ts';
import type { CheckedConfig } from '../rl/config.ts';
import { findPreset } from '../rl/presets.ts';
import type { AppState, RunStart } from './appStore.ts';
import * as notices from './notices.ts';
import { planArms } from './presetRun.ts';
import { SendFailedError, WorkerReportedError, type ReplyOf } from './requests.ts';
import { classifyStateProblem, type ResumePoint } from './resume.ts';
import { sequenceOffer } from './sequencePersist.ts';
import { keptModelDims } from './sftState.ts';

/** Where the active run's trainer state is kept between reloads (resume.ts: IndexedDB). */
export interface ResumePoints {
  save(run: AppState['runs'][number], point: Omit<ResumePoint, 'key'>): Promise<void>;
  load(): Promise<ResumePoint | null>;
  delete(): Promise<void>;
}

/** The client's commands the flows are made of. */
export interface RunControl {
  start(start?: RunStart): Promise<void>;
  pause(): Promise<void>;
  /** Ends the current run (kept in the list) and sends the worker back to fresh weights; false when that could not be sent. */
  resetRun(): boolean;
  /** Loads a saved trainer state into the worker (rejects with the request's named failure). */
  loadState(bytes: ArrayBuffer): Promise<ReplyOf['loadState']>;
  /** Charts every iteration received and clears the speed readout: the active run is about to change. */
  settleCharts(): void;
  /** The worker loaded a saved state: it holds the state's config, and the next automatic save can wait. */
  stateLoaded(config: CheckedConfig): void;
}

export class RunFlows {
  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly control: RunControl,
    private readonly resumePoints: ResumePoints,
    private readonly persistSequence: (seq: AppState['sequence']) => void,
  ) {}

  private get s(): AppState {
    return this.store.getState();
  }

  /**
   * "Run both": every arm of the paired preset `name`, one after the other, each a new run from
   * fresh weights named by its arm label and trained for the preset's budget. Pause/Start pause and
   * resume the arm in progress; Reset stops the sequence, keeping the runs already trained.
   */
  async runArms(name: string): Promise<void> {
    const s = this.s;
    const preset = findPreset(name);
    if (!preset) {
      s.setNotice({ tone: 'error', text: notices.noPreset(name) });
      return;
    }
    const plan = planArms(preset, keptModelDims);
    if (!plan.ok) {
      s.setNotice({ tone: 'error', text: notices.presetNotStarted(name, plan.problems) });
      return;
    }
    if (s.runState === 'running') await this.control.pause();
    s.setPreset(name);
    // The arms are a comparison of their own: the runs before them leave the charts.
    s.newComparison();
    s.setSequence({ preset: name, arms: plan.arms, index: 0, budget: s.budgetOverride ?? preset.iterations, comparison: this.s.comparison });
    await this.startArm(0);
  }

  /**
   * A card's Start: the preset's whole recipe from fresh weights as a new comparison, trained to
   * its budget (the first arm of a paired preset; "Run both" trains them all).
   */
  async startPreset(name: string): Promise<void> {
    const s = this.s;
    if (s.runState === 'running') await this.control.pause();
    const problems = s.choosePreset(name);
    if (problems.length > 0) {
      s.setNotice({
        tone: 'error',
        text: notices.presetNotStarted(
          name,
          problems.map((p) => p.message),
        ),
      });
      return;
    }
    s.setSequence(null);
    this.control.resetRun();
    this.s.newComparison();
    await this.control.start();
  }

  /** The worker stopped at the budget: the next arm of "Run both", or a notice that it is done. */
  finished(): void {
    const s = this.s;
    s.setRunState('paused');
    s.setStage('idle');
    const seq = s.sequence;
    if (seq && seq.index + 1 < seq.arms.length) {
      void this.startArm(seq.index + 1);
      return;
    }
    if (seq) {
      s.setSequence(null);
      s.setNotice({ tone: 'info', text: notices.sequenceDone(seq) });
    } else {
      const run = s.runs.find((r) => r.id === s.activeRunId);
      s.setNotice({ tone: 'info', text: notices.budgetReached(run?.budget) });
    }
  }

  /** Trains arm `index` of the current sequence as a new run from fresh weights. */
  async startArm(index: number): Promise<void> {
    const seq = this.s.sequence;
    const arm = seq?.arms[index];
    if (!seq || !arm) return;
    this.control.resetRun();
    // Checked when the sequence was planned (or read back after a reload).
    this.s.takeCheckedConfig(arm.config);
    this.s.setSequence({ preset: seq.preset, arms: seq.arms, budget: seq.budget, index, ...(seq.comparison === undefined ? {} : { comparison: seq.comparison }) });
    await this.control.start({ name: arm.label, budget: seq.budget, preset: seq.preset });
    // The arm's run, so that a reload can resume it (sequencePersist.ts).
    const now = this.s;
    if (now.sequence && now.activeRunId) now.setSequence({ ...now.sequence, runId: now.activeRunId });
  }

  /**
   * Resumes the run whose state was saved before the reload: the worker validates and loads the
   * state, the run becomes active again with its curve cut at the state's iteration, and training
   * goes on appending to the same run record. A state that fails is reported by name; the run and
   * its charts stay.
   */
  async resume(): Promise<boolean> {
    const s = this.s;
    const offer = s.resume;
    if (!offer) return false;
    const run = s.runs.find((r) => r.id === offer.runId);
    const what = notices.resumeTarget(run?.name ?? offer.runName, offer.iter);
    const fail = (problem: { label: string; message: string }) => {
      this.s.setResume(null);
      this.s.setNotice({ tone: 'error', text: notices.resumeFailed(what, problem) });
      return false;
    };
    let point: Awaited<ReturnType<typeof this.resumePoints.load>>;
    try {
      point = await this.resumePoints.load();
    } catch (e) {
      return fail(classifyStateProblem(e));
    }
    if (!point || point.runId !== offer.runId || !run) return fail({ label: t('common:resume.storage'), message: t('common:resume.stateGone') });
    if (s.runState === 'running') await this.control.pause();
    if (s.activeRunId && s.activeRunId !== run.id) this.control.resetRun();
    this.control.settleCharts();
    let loaded: Awaited<ReturnType<typeof this.control.loadState>>;
    try {
      loaded = await this.control.loadState(point.bytes);
    } catch (e) {
      if (e instanceof SendFailedError) return false; // its notice is shown
      if (e instanceof WorkerReportedError) {
        void this.resumePoints.delete().catch(() => {});
        return fail(classifyStateProblem(new Error(e.message)));
      }
      return fail({ label: t('common:resume.noAnswer'), message: e instanceof Error ? e.message : String(e) });
    }
    const now = this.s;
    now.activateRun(run.id);
    now.truncateRun(run.id, loaded.iter);
    // Resumed on another backend (e.g. "Continue on the CPU backend"): the record says so from here.
    now.setRunBackend(run.id, now.backend, loaded.iter);
    now.takeCheckedConfig(loaded.config);
    now.setResume(null);
    now.setCpuOffer(null);
    this.control.stateLoaded(loaded.config);
    await this.control.start();
    this.s.setNotice({ tone: 'info', text: notices.resumed(what) });
    return true;
  }

  /**
   * After a reload: goes on with the "Run both" the page left unfinished. The arm in progress
   * resumes from its saved state when there is one (else, or if that fails, it trains again from
   * the start); the arms after it follow.
   */
  async continueSequence(): Promise<void> {
    const s = this.s;
    const saved = s.sequenceOffer;
    if (!saved) return;
    s.setSequenceOffer(null);
    // Looked at again now: the arm's run may have been resumed and finished since the page opened.
    const offer = sequenceOffer(saved.seq.runId ? saved.seq : { ...saved.seq, runId: undefined }, s.runs, s.resume);
    if (!offer) {
      this.persistSequence(null);
      s.setNotice({ tone: 'info', text: notices.sequenceAllTrained(saved.seq) });
      return;
    }
    if (s.runState === 'running') await this.control.pause();
    s.setPreset(offer.seq.preset);
    // Its arms' comparison on the charts again; a sequence saved before comparisons begins a new one.
    if (offer.seq.comparison === undefined) s.newComparison();
    else s.showComparison(offer.seq.comparison);
    s.setSequence({ ...offer.seq, comparison: this.s.comparison });
    if (offer.resumable && offer.seq.runId && this.s.resume?.runId === offer.seq.runId) {
      if (await this.resume()) return;
      const why = this.s.notice?.text ?? t('common:resume.stateNotLoaded');
      await this.startArm(offer.seq.index);
      this.s.setNotice({ tone: 'warn', text: notices.sequenceRetrains(offer.seq, why) });
      return;
    }
    await this.startArm(offer.seq.index);
  }

  /** Forgets the unfinished "Run both" (its finished runs, and any saved state, stay). */
  discardSequence(): void {
    this.s.setSequenceOffer(null);
    if (!this.s.sequence) this.persistSequence(null);
  }

  /** Forgets the saved state (the run and its charts stay). */
  async discardResume(): Promise<void> {
    this.s.setResume(null);
    await this.resumePoints.delete().catch(() => {});
  }

  /**
   * After a lost GPU device that did not come back: the CPU backend (a new worker) resumes the
   * active run from its saved state, or starts fresh when no state of it was saved.
   */
  async continueOnCpu(): Promise<void> {
    const s = this.s;
    const offer = s.cpuOffer;
    s.setCpuOffer(null);
    s.setBackend('cpu');
    const run = s.runs.find((r) => r.id === s.activeRunId);
    let point = null;
    try {
      point = await this.resumePoints.load();
    } catch {
      point = null;
    }
    if (run && point && point.runId === run.id) {
      s.setResume({ runId: run.id, runName: run.name, iter: point.iter, savedAt: point.savedAt, wasRunning: true });
      await this.resume();
      return;
    }
    this.control.resetRun();
    s.setNotice({ tone: 'warn', text: notices.cpuWithoutState(offer?.iter) });
  }
}
