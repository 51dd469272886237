// The page's side of the trainer protocol: owns the trainer Web Worker, sends commands, and feeds
// its messages into the store. Metrics are batched and flushed on an animation frame at most
// every MIN_FLUSH_INTERVAL_MS, so a fast trainer cannot make the charts redraw more often than that.
import type { PpoConfig } from '../rl/config.ts';
import { isWorkerMessage, type CheckpointRole, type LabelledPair, type PageToWorker, type WorkerToPage } from '../worker/protocol.ts';
import { useApp } from './appStore.ts';
import type { MetricPoint } from './runs.ts';

type WorkerCtor = new (opts?: { name?: string }) => Worker;

// The trainer worker is built by another part of the project; globbing (rather than importing) it
// keeps this page building and usable before it exists. Vite turns `?worker` into a constructor.
const TRAINER_MODULES = import.meta.glob<WorkerCtor>('../worker/trainer.worker.ts', { query: '?worker', import: 'default' });

export const TRAINER_MISSING = 'The trainer worker is not part of this build yet, so nothing will train; everything else on the page works.';

let worker: Worker | null = null;
let workerBackend: string | null = null;
let pendingMetrics: MetricPoint[] = [];
let pendingRunId: string | null = null;
let frame = 0;
let lastFlush = 0;

/**
 * Redrawing the ten charts costs tens of milliseconds on a slow machine (software rendering:
 * measured with `npm run bench -- --only page`), so at 10+ iterations a second a per-frame flush
 * would take every frame. Five redraws a second still look live.
 */
const MIN_FLUSH_INTERVAL_MS = 200;

function flushFrame(): void {
  frame = 0;
  lastFlush = performance.now();
  const { appendMetrics } = useApp.getState();
  if (pendingRunId && pendingMetrics.length > 0) appendMetrics(pendingRunId, pendingMetrics);
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

/** Handles one worker message (also the entry point for `window.ppoPlayground.receive`). */
export function receive(msg: WorkerToPage): void {
  const s = useApp.getState();
  switch (msg.type) {
    case 'ready':
      s.setTrainerLabel(msg.backendLabel);
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
      break;
    }
    case 'samples':
      s.setSamples({ iter: msg.iter, rows: msg.rows });
      break;
    case 'ratios':
      s.setRatios({ iter: msg.iter, ratios: msg.ratios, advantages: msg.advantages });
      break;
    case 'paused':
      s.setRunState('paused');
      if (msg.stage) s.setStage(msg.stage);
      s.setNotice({ tone: 'info', text: `Paused: ${msg.reason}` });
      break;
    case 'error':
      // The worker stops its loop on any error; an idle page stays idle.
      if (s.runState === 'running') s.setRunState('paused');
      // A request that failed gets no reply of its own: release whoever waits for one.
      snapshotWaiters.splice(0).forEach((w) => w(null));
      rewardWaiters.splice(0).forEach((w) => w(null));
      s.setNotice({ tone: 'error', text: `Trainer error${msg.stage ? ` during ${msg.stage}` : ''}: ${msg.message}` });
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

async function ensureWorker(): Promise<Worker | null> {
  const backend = useApp.getState().backend;
  if (worker && workerBackend === backend) return worker;
  if (worker) worker.terminate();
  worker = null;
  const load = Object.values(TRAINER_MODULES)[0];
  if (!load) return null;
  const Ctor = await load();
  const w = new Ctor({ name: 'trainer' });
  w.onmessage = (ev: MessageEvent<unknown>) => {
    if (isWorkerMessage(ev.data)) receive(ev.data);
  };
  w.onerror = (ev) => receive({ type: 'error', message: ev.message || 'the trainer worker crashed' });
  w.postMessage({ type: 'init', backend } satisfies PageToWorker);
  worker = w;
  workerBackend = backend;
  return w;
}

async function send(msg: PageToWorker, transfer: Transferable[] = []): Promise<boolean> {
  const w = await ensureWorker();
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

/** A new run begins on Start/Step when none is active: it snapshots the config it trains with. */
async function beginIfNeeded(): Promise<boolean> {
  const s = useApp.getState();
  if (s.activeRunId) return true;
  const config: PpoConfig = s.config;
  if (!(await send({ type: 'setConfig', config }))) return false;
  s.beginRun();
  return true;
}

export const trainer = {
  async start() {
    if (!(await beginIfNeeded())) return;
    if (await send({ type: 'start' })) {
      useApp.getState().setRunState('running');
      useApp.getState().setNotice(null);
    }
  },
  async pause() {
    if (await send({ type: 'pause' })) useApp.getState().setRunState('paused');
  },
  async toggle() {
    if (useApp.getState().runState === 'running') await trainer.pause();
    else await trainer.start();
  },
  async step() {
    if (!(await beginIfNeeded())) return;
    if (await send({ type: 'step' })) useApp.getState().setRunState('paused');
  },
  /** Ends the current run (it stays in the run list) and returns the trainer to fresh weights. */
  async reset() {
    flushFrame();
    // The run ends at the click: starting the worker can take a while, and metrics that arrive
    // meanwhile belong to whatever runs next, not to the run the user just closed.
    useApp.getState().endRun();
    const sent = await send({ type: 'reset' });
    if (sent) useApp.getState().setNotice(null);
  },
  /** The actor as safetensors bytes, or null when there is no trainer or it reported an error. */
  async snapshot(): Promise<ArrayBuffer | null> {
    const got = new Promise<ArrayBuffer | null>((resolve) => snapshotWaiters.push(resolve));
    if (!(await send({ type: 'snapshot' }))) return null;
    return got;
  },
  /** Hands checkpoint bytes to the worker, which validates them before using them. */
  async loadCheckpoint(role: CheckpointRole, bytes: ArrayBuffer): Promise<boolean> {
    return send({ type: 'loadCheckpoint', role, bytes }, [bytes]);
  },
  /** Fine-tunes the reward model on human labels; null when there is no trainer or it failed. */
  async trainRewardModel(pairs: LabelledPair[]): Promise<Extract<WorkerToPage, { type: 'rewardModelTrained' }> | null> {
    const got = new Promise<Extract<WorkerToPage, { type: 'rewardModelTrained' }> | null>((resolve) => rewardWaiters.push(resolve));
    if (!(await send({ type: 'trainRewardModel', pairs }))) return null;
    return got;
  },
};

declare global {
  interface Window {
    /** Debug/test hook: feed protocol messages to the page as if the trainer had sent them. */
    ppoPlayground?: { receive: (msg: WorkerToPage) => void };
  }
}
if (typeof window !== 'undefined') window.ppoPlayground = { receive };
