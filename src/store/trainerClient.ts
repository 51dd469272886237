// The page's side of the trainer protocol: the commands the page gives the trainer worker and what
// its messages do to the store. The line to the worker and its request ids are trainerConnection.ts;
// Run both, resume and the CPU fallback are runFlows.ts. The client's state is its fields and the
// objects it owns (no module-level variables); the page uses the one instance, `trainer`.
import type { StoreApi } from 'zustand';
import { t } from '../i18n/index.ts';
import type { PpoConfig } from '../rl/config.ts';
import { type CheckpointRole, type LabelledPair, type PageToWorker, USER_PAUSE_REASON, type WorkerToPage } from '../worker/protocol.ts';
import { useApp, type AppState, type RunStart } from './appStore.ts';
import { capturesHackAtEnd, hackedOfferFor } from './hackedOffer.ts';
import { useInspection, type InspectionState } from './inspection.ts';
import { MetricFeed } from './metricFeed.ts';
import * as notices from './notices.ts';
import { presetBudget } from './presetRun.ts';
import { REQUEST_TIMEOUT_MS, RequestDroppedError, RequestFailure, RequestTimeoutError, WorkerGoneError, WorkerReportedError, type ReplyOf } from './requests.ts';
import { classifyStateProblem, deleteResumePoint, loadResumePoint, saveResumePoint, savedOf, STATE_SAVE_INTERVAL_MS } from './resume.ts';
import { RunFlows, type ResumePoints, type RunControl } from './runFlows.ts';
import { startBlockedBy, syncRewardFunction } from './rewardFunctionSync.ts';
import { saveSequence } from './sequencePersist.ts';
import { useSft } from './sftState.ts';
import type { ModelDims } from '../rl/sftRun.ts';
import { TrainerConnection, type WorkerLike } from './trainerConnection.ts';

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
  /** The inspector's store: its `capture` switch is sent to the worker, captured traces land in it. */
  inspection?: StoreApi<InspectionState>;
}

/** Messages of the run in progress: dropped between a Reset and the worker's `resetDone`. */
const RUN_MESSAGES: ReadonlySet<WorkerToPage['type']> = new Set(['metrics', 'samples', 'ratios', 'trace', 'eval', 'finished', 'state']);
/** A settings change made before Start is prepared for after the user stops changing things. */
const PREPARE_DELAY_MS = 600;

export class TrainerClient implements RunControl {
  private readonly store: StoreApi<AppState>;
  private readonly inspection: StoreApi<InspectionState>;
  private readonly now: () => number;
  private readonly resumePoints: ResumePoints;
  private readonly feed: MetricFeed;
  /** The line to the worker, with the requests waiting for a reply. */
  readonly connection: TrainerConnection;
  private readonly flows: RunFlows;
  /**
   * Set when a reset is sent, cleared by the worker's `resetDone`: an iteration in flight at the
   * click still reports, and those results belong to the run the user just closed, not to a new one.
   */
  private discarding = false;
  private stateAskedAt = -Infinity;
  /** Set between deviceLost and deviceRecovered / a new worker: the worker has no state to give. */
  private deviceDown = false;
  /** A storage failure is reported once per run, not every ten seconds. */
  private stateProblemRun: string | null = null;
  private configWatched = false;

  constructor(deps: ClientDeps) {
    this.store = deps.store;
    this.inspection = deps.inspection ?? useInspection;
    this.now = deps.now ?? (() => performance.now());
    this.resumePoints = deps.resumePoints ?? { save: saveResumePoint, load: loadResumePoint, delete: deleteResumePoint };
    this.feed = new MetricFeed(this.store, this.now);
    this.connection = new TrainerConnection({
      createWorker: () => this.withActors(this.withCapture(deps.createWorker())),
      backend: () => this.s.backend,
      testHooks: deps.testHooks === true,
      onMessage: (msg) => this.receive(msg),
      onSendFailed: (tone, text) => this.s.setNotice({ tone, text }),
      onDropped: () => {
        this.deviceDown = false;
        this.s.setCompile(null);
      },
    });
    this.flows = new RunFlows(this.store, this, this.resumePoints, deps.saveSequence ?? saveSequence);
    this.inspection.subscribe((st, prev) => {
      if (st.capture !== prev.capture) this.sendCapture(this.connection.current, st.capture);
    });
  }

  /** A new worker starts with capture off: tell it when the inspector wants captures. */
  private withCapture(w: WorkerLike): WorkerLike {
    if (this.inspection.getState().capture) this.sendCapture(w, true);
    return w;
  }

  /**
   * A new worker gets the SFT models the page keeps (one per task) before anything else: a trainer
   * it builds, or a trainer state it resumes, is then of the model the page shows.
   */
  private withActors(w: WorkerLike): WorkerLike {
    for (const m of Object.values(useSft.getState().models)) {
      const bytes = m.bytes.slice(0);
      try {
        w.postMessage({ type: 'loadCheckpoint', role: 'actor', bytes, task: m.task }, [bytes]);
      } catch {
        // A worker that cannot take a message is replaced, and gets the models then.
      }
    }
    return w;
  }

  /** The capture switch as no user command: a worker that cannot take it gets it when it is replaced. */
  private sendCapture(w: WorkerLike | null, on: boolean): void {
    try {
      w?.postMessage({ type: 'setCapture', on }, []);
    } catch {
      // postMessage of two plain fields does not fail; a dying worker is replaced, and told then
    }
  }

  private get s(): AppState {
    return this.store.getState();
  }

  private get requests() {
    return this.connection.requests;
  }

  // ───────────────────────────── worker → page ─────────────────────────────

  /** Handles one worker message (also the entry point for `window.ppoPlayground.receive`). */
  receive(msg: WorkerToPage): void {
    const s = this.s;
    if (this.discarding && RUN_MESSAGES.has(msg.type)) {
      if (msg.type === 'state') this.requests.drop('state', msg.requestId, (kind) => new RequestDroppedError(kind, t('notices:reason.stateOfResetRun')));
      return;
    }
    switch (msg.type) {
      case 'resetDone':
        this.discarding = false;
        this.dropStateRequests(t('notices:reason.trainerReset'));
        break;
      case 'ready':
        this.connection.markReady();
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
      case 'sftDone':
      case 'sftTimed':
        // The request's own continuation acts on it; a reply nobody waits for (timed out) is dropped.
        this.requests.answer(msg);
        break;
      case 'deviceLost':
        this.feed.flush();
        this.feed.resetSpeed();
        this.deviceDown = true;
        this.dropStateRequests(t('notices:reason.deviceLost'));
        s.setNotice({ tone: 'warn', text: notices.deviceLost(msg) });
        break;
      case 'deviceRecovered':
        this.feed.flush();
        this.deviceDown = false;
        // The replayed iterations report again: drop their first copies so the curve stays one line.
        if (s.activeRunId) this.truncateTraces(s.activeRunId, msg.fromIter);
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
        s.setSamples(s.activeRunId ?? s.beginRun().id, { iter: msg.iter, rows: msg.rows });
        break;
      case 'ratios':
        this.onRatios(msg);
        break;
      case 'trace':
        this.onTrace(msg);
        break;
      case 'rewardFunctionChecked':
        s.setRewardCheck({ source: msg.source, score: msg.score, problem: msg.problem });
        break;
      case 'paused':
        this.feed.resetSpeed();
        s.setRunState('paused');
        if (msg.stage) s.setStage(msg.stage);
        if (msg.rewardFunction) {
          this.feed.flush();
          s.setRewardFailure({ ...msg.rewardFunction, source: s.config.rewardFunction });
          s.setNotice({ tone: 'warn', text: notices.rewardFunctionPaused(msg.rewardFunction) });
        } else if (msg.nonFinite) {
          this.feed.flush();
          s.setNotice({ tone: 'warn', text: notices.nonFinitePaused(msg.nonFinite) });
          this.requestState(true); // the restored state is the last good one
        } else {
          s.setNotice({ tone: 'info', text: notices.paused(msg.reason), ...(msg.reason === USER_PAUSE_REASON ? { echo: true as const } : {}) });
        }
        break;
      case 'sftProgress': {
        const run = useSft.getState().run;
        if (run?.status !== 'running') break;
        useSft.getState().patchRun({
          phase: msg.phase,
          phases: msg.phases,
          doneSteps: msg.doneSteps,
          totalSteps: msg.totalSteps,
          seconds: msg.seconds,
          loss: [...run.loss, { step: msg.doneSteps, loss: msg.loss }],
        });
        break;
      }
      case 'sftPhaseEval': {
        const run = useSft.getState().run;
        if (run?.status === 'running') useSft.getState().patchRun({ evals: [...run.evals, { phase: msg.phase, label: msg.label, metrics: msg.metrics }] });
        break;
      }
      case 'error':
        this.onError(msg);
        break;
    }
  }

  /**
   * The update's ratios join the active run's batch with the clip settings they were trained with:
   * the worker's, else the run's own config (it trains with the config it began with, not the
   * settings edited since).
   */
  private onRatios(msg: Extract<WorkerToPage, { type: 'ratios' }>): void {
    const s = this.s;
    const runId = s.activeRunId ?? s.beginRun().id;
    const config = s.runs.find((r) => r.id === runId)?.config ?? s.config;
    const clip = msg.clip ?? { clipLow: config.clipLow, clipHigh: config.clipHigh, dualClip: config.dualClip };
    s.setRatios(runId, { iter: msg.iter, ratios: msg.ratios, advantages: msg.advantages, seqRatios: msg.seqRatios, seqAdvantages: msg.seqAdvantages, clip });
  }

  /** A captured iteration joins the active run's traces; one whose arrays disagree with its shape is dropped. */
  private onTrace(msg: Extract<WorkerToPage, { type: 'trace' }>): void {
    const runId = this.s.activeRunId;
    const { trace, prompts, tokenText } = msg;
    if (!runId || !trace || prompts?.length !== trace.B || tokenText?.length !== trace.B * trace.A) return;
    this.inspection.getState().pushTrace({ runId, trace, prompts, tokenText });
    const offer = hackedOfferFor(
      this.s.runs.find((r) => r.id === runId),
      trace,
    );
    if (offer) this.inspection.getState().setHacked(offer);
  }

  /** Iterations from `fromIter` on are replayed after a device loss: their traces go with their metrics. */
  private truncateTraces(runId: string, fromIter: number): void {
    this.inspection.setState((st) => ({ traces: st.traces.filter((t) => t.runId !== runId || t.trace.iter < fromIter) }));
  }

  private onError(msg: Extract<WorkerToPage, { type: 'error' }>): void {
    // A worker started ahead of any command (warmUp) that fails to initialise goes quietly: the
    // WebGPU self-test tells the user what is wrong, and the next command starts a fresh worker.
    if (this.connection.unused) {
      this.connection.drop();
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

  /** The worker stopped at the budget: the next arm of "Run both", or a notice that it is done. */
  private onFinished(): void {
    this.settleCharts();
    const s = this.s;
    s.setRunState('paused');
    s.setStage('idle');
    const seq = s.sequence;
    if (seq && seq.index + 1 < seq.arms.length) {
      void this.flows.startArm(seq.index + 1);
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

  // ───────────── saved trainer state (resume after reload; resume.ts has the rules) ─────────────

  /** Asks the worker for its full state: at most every STATE_SAVE_INTERVAL_MS, or now when `force`. */
  private requestState(force = false): void {
    const s = this.s;
    if (!this.connection.exists || this.deviceDown || this.discarding || !s.activeRunId) return;
    const run = s.runs.find((r) => r.id === s.activeRunId);
    // A trainer exists once the run has an iteration.
    if (!run || (run.metrics.length === 0 && this.feed.pendingCount === 0)) return;
    const now = this.now();
    // A quiet request may get no answer (no trainer yet); its time-out ends it after a minute.
    if (!force && (this.requests.has('saveState') || now - this.stateAskedAt < STATE_SAVE_INTERVAL_MS)) return;
    this.stateAskedAt = now;
    this.connection.quietRequest('saveState', { quiet: true })?.then(
      (r) => this.storeState(r.iter, r.bytes),
      () => {}, // a failed automatic save is the worker's error notice, or there was nothing to save
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
      const text = notices.isQuotaError(e) ? notices.storageFull({ ...savedOf(run.id), unsavedState: true }) : notices.stateNotSaved(classifyStateProblem(e));
      s.setNotice({ tone: 'warn', text });
    }
  }

  // ───────────────────────────── page → worker ─────────────────────────────

  private send(msg: PageToWorker, transfer: Transferable[] = []): boolean {
    return this.connection.send(msg, transfer);
  }

  /**
   * With no run active, hands the worker the current config and asks it to get the trainer and the
   * SFT baseline evaluation ready (`prepare`), so Start goes straight to the first iteration. Sent
   * straight to an existing worker: it starts none, and counts as no user command.
   */
  private prepareAhead(): void {
    const s = this.s;
    if (s.activeRunId) return;
    if (this.connection.quietSend({ type: 'setConfig', config: s.config })) this.connection.quietSend({ type: 'prepare' });
  }

  private watchConfig(): void {
    if (this.configWatched) return;
    this.configWatched = true;
    syncRewardFunction(this.store, (m) => this.connection.quietSend(m));
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

  /** Ends the current run (kept in the list) and sends the worker back to fresh weights. */
  resetRun(): boolean {
    this.settleCharts();
    // The run ends at the click: starting the worker can take a while, and metrics that arrive
    // meanwhile belong to whatever runs next, not to the run the user just closed.
    this.s.endRun();
    // Only a worker that existed before can still be reporting on the old run (it answers resetDone).
    this.discarding = this.connection.exists;
    const sent = this.send({ type: 'reset' });
    if (!sent) this.discarding = false;
    return sent;
  }

  settleCharts(): void {
    this.feed.flush();
    this.feed.resetSpeed();
  }

  markStateSaved(): void {
    this.stateAskedAt = this.now();
  }

  loadState(bytes: ArrayBuffer): Promise<ReplyOf['loadState']> {
    return this.connection.request('loadState', { bytes }, [bytes]);
  }

  /**
   * Starts the trainer worker before the first Start (called once the WebGPU self-test passed), so
   * its device, the kernels' pipelines, the task's SFT checkpoint and the baseline evaluation are
   * ready by the time the user asks for an iteration (prepareAhead). If it cannot initialise, it
   * is dropped without a message, and the next command starts a fresh one that reports why.
   */
  warmUp(): void {
    this.connection.ensure();
    this.prepareAhead();
    this.watchConfig();
  }

  /** Starts (or resumes) the active run; a run with a budget stops by itself when it is reached. */
  async start(start: RunStart = {}): Promise<void> {
    if (this.refusedByRewardFunction()) return;
    this.feed.flush();
    if (!this.beginIfNeeded(start)) return;
    this.feed.resetSpeed();
    const seq = this.s.sequence;
    if (seq?.stoppedBy) this.s.setSequence({ ...seq, stoppedBy: undefined });
    const untilIter = this.budgetTarget();
    // The reward-hacking β = 0 run keeps its last iteration for the inspector (hackedOffer.ts).
    const captureLast = untilIter !== undefined && capturesHackAtEnd(this.s.runs.find((r) => r.id === this.s.activeRunId));
    if (this.send({ type: 'start', untilIter, ...(captureLast ? { captureLast } : {}) })) {
      this.s.setRunState('running');
      this.s.setNotice(null);
    }
  }

  /**
   * Stops training at the next iteration boundary. The user's Pause (`captureInFlight`) also asks
   * the worker to capture the iteration it lets finish, so the Inspect tab has the paused state's
   * iteration without training one more; pauses the page makes for itself capture nothing.
   */
  async pause(opts: { captureInFlight?: boolean } = {}): Promise<void> {
    this.feed.resetSpeed();
    if (this.send(opts.captureInFlight ? { type: 'pause', captureInFlight: true } : { type: 'pause' })) {
      this.s.setRunState('paused');
      // Queued in the worker behind the iteration in flight: the state the run paused at.
      this.requestState(true);
    }
  }

  /** The user's Start/Pause (Space). */
  async toggle(): Promise<void> {
    if (this.s.runState === 'running') await this.pause({ captureInFlight: true });
    else await this.start();
  }

  async step(): Promise<void> {
    if (this.refusedByRewardFunction()) return;
    if (!this.beginIfNeeded()) return;
    if (this.send({ type: 'step' })) this.s.setRunState('paused');
  }

  /** Start and Step wait while the reward function awaits the visitor's acceptance or failed its check; the notice says why. */
  private refusedByRewardFunction(): boolean {
    const why = startBlockedBy(this.s);
    if (why) this.s.setNotice({ tone: 'warn', text: why });
    return why !== null;
  }

  /** Ends the current run (it stays in the run list), stops a "Run both", and returns the trainer to fresh weights. */
  async reset(): Promise<void> {
    this.s.setSequence(null);
    if (this.resetRun()) this.s.setNotice(null);
    this.prepareAhead();
  }

  /** The actor as safetensors bytes, or null when there is no trainer or it failed (a notice says why). */
  async snapshot(): Promise<ArrayBuffer | null> {
    try {
      return (await this.connection.request('snapshot', {})).bytes;
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
      return await this.connection.request('trainRewardModel', { pairs });
    } catch (e) {
      this.reportFailure(e);
      return null;
    }
  }

  /**
   * SFT in the tab at `dims` (src/worker/sftStage.ts); the progress lands in the SFT store. The
   * reply, or the failure (its message), for the caller to show inline.
   */
  async trainSft(dims: ModelDims, phaseSteps?: number): Promise<ReplyOf['trainSft'] | { failed: string }> {
    // The worker builds the SFT model on the current config's task and seed.
    this.send({ type: 'setConfig', config: this.s.config });
    try {
      return await this.connection.request('trainSft', { dims, ...(phaseSteps === undefined ? {} : { phaseSteps }) });
    } catch (e) {
      if (!(e instanceof RequestFailure)) throw e;
      return { failed: e.message };
    }
  }

  cancelSft(): void {
    this.send({ type: 'cancelSft' });
  }

  /** Seconds per SFT step at `dims` on this device and the recipe's steps, or null when the worker could not tell (quietly: an estimate). */
  async timeSft(dims: ModelDims): Promise<ReplyOf['timeSft'] | null> {
    const reply = this.connection.quietRequest('timeSft', { dims });
    if (!reply) return null;
    try {
      return await reply;
    } catch {
      return null;
    }
  }

  /** The worker's actor for `task`: these bytes, or the shipped checkpoint (null). */
  setActor(task: string, bytes: ArrayBuffer | null): void {
    const sent = bytes ? this.send({ type: 'loadCheckpoint', role: 'actor', bytes: bytes.slice(0), task }) : this.send({ type: 'useShippedActor', task });
    if (sent) this.prepareAhead();
  }

  /** The kept actor for `task` to a worker already running (a new one gets it from withActors). */
  setActorQuietly(task: string, bytes: ArrayBuffer): void {
    this.connection.quietSend({ type: 'loadCheckpoint', role: 'actor', bytes: bytes.slice(0), task });
  }

  /** The notice for a failed request, where none is shown yet (a send failure and the worker's error have theirs). */
  private reportFailure(e: unknown): void {
    if (!(e instanceof RequestFailure)) throw e;
    if (e instanceof RequestTimeoutError) this.s.setNotice({ tone: 'error', text: notices.requestTimedOut(e.kind, REQUEST_TIMEOUT_MS[e.kind] / 1000) });
    else if (e instanceof WorkerGoneError || e instanceof RequestDroppedError) this.s.setNotice({ tone: 'error', text: notices.requestLost(e.kind, e.message) });
  }

  // Run both, resume after a reload and the CPU fallback (runFlows.ts), under the names the page uses.
  readonly runArms = (name: string) => this.flows.runArms(name);
  readonly resume = () => this.flows.resume();
  readonly continueSequence = () => this.flows.continueSequence();
  readonly discardSequence = () => this.flows.discardSequence();
  readonly discardResume = () => this.flows.discardResume();
  readonly continueOnCpu = () => this.flows.continueOnCpu();

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
