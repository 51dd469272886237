// The page's side of the trainer protocol. Worker → page (here): each message goes to the action of
// the store that owns what it changes (the app store's slices, the SFT store, the inspector's
// store), metrics through the chart feed (metricFeed.ts). Page → worker: the run's commands
// (runCommands.ts) and the models' (modelCommands.ts). The line to the worker is
// trainerConnection.ts, the config it holds configSync.ts, the trainer state kept for a resume
// autosave.ts, and Run both, resume and the CPU fallback runFlows.ts. The page uses the one
// instance, `trainer`.
import type { StoreApi } from 'zustand';
import { t } from '../i18n/index.ts';
import type { WorkerToPage } from '../worker/protocol.ts';
import { useApp, type AppState, type RunStart } from './appStore.ts';
import { Autosave } from './autosave.ts';
import { ConfigSync } from './configSync.ts';
import { useInspection, type InspectionState } from './inspection.ts';
import { ownModelBatches } from './ownModelBatches.ts';
import { MetricFeed } from './metricFeed.ts';
import { ModelCommands } from './modelCommands.ts';
import { RequestDroppedError, WorkerReportedError } from './requests.ts';
import { deleteResumePoint, loadResumePoint, saveResumePoint } from './resume.ts';
import { RunCommands } from './runCommands.ts';
import { RunFlows, type ResumePoints } from './runFlows.ts';
import { saveSequence } from './sequencePersist.ts';
import { useHf } from './hfModel.ts';
import { useHfTrain } from './hfTrain.ts';
import { useSft } from './sftState.ts';
import { testHooksOn } from './testSwitches.ts';
import { TrainerConnection, type WorkerLike } from './trainerConnection.ts';
import { sendCapture, setUpWorker } from './workerSetup.ts';

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

export class TrainerClient {
  private readonly store: StoreApi<AppState>;
  private readonly inspection: StoreApi<InspectionState>;
  private readonly feed: MetricFeed;
  /** The line to the worker, with the requests waiting for a reply. */
  readonly connection: TrainerConnection;
  private readonly config: ConfigSync;
  private readonly autosave: Autosave;
  /** Start, Pause, Step, Reset, New comparison (runCommands.ts). */
  readonly run: RunCommands;
  /** Snapshot, checkpoints, the reward model, SFT (modelCommands.ts). */
  readonly models: ModelCommands;
  private readonly flows: RunFlows;
  /** Set between deviceLost and deviceRecovered / a new worker: the worker has no state to give. */
  private deviceDown = false;

  constructor(deps: ClientDeps) {
    this.store = deps.store;
    const inspection = deps.inspection ?? useInspection;
    this.inspection = inspection;
    const now = deps.now ?? (() => performance.now());
    this.feed = new MetricFeed(this.store, now);
    this.connection = new TrainerConnection({
      createWorker: deps.createWorker,
      setUp: (w) => void setUpWorker(w, inspection),
      backend: () => this.s.backend,
      testHooks: deps.testHooks === true,
      onMessage: (msg) => this.receive(msg),
      onSendFailed: (tone, text) => this.s.setNotice({ tone, text }),
      onDropped: () => {
        useHf.getState().modelLost();
        this.deviceDown = false;
        this.config.forget();
        this.s.setCompile(null);
      },
    });
    this.config = new ConfigSync(this.store, this.connection);
    const resumePoints = deps.resumePoints ?? { save: saveResumePoint, load: loadResumePoint, delete: deleteResumePoint };
    this.autosave = new Autosave({
      store: this.store,
      connection: this.connection,
      resumePoints,
      now,
      canAsk: () => !this.deviceDown && !this.run.discarding,
      pending: () => this.feed.pendingCount,
      flush: () => this.feed.flush(),
    });
    this.run = new RunCommands(this.store, this.connection, this.feed, this.config, this.autosave);
    this.models = new ModelCommands(this.store, this.connection, this.config);
    this.flows = new RunFlows(this.store, this.run, resumePoints, deps.saveSequence ?? saveSequence);
    inspection.subscribe((st, prev) => {
      if (st.capture !== prev.capture) sendCapture(this.connection.current, st.capture);
      // The own model's iterations reach the teaching views through the inspector's traces.
      if (st.traces !== prev.traces) this.s.setOwnBatches(ownModelBatches(st.traces, this.s.ownBatches));
    });
  }

  private get s(): AppState {
    return this.store.getState();
  }

  // ───────────────────────────── worker → page ─────────────────────────────

  /** Hands one worker message to its action (also the entry point for `window.ppoPlayground.receive`). */
  receive(msg: WorkerToPage): void {
    const s = this.s;
    if (this.run.discarding && RUN_MESSAGES.has(msg.type)) {
      if (msg.type === 'state') this.connection.requests.drop('state', msg.requestId, (kind) => new RequestDroppedError(kind, t('notices:reason.stateOfResetRun')));
      return;
    }
    switch (msg.type) {
      case 'resetDone':
        this.run.discarding = false;
        this.autosave.dropRequests(t('notices:reason.trainerReset'));
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
      case 'metrics':
        this.feed.receive(msg);
        break;
      case 'eval':
        s.evalReceived(msg);
        break;
      case 'samples':
        s.samplesReceived(msg);
        break;
      case 'ratios':
        s.ratiosReceived(msg);
        break;
      case 'trace':
        this.inspection.getState().traceReceived(
          msg,
          s.runs.find((r) => r.id === s.activeRunId),
        );
        break;
      case 'rewardFunctionChecked':
        s.rewardFunctionChecked(msg);
        break;
      case 'state':
      case 'stateLoaded':
      case 'snapshot':
      case 'rewardModelTrained':
      case 'sftDone':
      case 'sftTimed':
      case 'hfOpened':
      case 'hfGenerated':
      case 'hfTrained':
      case 'hfAdapter':
      case 'hfAdapterLoaded':
        // The request's own continuation acts on it; a reply nobody waits for (timed out) is dropped.
        this.connection.requests.answer(msg);
        break;
      case 'finished':
        this.run.settleCharts();
        this.flows.finished();
        this.autosave.saveNow();
        break;
      case 'paused':
        this.feed.resetSpeed();
        if (msg.rewardFunction || msg.nonFinite) this.feed.flush();
        s.pausedReported(msg);
        if (msg.nonFinite) this.autosave.saveNow(); // the restored state is the last good one
        break;
      case 'deviceLost':
        useHf.getState().modelLost();
        useHfTrain.getState().modelChanged();
        this.deviceGone(t('notices:reason.deviceLost'));
        s.deviceLost(msg);
        break;
      case 'deviceRecovered':
        this.feed.flush();
        this.deviceDown = false;
        // The replayed iterations report again: their first copies go, so the curve stays one line.
        if (s.activeRunId) this.inspection.getState().truncateRun(s.activeRunId, msg.fromIter);
        s.deviceRecovered(msg);
        useHf.getState().deviceRecovered();
        break;
      case 'deviceUnavailable':
        this.deviceGone(null);
        s.deviceUnavailable(msg);
        break;
      case 'sftProgress':
        useSft.getState().progressReceived(msg);
        break;
      case 'sftPhaseEval':
        useSft.getState().phaseEvalReceived(msg);
        break;
      case 'hfProgress':
        useHf.getState().progressReceived(msg);
        break;
      case 'hfTrainRow':
        useHfTrain.getState().rowReceived(msg);
        break;
      case 'hfTrace':
        this.inspection.getState().ownModelTraceReceived(msg, useHf.getState().model?.label ?? '');
        break;
      case 'hfTrainCheckpoint':
        useHfTrain.getState().checkpointReceived(msg);
        break;
      case 'hfTrainEval':
        useHfTrain.getState().evalReceived(msg);
        break;
      case 'error':
        this.onError(msg);
        break;
    }
  }

  /** The device went: nothing more charts at speed, and no state can be read until it is back. */
  private deviceGone(why: string | null): void {
    this.run.settleCharts();
    this.deviceDown = true;
    if (why) this.autosave.dropRequests(why);
  }

  private onError(msg: Extract<WorkerToPage, { type: 'error' }>): void {
    // A worker started ahead of any command (warmUp) that fails to initialise goes quietly: the
    // WebGPU self-test tells the user what is wrong, and the next command starts a fresh worker.
    if (this.connection.unused) {
      this.connection.drop();
      return;
    }
    const kind = msg.requestId === undefined ? undefined : this.connection.requests.kindOf(msg.requestId);
    if (kind) this.connection.requests.fail(msg.requestId!, new WorkerReportedError(kind, msg.message));
    // The worker stops its loop on any error; an idle page stays idle.
    this.run.discarding = false;
    this.feed.resetSpeed();
    const run = this.s.runs.find((r) => r.id === this.s.activeRunId);
    this.s.trainerFailed(msg, (run?.metrics.length ?? 0) + this.feed.pendingCount);
  }

  // The page's names for the run commands (runCommands.ts) and the flows made of them (runFlows.ts).
  readonly preload = () => this.run.preload();
  readonly warmUp = () => this.run.warmUp();
  readonly start = (start?: RunStart) => this.run.start(start);
  readonly pause = (opts?: { captureInFlight?: boolean }) => this.run.pause(opts);
  readonly toggle = () => this.run.toggle();
  readonly step = () => this.run.step();
  readonly reset = () => this.run.reset();
  readonly newComparison = () => this.run.newComparison();
  readonly runArms = (name: string) => this.flows.runArms(name);
  readonly startPreset = (name: string) => this.flows.startPreset(name);
  readonly resume = () => this.flows.resume();
  readonly continueSequence = () => this.flows.continueSequence();
  readonly discardSequence = () => this.flows.discardSequence();
  readonly discardResume = () => this.flows.discardResume();
  readonly continueOnCpu = () => this.flows.continueOnCpu();

  /** Test hooks (only with testHooks on; the worker refuses them otherwise). */
  readonly debug = {
    destroyDevice: (failReacquire = false) => void this.connection.send({ type: 'debugDestroyDevice', failReacquire }),
    setActorLr: (actorLr: number) => void this.connection.send({ type: 'debugSetActorLr', actorLr }),
  };

  /** Resolves once no Reset is waiting for the worker's acknowledgement. */
  settled(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.run.discarding ? setTimeout(check, 20) : resolve());
      check();
    });
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
