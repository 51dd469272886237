// The page's side of the trainer protocol: owns the trainer Web Worker, sends commands, and feeds
// its messages into the store. Requests that expect an answer (snapshot, saveState, loadState,
// trainRewardModel) carry an id the reply echoes (requests.ts); everything else is a command whose
// effects arrive as run messages. All state lives in one TrainerClient; the page uses `trainer`.
import type { StoreApi } from 'zustand';
import type { PpoConfig } from '../rl/config.ts';
import { findPreset } from '../rl/presets.ts';
import { isWorkerMessage, type BackendChoice, type CheckpointRole, type LabelledPair, type PageToWorker, type WorkerToPage } from '../worker/protocol.ts';
import { useApp, type AppState, type RunStart } from './appStore.ts';
import { MetricFeed } from './metricFeed.ts';
import * as notices from './notices.ts';
import { planArms, presetBudget } from './presetRun.ts';
import { PendingRequests, RequestDroppedError, RequestFailure, REQUEST_TIMEOUT_MS, RequestTimeoutError, SendFailedError, WorkerGoneError, WorkerReportedError, type ReplyOf, type RequestKind } from './requests.ts';
import { classifyStateProblem, deleteResumePoint, loadResumePoint, saveResumePoint, STATE_SAVE_INTERVAL_MS, type ResumePoint } from './resume.ts';
import { saveSequence, sequenceOffer } from './sequencePersist.ts';

/** What the client needs of a Worker (a real one, or a test's fake). */
export interface WorkerLike {
  postMessage(msg: PageToWorker, transfer: Transferable[]): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
  terminate(): void;
}

/** Where the active run's trainer state is kept between reloads (resume.ts: IndexedDB). */
export interface ResumePoints {
  save(run: AppState['runs'][number], point: Omit<ResumePoint, 'key'>): Promise<void>;
  load(): Promise<ResumePoint | null>;
  delete(): Promise<void>;
}

export interface ClientDeps {
  store: StoreApi<AppState>;
  /** A new trainer worker; throws when none can start. */
  createWorker(): WorkerLike;
  resumePoints?: ResumePoints;
  /** Keeps the "Run both" in progress across a reload (sequencePersist.ts). */
  saveSequence?: (seq: AppState['sequence']) => void;
  now?: () => number;
  /** Turns on the worker's debug* messages. */
  testHooks?: boolean;
}

/** Messages of the run in progress: dropped between a Reset and the worker's `resetDone`. */
const RUN_MESSAGES: ReadonlySet<WorkerToPage['type']> = new Set(['metrics', 'samples', 'ratios', 'eval', 'finished', 'state']);
/** A settings change made before Start is prepared for after the user stops changing things. */
const PREPARE_DELAY_MS = 600;

type CommandBody<K extends RequestKind> = Omit<Extract<PageToWorker, { type: K }>, 'type' | 'requestId'>;

export class TrainerClient {
  private readonly store: StoreApi<AppState>;
  private readonly resumePoints: ResumePoints;
  private readonly persistSequence: (seq: AppState['sequence']) => void;
  private readonly now: () => number;
  private readonly feed: MetricFeed;
  readonly requests = new PendingRequests();

  private worker: WorkerLike | null = null;
  private workerBackend: BackendChoice | null = null;
  /** The worker answered `ready` (its backend exists). */
  private workerReady = false;
  /** A command other than the warm-up's has been sent to this worker. */
  private commanded = false;
  /**
   * Set when a reset is sent, cleared by the worker's `resetDone`: an iteration in flight at the
   * click still reports, and those results belong to the run the user just closed, not to a new one.
   */
  private discarding = false;
  private stateAskedAt = -Infinity;
  /** Set between deviceLost and deviceRecovered / a backend switch: the worker has no state to give. */
  private deviceDown = false;
  /** A storage failure is reported once per run, not every ten seconds. */
  private stateProblemRun: string | null = null;
  private configWatched = false;

  constructor(private readonly deps: ClientDeps) {
    this.store = deps.store;
    this.resumePoints = deps.resumePoints ?? { save: saveResumePoint, load: loadResumePoint, delete: deleteResumePoint };
    this.persistSequence = deps.saveSequence ?? saveSequence;
    this.now = deps.now ?? (() => performance.now());
    this.feed = new MetricFeed(this.store, this.now);
  }

  private get s(): AppState {
    return this.store.getState();
  }

  private notify(tone: 'info' | 'warn' | 'error', text: string): void {
    this.s.setNotice({ tone, text });
  }

  // ───────────────────────────── the worker ─────────────────────────────

  private dropWorker(): void {
    const had = this.worker !== null;
    this.worker?.terminate();
    this.worker = null;
    this.workerBackend = null;
    this.workerReady = false;
    this.commanded = false;
    if (had) this.requests.failAll((kind) => new WorkerGoneError(kind, 'the trainer worker was stopped before it answered'));
    this.s.setCompile(null);
  }

  private ensureWorker(): WorkerLike | null {
    const backend = this.s.backend;
    if (this.worker && this.workerBackend === backend) return this.worker;
    this.dropWorker();
    let w: WorkerLike;
    try {
      w = this.deps.createWorker();
    } catch {
      return null;
    }
    // A dropped worker's last messages are not this page's business any more.
    w.onmessage = (ev) => {
      if (this.worker === w && isWorkerMessage(ev.data)) this.receive(ev.data);
    };
    w.onerror = (ev) => {
      if (this.worker !== w) return;
      const message = ev.message || 'the trainer worker crashed';
      this.requests.failAll((kind) => new WorkerGoneError(kind, message));
      this.receive({ type: 'error', message });
    };
    w.postMessage({ type: 'init', backend, testHooks: this.deps.testHooks === true }, []);
    this.worker = w;
    this.workerBackend = backend;
    this.deviceDown = false;
    return w;
  }

  /** Hands a command to the worker (starting one if needed); false, with a notice, when it cannot. */
  private send(msg: PageToWorker, transfer: Transferable[] = []): boolean {
    return this.post(this.ensureWorker(), msg, transfer) === null;
  }

  /** Posts to `w`; null when it went, else why not (and the notice says so). */
  private post(w: WorkerLike | null, msg: PageToWorker, transfer: Transferable[]): string | null {
    this.commanded = true;
    if (!w) {
      this.notify('warn', notices.trainerMissing(msg.type));
      return notices.TRAINER_MISSING;
    }
    try {
      w.postMessage(msg, transfer);
      return null;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.notify('error', notices.sendFailed(msg.type, why));
      return why;
    }
  }

  /**
   * Sends a request and resolves with the reply carrying its id. Rejects with SendFailedError (no
   * worker, or postMessage threw), WorkerReportedError (its `error`), RequestTimeoutError,
   * WorkerGoneError or RequestDroppedError; the pending entry is gone in every case.
   */
  request<K extends RequestKind>(kind: K, body: CommandBody<K>, transfer: Transferable[] = []): Promise<ReplyOf[K]> {
    // The worker first (replacing one fails the old one's requests), then the entry: it exists
    // before this returns, so no reply can arrive ahead of it.
    const w = this.ensureWorker();
    const { id, reply } = this.requests.open(kind);
    const failed = this.post(w, { type: kind, ...body, requestId: id } as PageToWorker, transfer);
    if (failed !== null) this.requests.fail(id, new SendFailedError(kind, failed));
    return reply;
  }

  /**
   * With no run active, hands the worker the current config and asks it to get the trainer and the
   * SFT baseline evaluation ready (`prepare`), so Start goes straight to the first iteration. Sent
   * straight to an existing worker: it starts none, and counts as no user command.
   */
  private prepareAhead(): void {
    const s = this.s;
    if (!this.worker || s.activeRunId || this.workerBackend !== s.backend) return;
    this.worker.postMessage({ type: 'setConfig', config: s.config }, []);
    this.worker.postMessage({ type: 'prepare' }, []);
  }

  private watchConfig(): void {
    if (this.configWatched) return;
    this.configWatched = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    this.store.subscribe((state, prev) => {
      if (state.config === prev.config || state.activeRunId) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        this.prepareAhead();
      }, PREPARE_DELAY_MS);
    });
  }

  // ───────────── saved trainer state (resume after reload; resume.ts has the rules) ─────────────

  /** Asks the worker for its full state: at most every STATE_SAVE_INTERVAL_MS, or now when `force`. */
  private requestState(force = false): void {
    const s = this.s;
    const w = this.worker;
    if (!w || this.deviceDown || this.discarding || !s.activeRunId) return;
    const run = s.runs.find((r) => r.id === s.activeRunId);
    // A trainer exists once the run has an iteration.
    if (!run || (run.metrics.length === 0 && this.feed.pendingCount === 0)) return;
    const now = this.now();
    // A quiet request may get no answer (no trainer yet); its time-out ends it after a minute.
    if (!force && (this.requests.has('saveState') || now - this.stateAskedAt < STATE_SAVE_INTERVAL_MS)) return;
    this.stateAskedAt = now;
    // Straight to the worker that exists: an automatic save starts none and is no user command.
    const { id, reply } = this.requests.open('saveState');
    try {
      w.postMessage({ type: 'saveState', quiet: true, requestId: id }, []);
    } catch (e) {
      this.requests.fail(id, new SendFailedError('saveState', e instanceof Error ? e.message : String(e)));
    }
    void reply.then(
      (r) => this.storeState(r.iter, r.bytes),
      () => {}, // a failed automatic save is the worker's error notice, or nothing to save
    );
  }

  /** The worker has answered, or never will, every state request sent before `why` happened. */
  private dropStateRequests(why: string): void {
    this.requests.failAll((kind) => new RequestDroppedError(kind, why), 'saveState');
  }

  private async storeState(iter: number, bytes: ArrayBuffer): Promise<void> {
    this.feed.flush(); // the run record must hold every iteration before the state
    const s = this.s;
    const run = s.runs.find((r) => r.id === s.activeRunId);
    if (!run) return;
    try {
      await this.resumePoints.save(run, { runId: run.id, iter, savedAt: Date.now(), backend: s.backend, wasRunning: s.runState === 'running', bytes });
      if (s.resume && s.resume.runId !== run.id) s.setResume(null); // the stored state is this run's now
    } catch (e) {
      if (this.stateProblemRun === run.id) return;
      this.stateProblemRun = run.id;
      this.notify('warn', notices.stateNotSaved(classifyStateProblem(e)));
    }
  }

  // ───────────────────────────── worker → page ─────────────────────────────

  /** Handles one worker message (also the entry point for `window.ppoPlayground.receive`). */
  receive(msg: WorkerToPage): void {
    const s = this.s;
    if (this.discarding && RUN_MESSAGES.has(msg.type)) {
      if (msg.type === 'state') this.requests.drop('state', msg.requestId, (kind) => new RequestDroppedError(kind, 'the state belongs to the run that was reset'));
      return;
    }
    switch (msg.type) {
      case 'resetDone':
        this.discarding = false;
        this.dropStateRequests('the trainer was reset');
        break;
      case 'ready':
        this.workerReady = true;
        s.setTrainerLabel(msg.backendLabel);
        break;
      case 'compiling':
        s.setCompile({ done: msg.done, total: msg.total, seconds: msg.seconds });
        break;
      case 'stage':
        s.setStage(msg.stage);
        break;
      case 'metrics': {
        const runId = s.activeRunId ?? s.beginRun().id;
        this.feed.push(runId, { iter: msg.iter, values: { ...msg.values } });
        if (s.runState === 'running') this.feed.recordArrival();
        this.requestState();
        break;
      }
      case 'state':
      case 'stateLoaded':
      case 'snapshot':
      case 'rewardModelTrained':
        // The request's own continuation acts on it; a reply nobody waits for (timed out) is dropped.
        this.requests.answer(msg);
        break;
      case 'deviceLost':
        this.feed.flush();
        this.feed.resetSpeed();
        this.deviceDown = true;
        this.dropStateRequests('the GPU device was lost');
        s.setNotice({ tone: 'warn', text: notices.deviceLost(msg) });
        break;
      case 'deviceRecovered':
        this.feed.flush();
        this.deviceDown = false;
        // The replayed iterations report again: drop their first copies so the curve stays one line.
        if (s.activeRunId) s.truncateRun(s.activeRunId, msg.fromIter);
        s.setRunState(msg.resumed ? 'running' : s.activeRunId ? 'paused' : 'idle');
        s.setNotice({ tone: 'info', text: notices.deviceRecovered(msg) });
        break;
      case 'deviceUnavailable':
        this.feed.flush();
        this.feed.resetSpeed();
        this.deviceDown = true;
        s.setRunState(s.activeRunId ? 'paused' : 'idle');
        s.setCpuOffer({ message: msg.message, iter: msg.iter });
        s.setNotice({ tone: 'error', text: notices.deviceUnavailable(msg) });
        break;
      case 'eval': {
        const runId = s.activeRunId ?? s.beginRun().id;
        s.appendEval(runId, { iter: msg.iter, values: { ...msg.values }, prompts: msg.prompts, seconds: msg.seconds });
        break;
      }
      case 'finished':
        this.onFinished();
        this.requestState(true);
        break;
      case 'samples':
        s.setSamples({ iter: msg.iter, rows: msg.rows });
        break;
      case 'ratios':
        s.setRatios({ iter: msg.iter, ratios: msg.ratios, advantages: msg.advantages, seqRatios: msg.seqRatios, seqAdvantages: msg.seqAdvantages });
        break;
      case 'paused':
        this.feed.resetSpeed();
        s.setRunState('paused');
        if (msg.stage) s.setStage(msg.stage);
        if (msg.nonFinite) {
          this.feed.flush();
          s.setNotice({ tone: 'warn', text: notices.nonFinitePaused(msg.nonFinite) });
          this.requestState(true); // the restored state is the last good one
        } else {
          s.setNotice({ tone: 'info', text: notices.paused(msg.reason) });
        }
        break;
      case 'error':
        this.onError(msg);
        break;
    }
  }

  private onError(msg: Extract<WorkerToPage, { type: 'error' }>): void {
    // A worker started ahead of any command (warmUp) that fails to initialise goes quietly: the
    // WebGPU self-test tells the user what is wrong, and the next command starts a fresh worker.
    if (!this.workerReady && !this.commanded) {
      this.dropWorker();
      return;
    }
    if (msg.requestId !== undefined) {
      const kind = this.requests.kindOf(msg.requestId);
      if (kind) this.requests.fail(msg.requestId, new WorkerReportedError(kind, msg.message));
    }
    // The worker stops its loop on any error; an idle page stays idle.
    this.discarding = false;
    this.feed.resetSpeed();
    const s = this.s;
    if (s.runState === 'running') s.setRunState('paused');
    const what = notices.trainerError(msg.message, msg.stage);
    const seq = s.sequence;
    if (!seq) {
      s.setNotice({ tone: 'error', text: what });
      return;
    }
    const run = s.runs.find((r) => r.id === s.activeRunId);
    const done = (run?.metrics.length ?? 0) + this.feed.pendingCount;
    s.setSequence({ ...seq, stoppedBy: msg.message });
    s.setNotice({ tone: 'error', text: notices.sequenceStopped(seq, done, what) });
  }

  /**
   * Where Start stops by itself: the active run's budget, as the trainer's total iteration count. In
   * "Run both" always (an arm whose last iteration finished while paused moves on to the next arm at
   * once); otherwise only while the run is short of it, so Start after the budget trains on past it.
   */
  private budgetTarget(): number | undefined {
    const { runs, activeRunId, sequence } = this.s;
    const run = runs.find((r) => r.id === activeRunId);
    if (!run?.budget) return undefined;
    return sequence || run.metrics.length < run.budget ? run.budget : undefined;
  }

  /** The worker stopped at the budget: the next arm of "Run both", or a notice that it is done. */
  private onFinished(): void {
    this.feed.flush();
    this.feed.resetSpeed();
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

  // ───────────────────────────── page → worker ─────────────────────────────

  /**
   * A new run begins on Start/Step when none is active: it snapshots the config it trains with, and
   * the budget of the preset that config still is (so Start stops there and the ETA counts to it).
   */
  private beginIfNeeded(start: RunStart = {}): boolean {
    const s = this.s;
    if (s.activeRunId) return true;
    const config: PpoConfig = s.config;
    if (!this.send({ type: 'setConfig', config })) return false;
    s.beginRun({ budget: presetBudget(config, s.preset, s.budgetOverride), preset: s.preset, ...start });
    return true;
  }

  /** Trains arm `index` of the current sequence as a new run from fresh weights. */
  private async startArm(index: number): Promise<void> {
    const seq = this.s.sequence;
    const arm = seq?.arms[index];
    if (!seq || !arm) return;
    this.resetWorker();
    const problems = this.s.applyConfig(arm.config);
    if (problems.length > 0) {
      // Checked when the sequence was planned; a config cannot turn invalid, but never train a bad one.
      this.s.setSequence(null);
      this.notify('error', notices.armInvalid(arm.label, problems.map((p) => p.message)));
      return;
    }
    this.s.setSequence({ preset: seq.preset, arms: seq.arms, budget: seq.budget, index });
    await this.start({ name: arm.label, budget: seq.budget, preset: seq.preset });
    // The arm's run, so that a reload can resume it (sequencePersist.ts).
    const now = this.s;
    if (now.sequence && now.activeRunId) now.setSequence({ ...now.sequence, runId: now.activeRunId });
  }

  /** Ends the current run (kept in the list) and sends the worker back to fresh weights. */
  private resetWorker(): boolean {
    this.feed.flush();
    this.feed.resetSpeed();
    // The run ends at the click: starting the worker can take a while, and metrics that arrive
    // meanwhile belong to whatever runs next, not to the run the user just closed.
    this.s.endRun();
    // Only a worker that existed before can still be reporting on the old run (it answers resetDone).
    this.discarding = this.worker !== null;
    const sent = this.send({ type: 'reset' });
    if (!sent) this.discarding = false;
    return sent;
  }

  /**
   * Starts the trainer worker before the first Start (called once the WebGPU self-test passed), so
   * its device, the kernels' pipelines, the task's SFT checkpoint and the baseline evaluation are
   * ready by the time the user asks for an iteration (prepareAhead). If it cannot initialise, it
   * is dropped without a message, and the next command starts a fresh one that reports why.
   */
  warmUp(): void {
    this.ensureWorker();
    this.prepareAhead();
    this.watchConfig();
  }

  /** Starts (or resumes) the active run; a run with a budget stops by itself when it is reached. */
  async start(start: RunStart = {}): Promise<void> {
    this.feed.flush();
    if (!this.beginIfNeeded(start)) return;
    this.feed.resetSpeed();
    const seq = this.s.sequence;
    if (seq?.stoppedBy) this.s.setSequence({ ...seq, stoppedBy: undefined });
    if (this.send({ type: 'start', untilIter: this.budgetTarget() })) {
      this.s.setRunState('running');
      this.s.setNotice(null);
    }
  }

  async pause(): Promise<void> {
    this.feed.resetSpeed();
    if (this.send({ type: 'pause' })) {
      this.s.setRunState('paused');
      // Queued in the worker behind the iteration in flight: the state the run paused at.
      this.requestState(true);
    }
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
      this.notify('error', notices.resumeFailed(what, problem));
      return false;
    };
    let point;
    try {
      point = await this.resumePoints.load();
    } catch (e) {
      return fail(classifyStateProblem(e));
    }
    if (!point || point.runId !== offer.runId || !run) return fail({ label: 'storage', message: 'the saved state is gone or belongs to another run' });
    if (s.runState === 'running') await this.pause();
    if (s.activeRunId && s.activeRunId !== run.id) this.resetWorker();
    this.feed.flush();
    this.feed.resetSpeed();
    let loaded;
    try {
      loaded = await this.request('loadState', { bytes: point.bytes }, [point.bytes]);
    } catch (e) {
      if (e instanceof SendFailedError) return false; // its notice is shown
      if (e instanceof WorkerReportedError) {
        void this.resumePoints.delete().catch(() => {});
        return fail(classifyStateProblem(new Error(e.message)));
      }
      return fail({ label: 'no answer from the trainer', message: e instanceof Error ? e.message : String(e) });
    }
    const now = this.s;
    now.activateRun(run.id);
    now.truncateRun(run.id, loaded.iter);
    // Resumed on another backend (e.g. "Continue on the CPU backend"): the record says so from here.
    now.setRunBackend(run.id, now.backend, loaded.iter);
    now.applyConfig(loaded.config);
    now.setResume(null);
    now.setCpuOffer(null);
    this.stateAskedAt = this.now(); // the state just loaded is the saved one
    await this.start();
    this.notify('info', notices.resumed(what));
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
      this.notify('info', notices.sequenceAllTrained(saved.seq));
      return;
    }
    if (s.runState === 'running') await this.pause();
    s.setPreset(offer.seq.preset);
    s.setSequence(offer.seq);
    if (offer.resumable && offer.seq.runId && this.s.resume?.runId === offer.seq.runId) {
      if (await this.resume()) return;
      const why = this.s.notice?.text ?? 'the saved state could not be loaded';
      await this.startArm(offer.seq.index);
      this.notify('warn', notices.sequenceRetrains(why, offer.seq.arms[offer.seq.index].label));
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
    this.resetWorker();
    this.notify('warn', notices.cpuWithoutState(offer?.iter));
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
      this.notify('error', notices.noPreset(name));
      return;
    }
    const plan = planArms(preset, s.config);
    if (!plan.ok) {
      this.notify('error', notices.presetNotStarted(name, plan.problems));
      return;
    }
    if (s.runState === 'running') await this.pause();
    s.setPreset(name);
    s.setSequence({ preset: name, arms: plan.arms, index: 0, budget: s.budgetOverride ?? preset.iterations });
    await this.startArm(0);
  }

  async toggle(): Promise<void> {
    if (this.s.runState === 'running') await this.pause();
    else await this.start();
  }

  async step(): Promise<void> {
    if (!this.beginIfNeeded()) return;
    if (this.send({ type: 'step' })) this.s.setRunState('paused');
  }

  /** Ends the current run (it stays in the run list), stops a "Run both", and returns the trainer to fresh weights. */
  async reset(): Promise<void> {
    this.s.setSequence(null);
    if (this.resetWorker()) this.s.setNotice(null);
    this.prepareAhead();
  }

  /** The actor as safetensors bytes, or null when there is no trainer or it failed (a notice says why). */
  async snapshot(): Promise<ArrayBuffer | null> {
    try {
      return (await this.request('snapshot', {})).bytes;
    } catch (e) {
      this.reportFailure(e);
      return null;
    }
  }

  /** Hands checkpoint bytes to the worker, which validates them before using them. */
  async loadCheckpoint(role: CheckpointRole, bytes: ArrayBuffer): Promise<boolean> {
    const sent = this.send({ type: 'loadCheckpoint', role, bytes }, [bytes]);
    // The worker dropped the trainer it had prepared: prepare one from the loaded weights.
    if (sent) this.prepareAhead();
    return sent;
  }

  /** Fine-tunes the reward model on human labels; null when there is no trainer or it failed (a notice says why). */
  async trainRewardModel(pairs: LabelledPair[]): Promise<ReplyOf['trainRewardModel'] | null> {
    try {
      return await this.request('trainRewardModel', { pairs });
    } catch (e) {
      this.reportFailure(e);
      return null;
    }
  }

  /**
   * The notice for a request that failed, where none was shown yet: a send failure and the
   * worker's error have theirs already.
   */
  private reportFailure(e: unknown): void {
    if (!(e instanceof RequestFailure)) throw e;
    if (e instanceof RequestTimeoutError) this.notify('error', notices.requestTimedOut(e.kind, REQUEST_TIMEOUT_MS[e.kind] / 1000));
    else if (e instanceof WorkerGoneError || e instanceof RequestDroppedError) this.notify('error', notices.requestLost(e.kind, e.message));
  }

  /** Test hooks (only with testHooks on; the worker refuses them otherwise). */
  readonly debug = {
    destroyDevice: (failReacquire = false) => void this.send({ type: 'debugDestroyDevice', failReacquire }),
    setActorLr: (actorLr: number) => void this.send({ type: 'debugSetActorLr', actorLr }),
  };

  /** Resolves once no Reset is waiting for the worker's acknowledgement. */
  settled(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.discarding ? setTimeout(check, 20) : resolve());
      check();
    });
  }
}

/** Test hooks (debug* messages) are on only when localStorage says so: a shared link cannot turn them on. */
function testHooksOn(): boolean {
  try {
    return typeof localStorage !== 'undefined' && localStorage.getItem('ppo-test-hooks') === '1';
  } catch {
    return false;
  }
}

/** The page's one client. */
export const trainer = new TrainerClient({
  store: useApp,
  // Vite bundles the worker as its own chunk from this URL (as the self-test worker's).
  createWorker: () => new Worker(new URL('../worker/trainer.worker.ts', import.meta.url), { type: 'module', name: 'trainer' }),
  testHooks: testHooksOn(),
});

declare global {
  interface Window {
    /**
     * Debug/test hook: feed protocol messages to the page as if the trainer had sent them, and
     * `settled()`, which resolves once no Reset is waiting for the worker's acknowledgement (until
     * then the page drops run messages, which belong to the run that was reset).
     */
    ppoPlayground?: { receive: (msg: WorkerToPage) => void; settled: () => Promise<void>; debug?: TrainerClient['debug'] };
  }
}

if (typeof window !== 'undefined') {
  window.ppoPlayground = { receive: (msg) => trainer.receive(msg), settled: () => trainer.settled(), ...(testHooksOn() ? { debug: trainer.debug } : {}) };
}
