// The page's side of the trainer protocol: owns the trainer Web Worker, sends commands, and feeds
// its messages into the store. Metrics are batched and flushed on an animation frame at most
// every MIN_FLUSH_INTERVAL_MS, so a fast trainer cannot make the charts redraw more often than that.
import type { PpoConfig } from '../rl/config.ts';
import { findPreset } from '../rl/presets.ts';
import { adviceText } from '../worker/nanAdvice.ts';
import { isWorkerMessage, type CheckpointRole, type LabelledPair, type PageToWorker, type WorkerToPage } from '../worker/protocol.ts';
import { useApp, type RunStart } from './appStore.ts';
import { planArms, presetBudget, speedFrom } from './presetRun.ts';
import { classifyStateProblem, deleteResumePoint, loadResumePoint, saveResumePoint, STATE_SAVE_INTERVAL_MS } from './resume.ts';
import { saveSequence, sequenceOffer } from './sequencePersist.ts';
import type { MetricPoint } from './runs.ts';

export const TRAINER_MISSING = 'The trainer worker could not start, so nothing will train; everything else on the page works.';

let worker: Worker | null = null;
let workerBackend: string | null = null;
/** The worker answered `ready` (its backend exists). */
let workerReady = false;
/** A command other than the warm-up's has been sent to this worker. */
let commanded = false;
let pendingMetrics: MetricPoint[] = [];
let pendingRunId: string | null = null;
let frame = 0;
let lastFlush = 0;
/** Arrival times (ms) of the running run's latest metrics messages, for iterations per second. */
let arrivals: number[] = [];
/** Enough iterations to smooth the rate, few enough to follow a change (an eval every 10 is inside). */
const SPEED_WINDOW = 11;

function resetSpeed(): void {
  arrivals = [];
  useApp.getState().setSpeed(null);
}

function recordArrival(): void {
  arrivals.push(performance.now());
  if (arrivals.length > SPEED_WINDOW) arrivals.shift();
  useApp.getState().setSpeed(speedFrom(arrivals));
}

/**
 * Redrawing the ten charts costs tens of milliseconds on a slow machine (software rendering:
 * measured with `npm run bench -- --only page`), so at 10+ iterations a second a per-frame flush
 * would take every frame. Five redraws a second still look live.
 */
const MIN_FLUSH_INTERVAL_MS = 200;

function flushFrame(): void {
  frame = 0;
  const { appendMetrics } = useApp.getState();
  if (pendingRunId && pendingMetrics.length > 0) {
    appendMetrics(pendingRunId, pendingMetrics);
    // Only a redraw starts the interval: the empty flush a run's first point makes (pendingRunId
    // changes) used to hold that point back 200 ms.
    lastFlush = performance.now();
  }
  pendingMetrics = [];
}

function scheduleFlush(): void {
  if (frame !== 0) return;
  // Hidden tabs get no animation frames; fall back to a timer so history still accumulates.
  if (typeof requestAnimationFrame !== 'function' || document.hidden) {
    frame = setTimeout(flushFrame, 250) as unknown as number;
    return;
  }
  const wait = lastFlush + MIN_FLUSH_INTERVAL_MS - performance.now();
  frame = wait > 0 ? (setTimeout(() => (frame = requestAnimationFrame(flushFrame)), wait) as unknown as number) : requestAnimationFrame(flushFrame);
}

/**
 * Set when a reset is sent, cleared by the worker's `resetDone`: an iteration in flight at the
 * click still reports, and those results belong to the run the user just closed, not to a new one.
 */
let discarding = false;
const RUN_MESSAGES: ReadonlySet<WorkerToPage['type']> = new Set(['metrics', 'samples', 'ratios', 'eval', 'finished', 'state']);

// ───────────── saved trainer state (resume after reload; resume.ts has the rules) ─────────────

let stateAskedAt = -Infinity;
let stateInFlight = false;
/** Set between deviceLost and deviceRecovered / a backend switch: the worker has no state to give. */
let deviceDown = false;
/** A storage failure is reported once per run, not every ten seconds. */
let stateProblemRun: string | null = null;

/** Asks the worker for its full state: at most every STATE_SAVE_INTERVAL_MS, or now when `force`. */
function requestState(force = false): void {
  const s = useApp.getState();
  if (!worker || deviceDown || discarding || !s.activeRunId) return;
  const run = s.runs.find((r) => r.id === s.activeRunId);
  // A trainer exists once the run has an iteration.
  if (!run || (run.metrics.length === 0 && pendingMetrics.length === 0)) return;
  const now = performance.now();
  // A quiet request may get no answer (no trainer yet): an unanswered one stops blocking after a minute.
  if (!force && ((stateInFlight && now - stateAskedAt < 60_000) || now - stateAskedAt < STATE_SAVE_INTERVAL_MS)) return;
  stateAskedAt = now;
  stateInFlight = true;
  worker.postMessage({ type: 'saveState', requestId: ++requestIds, quiet: true } satisfies PageToWorker);
}

async function storeState(iter: number, bytes: ArrayBuffer): Promise<void> {
  flushFrame(); // the run record must hold every iteration before the state
  const s = useApp.getState();
  const run = s.runs.find((r) => r.id === s.activeRunId);
  if (!run) return;
  try {
    await saveResumePoint(run, { runId: run.id, iter, savedAt: Date.now(), backend: s.backend, wasRunning: s.runState === 'running', bytes });
    if (s.resume && s.resume.runId !== run.id) s.setResume(null); // the stored state is this run's now
  } catch (e) {
    if (stateProblemRun === run.id) return;
    stateProblemRun = run.id;
    const p = classifyStateProblem(e);
    s.setNotice({ tone: 'warn', text: `Trainer state not saved (${p.label}: ${p.message}). Training goes on and the run's charts are kept; after a reload it cannot resume past the last state saved.` });
  }
}

type StateReply = { ok: true; iter: number; config: PpoConfig } | { ok: false; message: string };
const stateWaiters: ((r: StateReply) => void)[] = [];
/** The last request id sent: the worker echoes each on its answer. */
let requestIds = 0;

/** Handles one worker message (also the entry point for `window.ppoPlayground.receive`). */
export function receive(msg: WorkerToPage): void {
  const s = useApp.getState();
  if (discarding && RUN_MESSAGES.has(msg.type)) return;
  switch (msg.type) {
    case 'resetDone':
      discarding = false;
      stateInFlight = false;
      break;
    case 'ready':
      workerReady = true;
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
      if (pendingRunId !== runId) {
        flushFrame();
        pendingRunId = runId;
      }
      pendingMetrics.push({ iter: msg.iter, values: { ...msg.values } });
      scheduleFlush();
      if (s.runState === 'running') recordArrival();
      requestState();
      break;
    }
    case 'state':
      stateInFlight = false;
      void storeState(msg.iter, msg.bytes);
      break;
    case 'stateLoaded':
      stateWaiters.splice(0).forEach((w) => w({ ok: true, iter: msg.iter, config: msg.config }));
      break;
    case 'deviceLost': {
      flushFrame();
      resetSpeed();
      deviceDown = true;
      stateInFlight = false;
      const when = msg.iter === null ? '' : ` after ${msg.iter} iteration${msg.iter === 1 ? '' : 's'}${msg.stage ? `, during ${msg.stage}` : ''}`;
      s.setNotice({ tone: 'warn', text: `The GPU device was lost (${msg.reason})${when}. Getting a new device and rebuilding the trainer from its last saved state…` });
      break;
    }
    case 'deviceRecovered': {
      flushFrame();
      deviceDown = false;
      // The replayed iterations report again: drop their first copies so the curve stays one line.
      if (s.activeRunId) s.truncateRun(s.activeRunId, msg.fromIter);
      s.setRunState(msg.resumed ? 'running' : s.activeRunId ? 'paused' : 'idle');
      const replay = msg.lostAt === null ? '' : ` ${msg.replayed} iteration${msg.replayed === 1 ? ' is' : 's are'} replayed (lost at ${msg.lostAt}, restarted from the state saved at ${msg.fromIter}).`;
      s.setNotice({ tone: 'info', text: `The GPU device was lost and replaced (${msg.adapter}); the trainer was rebuilt from its last saved state.${replay}${msg.resumed ? '' : ' Press Start to continue.'}` });
      break;
    }
    case 'deviceUnavailable':
      flushFrame();
      resetSpeed();
      deviceDown = true;
      s.setRunState(s.activeRunId ? 'paused' : 'idle');
      s.setCpuOffer({ message: msg.message, iter: msg.iter });
      s.setNotice({ tone: 'error', text: `The GPU device was lost and no new one came back (${msg.message}). The run's charts are kept; it can continue on the CPU backend.` });
      break;
    case 'eval': {
      const runId = s.activeRunId ?? s.beginRun().id;
      s.appendEval(runId, { iter: msg.iter, values: { ...msg.values }, prompts: msg.prompts, seconds: msg.seconds });
      break;
    }
    case 'finished':
      onFinished();
      requestState(true);
      break;
    case 'samples':
      s.setSamples({ iter: msg.iter, rows: msg.rows });
      break;
    case 'ratios':
      s.setRatios({ iter: msg.iter, ratios: msg.ratios, advantages: msg.advantages, seqRatios: msg.seqRatios, seqAdvantages: msg.seqAdvantages });
      break;
    case 'paused':
      resetSpeed();
      s.setRunState('paused');
      if (msg.stage) s.setStage(msg.stage);
      if (msg.nonFinite) {
        const n = msg.nonFinite;
        flushFrame();
        s.setNotice({
          tone: 'warn',
          text: `Paused: iteration ${n.iter} produced a non-finite ${n.quantity} (${n.value}) in the ${n.stage} stage. The state from before it was restored and nothing charted is lost. Suggested fix: ${adviceText(n.advice)}.`,
        });
        requestState(true); // the restored state is the last good one
      } else {
        s.setNotice({ tone: 'info', text: `Paused: ${msg.reason}` });
      }
      break;
    case 'error':
      // A worker started ahead of any command (warmUp) that fails to initialise goes quietly: the
      // WebGPU self-test tells the user what is wrong, and the next command starts a fresh worker.
      if (!workerReady && !commanded) {
        dropWorker();
        break;
      }
      // The worker stops its loop on any error; an idle page stays idle.
      discarding = false;
      resetSpeed();
      if (s.runState === 'running') s.setRunState('paused');
      // A request that failed gets no reply of its own: release whoever waits for one.
      snapshotWaiters.splice(0).forEach((w) => w(null));
      rewardWaiters.splice(0).forEach((w) => w(null));
      stateWaiters.splice(0).forEach((w) => w({ ok: false, message: msg.message }));
      stateInFlight = false;
      {
        const what = `Trainer error${msg.stage ? ` during ${msg.stage}` : ''}: ${msg.message}`;
        const seq = s.sequence;
        if (seq) {
          // A "Run both" stopped mid-arm: say which arm, how far it got, and what Start and Reset do.
          const run = s.runs.find((r) => r.id === s.activeRunId);
          const done = (run?.metrics.length ?? 0) + pendingMetrics.length;
          const arm = seq.arms[seq.index];
          s.setSequence({ ...seq, stoppedBy: msg.message });
          s.setNotice({
            tone: 'error',
            text: `“${seq.preset}” (Run both) stopped at arm ${seq.index + 1} of ${seq.arms.length}, “${arm?.label ?? '?'}”, after ${done} of ${seq.budget} iterations. ${what}. Start retries this arm from iteration ${done}; Reset ends Run both (finished arms are kept).`,
          });
        } else {
          s.setNotice({ tone: 'error', text: what });
        }
      }
      break;
    case 'snapshot':
      snapshotWaiters.splice(0).forEach((w) => w(msg.bytes));
      break;
    case 'rewardModelTrained':
      rewardWaiters.splice(0).forEach((w) => w(msg));
      break;
  }
}

const snapshotWaiters: ((b: ArrayBuffer | null) => void)[] = [];
const rewardWaiters: ((r: Extract<WorkerToPage, { type: 'rewardModelTrained' }> | null) => void)[] = [];

function dropWorker(): void {
  worker?.terminate();
  worker = null;
  workerBackend = null;
  workerReady = false;
  commanded = false;
  useApp.getState().setCompile(null);
}

async function ensureWorker(): Promise<Worker | null> {
  const backend = useApp.getState().backend;
  if (worker && workerBackend === backend) return worker;
  dropWorker();
  let w: Worker;
  try {
    // Vite bundles the worker as its own chunk from this URL (as the self-test worker's).
    w = new Worker(new URL('../worker/trainer.worker.ts', import.meta.url), { type: 'module', name: 'trainer' });
  } catch {
    return null;
  }
  // A dropped worker's last messages are not this page's business any more.
  w.onmessage = (ev: MessageEvent<unknown>) => {
    if (worker === w && isWorkerMessage(ev.data)) receive(ev.data);
  };
  w.onerror = (ev) => {
    if (worker === w) receive({ type: 'error', message: ev.message || 'the trainer worker crashed' });
  };
  w.postMessage({ type: 'init', backend, testHooks: testHooksOn() } satisfies PageToWorker);
  worker = w;
  workerBackend = backend;
  deviceDown = false;
  stateInFlight = false;
  return w;
}

/**
 * With no run active, hands the worker the current config and asks it to get the trainer and the
 * SFT baseline evaluation ready (`prepare`), so Start goes straight to the first iteration. Sent
 * straight to an existing worker: it starts none, and counts as no user command.
 */
function prepareAhead(): void {
  const s = useApp.getState();
  if (!worker || s.activeRunId || workerBackend !== s.backend) return;
  worker.postMessage({ type: 'setConfig', config: s.config } satisfies PageToWorker);
  worker.postMessage({ type: 'prepare' } satisfies PageToWorker);
}

/** A settings change made before Start is prepared for after the user stops changing things. */
const PREPARE_DELAY_MS = 600;
let configWatched = false;

function watchConfig(): void {
  if (configWatched) return;
  configWatched = true;
  let timer: ReturnType<typeof setTimeout> | null = null;
  useApp.subscribe((state, prev) => {
    if (state.config === prev.config || state.activeRunId) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      prepareAhead();
    }, PREPARE_DELAY_MS);
  });
}

/** Test hooks (debug* messages) are on only when localStorage says so: a shared link cannot turn them on. */
function testHooksOn(): boolean {
  try {
    return typeof localStorage !== 'undefined' && localStorage.getItem('ppo-test-hooks') === '1';
  } catch {
    return false;
  }
}

async function send(msg: PageToWorker, transfer: Transferable[] = []): Promise<boolean> {
  const w = await ensureWorker();
  commanded = true;
  if (!w) {
    useApp.getState().setNotice({ tone: 'warn', text: `${labelOf(msg)} requested. ${TRAINER_MISSING}` });
    return false;
  }
  w.postMessage(msg, transfer);
  return true;
}

function labelOf(msg: PageToWorker): string {
  // camelCase message names read as words: trainRewardModel → "Train reward model".
  const words = msg.type.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A new run begins on Start/Step when none is active: it snapshots the config it trains with, and
 * the budget of the preset that config still is (so Start stops there and the ETA counts to it).
 */
async function beginIfNeeded(start: RunStart = {}): Promise<boolean> {
  const s = useApp.getState();
  if (s.activeRunId) return true;
  const config: PpoConfig = s.config;
  if (!(await send({ type: 'setConfig', config }))) return false;
  s.beginRun({ budget: presetBudget(config, s.preset, s.budgetOverride), preset: s.preset, ...start });
  return true;
}

/**
 * Where Start stops by itself: the active run's budget, as the trainer's total iteration count. In
 * "Run both" always (an arm whose last iteration finished while paused moves on to the next arm at
 * once); otherwise only while the run is short of it, so Start after the budget trains on past it.
 */
function budgetTarget(): number | undefined {
  const { runs, activeRunId, sequence } = useApp.getState();
  const run = runs.find((r) => r.id === activeRunId);
  if (!run?.budget) return undefined;
  return sequence || run.metrics.length < run.budget ? run.budget : undefined;
}

/** The worker stopped at the budget: the next arm of "Run both", or a notice that it is done. */
function onFinished(): void {
  flushFrame();
  resetSpeed();
  const s = useApp.getState();
  s.setRunState('paused');
  s.setStage('idle');
  const seq = s.sequence;
  if (seq && seq.index + 1 < seq.arms.length) {
    void startArm(seq.index + 1);
    return;
  }
  const run = s.runs.find((r) => r.id === s.activeRunId);
  if (seq) {
    s.setSequence(null);
    s.setNotice({ tone: 'info', text: `"${seq.preset}" done: ${seq.arms.map((a) => a.label).join(' and ')} trained ${seq.budget} iterations each, overlaid in the charts.` });
  } else {
    s.setNotice({ tone: 'info', text: `Reached the budget of ${run?.budget ?? '?'} iterations. Start trains on past it; Reset begins a new run.` });
  }
}

/** Trains arm `index` of the current sequence as a new run from fresh weights. */
async function startArm(index: number): Promise<void> {
  const seq = useApp.getState().sequence;
  const arm = seq?.arms[index];
  if (!seq || !arm) return;
  await resetWorker();
  const s = useApp.getState();
  const problems = s.applyConfig(arm.config);
  if (problems.length > 0) {
    // Checked when the sequence was planned; a config cannot turn invalid, but never train a bad one.
    s.setSequence(null);
    s.setNotice({ tone: 'error', text: `Run both stopped: ${arm.label}: ${problems.map((p) => p.message).join('; ')}` });
    return;
  }
  s.setSequence({ preset: seq.preset, arms: seq.arms, budget: seq.budget, index });
  await trainer.start({ name: arm.label, budget: seq.budget, preset: seq.preset });
  // The arm's run, so that a reload can resume it (sequencePersist.ts).
  const now = useApp.getState();
  if (now.sequence && now.activeRunId) now.setSequence({ ...now.sequence, runId: now.activeRunId });
}

/** Ends the current run (kept in the list) and sends the worker back to fresh weights. */
async function resetWorker(): Promise<boolean> {
  flushFrame();
  resetSpeed();
  // The run ends at the click: starting the worker can take a while, and metrics that arrive
  // meanwhile belong to whatever runs next, not to the run the user just closed.
  useApp.getState().endRun();
  // Only a worker that existed before can still be reporting on the old run (it answers resetDone).
  discarding = worker !== null;
  const sent = await send({ type: 'reset' });
  if (!sent) discarding = false;
  return sent;
}

export const trainer = {
  /**
   * Starts the trainer worker before the first Start (called once the WebGPU self-test passed), so
   * its device, the kernels' pipelines, the task's SFT checkpoint and the baseline evaluation are
   * ready by the time the user asks for an iteration (prepareAhead). If it cannot initialise, it
   * is dropped without a message, and the next command starts a fresh one that reports why.
   */
  warmUp() {
    void ensureWorker().then(() => prepareAhead());
    watchConfig();
  },
  /** Starts (or resumes) the active run; a run with a budget stops by itself when it is reached. */
  async start(start: RunStart = {}) {
    flushFrame();
    if (!(await beginIfNeeded(start))) return;
    resetSpeed();
    const seq = useApp.getState().sequence;
    if (seq?.stoppedBy) useApp.getState().setSequence({ ...seq, stoppedBy: undefined });
    if (await send({ type: 'start', untilIter: budgetTarget() })) {
      useApp.getState().setRunState('running');
      useApp.getState().setNotice(null);
    }
  },
  async pause() {
    resetSpeed();
    if (await send({ type: 'pause' })) {
      useApp.getState().setRunState('paused');
      // Queued in the worker behind the iteration in flight: the state the run paused at.
      requestState(true);
    }
  },
  /**
   * Resumes the run whose state was saved before the reload: the worker validates and loads the
   * state, the run becomes active again with its curve cut at the state's iteration, and training
   * goes on appending to the same run record. A state that fails is reported by name; the run and
   * its charts stay.
   */
  async resume(): Promise<boolean> {
    const s = useApp.getState();
    const offer = s.resume;
    if (!offer) return false;
    const run = s.runs.find((r) => r.id === offer.runId);
    const what = `“${run?.name ?? offer.runName}” from iteration ${offer.iter}`;
    const fail = (label: string, message: string) => {
      useApp.getState().setResume(null);
      useApp.getState().setNotice({ tone: 'error', text: `Could not resume ${what} (${label}: ${message}). The run and its charts are kept; Start begins a new run.` });
      return false;
    };
    let point;
    try {
      point = await loadResumePoint();
    } catch (e) {
      const p = classifyStateProblem(e);
      return fail(p.label, p.message);
    }
    if (!point || point.runId !== offer.runId || !run) return fail('storage', 'the saved state is gone or belongs to another run');
    if (s.runState === 'running') await trainer.pause();
    if (s.activeRunId && s.activeRunId !== run.id) await resetWorker();
    flushFrame();
    resetSpeed();
    const reply = new Promise<StateReply>((resolve) => stateWaiters.push(resolve));
    if (!(await send({ type: 'loadState', requestId: ++requestIds, bytes: point.bytes }, [point.bytes]))) return false;
    const r = await reply;
    if (!r.ok) {
      void deleteResumePoint().catch(() => {});
      const p = classifyStateProblem(new Error(r.message));
      return fail(p.label, p.message);
    }
    const now = useApp.getState();
    now.activateRun(run.id);
    now.truncateRun(run.id, r.iter);
    // Resumed on another backend (e.g. "Continue on the CPU backend"): the record says so from here.
    now.setRunBackend(run.id, now.backend, r.iter);
    now.applyConfig(r.config);
    now.setResume(null);
    now.setCpuOffer(null);
    stateAskedAt = performance.now(); // the state just loaded is the saved one
    await trainer.start();
    useApp.getState().setNotice({ tone: 'info', text: `Resumed ${what}.` });
    return true;
  },
  /**
   * After a reload: goes on with the "Run both" the page left unfinished. The arm in progress
   * resumes from its saved state when there is one (else, or if that fails, it trains again from
   * the start); the arms after it follow.
   */
  async continueSequence() {
    const s = useApp.getState();
    const saved = s.sequenceOffer;
    if (!saved) return;
    s.setSequenceOffer(null);
    // Looked at again now: the arm's run may have been resumed and finished since the page opened.
    const offer = sequenceOffer(saved.seq.runId ? saved.seq : { ...saved.seq, runId: undefined }, s.runs, s.resume);
    if (!offer) {
      saveSequence(null);
      s.setNotice({ tone: 'info', text: `“${saved.seq.preset}”: every arm has trained its ${saved.seq.budget} iterations already.` });
      return;
    }
    if (s.runState === 'running') await trainer.pause();
    s.setPreset(offer.seq.preset);
    s.setSequence(offer.seq);
    if (offer.resumable && offer.seq.runId && useApp.getState().resume?.runId === offer.seq.runId) {
      if (await trainer.resume()) return;
      const why = useApp.getState().notice?.text ?? 'the saved state could not be loaded';
      await startArm(offer.seq.index);
      useApp.getState().setNotice({ tone: 'warn', text: `${why} Run both goes on: “${offer.seq.arms[offer.seq.index].label}” trains again from iteration 0.` });
      return;
    }
    await startArm(offer.seq.index);
  },
  /** Forgets the unfinished "Run both" (its finished runs, and any saved state, stay). */
  discardSequence() {
    useApp.getState().setSequenceOffer(null);
    if (!useApp.getState().sequence) saveSequence(null);
  },
  /** Forgets the saved state (the run and its charts stay). */
  async discardResume() {
    useApp.getState().setResume(null);
    await deleteResumePoint().catch(() => {});
  },
  /**
   * After a lost GPU device that did not come back: the CPU backend (a new worker) resumes the
   * active run from its saved state, or starts fresh when no state of it was saved.
   */
  async continueOnCpu() {
    const s = useApp.getState();
    const offer = s.cpuOffer;
    s.setCpuOffer(null);
    s.setBackend('cpu');
    const run = s.runs.find((r) => r.id === s.activeRunId);
    let point = null;
    try {
      point = await loadResumePoint();
    } catch {
      point = null;
    }
    if (run && point && point.runId === run.id) {
      s.setResume({ runId: run.id, runName: run.name, iter: point.iter, savedAt: point.savedAt, wasRunning: true });
      await trainer.resume();
      return;
    }
    await resetWorker();
    s.setNotice({ tone: 'warn', text: `Switched to the CPU backend; no saved state of the run was found${offer?.iter != null ? ` (the worker's last was at iteration ${offer.iter})` : ''}, so Start begins a new run.` });
  },
  /**
   * "Run both": every arm of the paired preset `name`, one after the other, each a new run from
   * fresh weights named by its arm label and trained for the preset's budget. Pause/Start pause and
   * resume the arm in progress; Reset stops the sequence, keeping the runs already trained.
   */
  async runArms(name: string) {
    const s = useApp.getState();
    const preset = findPreset(name);
    if (!preset) {
      s.setNotice({ tone: 'error', text: `No preset named "${name}".` });
      return;
    }
    const plan = planArms(preset, s.config);
    if (!plan.ok) {
      s.setNotice({ tone: 'error', text: `"${name}" not started: ${plan.problems.join('; ')}` });
      return;
    }
    if (s.runState === 'running') await trainer.pause();
    s.setPreset(name);
    s.setSequence({ preset: name, arms: plan.arms, index: 0, budget: s.budgetOverride ?? preset.iterations });
    await startArm(0);
  },
  async toggle() {
    if (useApp.getState().runState === 'running') await trainer.pause();
    else await trainer.start();
  },
  async step() {
    if (!(await beginIfNeeded())) return;
    if (await send({ type: 'step' })) useApp.getState().setRunState('paused');
  },
  /** Ends the current run (it stays in the run list), stops a "Run both", and returns the trainer to fresh weights. */
  async reset() {
    useApp.getState().setSequence(null);
    const sent = await resetWorker();
    if (sent) useApp.getState().setNotice(null);
    prepareAhead();
  },
  /** The actor as safetensors bytes, or null when there is no trainer or it reported an error. */
  async snapshot(): Promise<ArrayBuffer | null> {
    const got = new Promise<ArrayBuffer | null>((resolve) => snapshotWaiters.push(resolve));
    if (!(await send({ type: 'snapshot', requestId: ++requestIds }))) return null;
    return got;
  },
  /** Hands checkpoint bytes to the worker, which validates them before using them. */
  async loadCheckpoint(role: CheckpointRole, bytes: ArrayBuffer): Promise<boolean> {
    const sent = await send({ type: 'loadCheckpoint', role, bytes }, [bytes]);
    // The worker dropped the trainer it had prepared: prepare one from the loaded weights.
    if (sent) prepareAhead();
    return sent;
  },
  /** Fine-tunes the reward model on human labels; null when there is no trainer or it failed. */
  async trainRewardModel(pairs: LabelledPair[]): Promise<Extract<WorkerToPage, { type: 'rewardModelTrained' }> | null> {
    const got = new Promise<Extract<WorkerToPage, { type: 'rewardModelTrained' }> | null>((resolve) => rewardWaiters.push(resolve));
    if (!(await send({ type: 'trainRewardModel', requestId: ++requestIds, pairs }))) return null;
    return got;
  },
};

/** Test hooks (only with localStorage 'ppo-test-hooks' = '1'; the worker refuses them otherwise). */
const debugHooks = {
  destroyDevice: (failReacquire = false) => void send({ type: 'debugDestroyDevice', failReacquire }),
  setActorLr: (actorLr: number) => void send({ type: 'debugSetActorLr', actorLr }),
};

declare global {
  interface Window {
    /**
     * Debug/test hook: feed protocol messages to the page as if the trainer had sent them, and
     * `settled()`, which resolves once no Reset is waiting for the worker's acknowledgement (until
     * then the page drops run messages, which belong to the run that was reset).
     */
    ppoPlayground?: { receive: (msg: WorkerToPage) => void; settled: () => Promise<void>; debug?: typeof debugHooks };
  }
}
/** Resolves once no Reset is waiting for the worker's acknowledgement. */
function settled(): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (discarding ? setTimeout(check, 20) : resolve());
    check();
  });
}

if (typeof window !== 'undefined') window.ppoPlayground = { receive, settled, ...(testHooksOn() ? { debug: debugHooks } : {}) };
