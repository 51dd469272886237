// One harness for the worker tests: a TrainerHost whose environment is injected (by default the
// real PpoTrainer, the float64 CPU backend for `init` with 'cpu' and WebGPU on Dawn for 'webgpu'),
// every message it posts collected, and waits on those messages.
import type { Backend } from '../../src/backend/backend.ts';
import { saveCheckpoint } from '../../src/model/checkpoint.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { hostBackend } from '../../src/node/backend.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { getTask } from '../../src/tasks/index.ts';
import type { HostDeps } from '../../src/worker/hostDeps.ts';
import type { BackendChoice, PageToWorker, WorkerToPage } from '../../src/worker/protocol.ts';
import { TrainerHost } from '../../src/worker/trainerHost.ts';
import { cpuBackend } from './backends.ts';

export interface HarnessOptions {
  /** Shipped checkpoints by file stem; by default every fetch fails with a 404. */
  fetchCheckpoint?: HostDeps['fetchCheckpoint'];
  /** By default the real PpoTrainer. */
  createTrainer?: HostDeps['createTrainer'];
  /** By default `realBackend`. */
  makeBackend?: HostDeps['makeBackend'];
  /** Sees each message as it is posted, with the host (e.g. to send the next command from there). */
  onPost?: (m: WorkerToPage, host: TrainerHost) => void;
  /** How long `until` waits before it fails, and how often it looks, in ms. */
  patience?: number;
  pollEvery?: number;
}

/** `of('metrics')` → the metrics messages posted so far, as their own message type. */
function messagesOf(msgs: readonly WorkerToPage[]) {
  return <T extends WorkerToPage['type']>(type: T): Extract<WorkerToPage, { type: T }>[] => msgs.filter((m): m is Extract<WorkerToPage, { type: T }> => m.type === type);
}

export function workerHarness(opts: HarnessOptions = {}) {
  const msgs: WorkerToPage[] = [];
  const made: BackendChoice[] = [];
  const makeBackend = opts.makeBackend ?? realBackend;
  const host: TrainerHost = new TrainerHost({
    post: (m) => {
      msgs.push(m);
      opts.onPost?.(m, host);
    },
    makeBackend: (choice, onLost, onCompiled, ahead) => {
      made.push(choice);
      return makeBackend(choice, onLost, onCompiled, ahead);
    },
    fetchCheckpoint:
      opts.fetchCheckpoint ??
      (async (stem) => {
        throw new Error(`HTTP 404 for ${stem}`);
      }),
    createTrainer: opts.createTrainer ?? ((init) => PpoTrainer.create(init)),
    tick: () => new Promise((r) => setTimeout(r, 0)),
  });
  const of = messagesOf(msgs);
  const { patience = 10_000, pollEvery = 2 } = opts;
  /** Resolves once `cond` holds; fails naming `what` after the harness's patience. */
  const until = async (cond: () => boolean, what: string) => {
    const t0 = Date.now();
    while (!cond()) {
      if (Date.now() - t0 > patience) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, pollEvery));
    }
  };
  return {
    host,
    msgs,
    of,
    /** The backend choices asked for, in order (a device recovery asks again). */
    made,
    send: (m: PageToWorker) => host.handle(m),
    until,
    /** Until `count` messages of `type` have been posted in all. */
    untilMessages: (type: WorkerToPage['type'], count = 1) => until(() => of(type).length >= count, `${count} × ${type}`),
  };
}

/** The shared CPU reference backend, or a fresh WebGPU device on Dawn whose loss is reported and which the test hook can destroy. */
export const realBackend: HostDeps['makeBackend'] = (choice, onLost) => hostBackend(choice, onLost, () => cpuBackend as Backend);

/** The sizes of the tiny models the worker tests train: one layer, d = 32. */
export const tinyShape = (alphabet: string) => ({ vocabSize: 3 + alphabet.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 40 });

/** A tiny freshly initialised SFT actor for `task`. */
export async function tinyActor(task: string, seed: number): Promise<Uint8Array> {
  const t = getTask(task);
  const m = new Gpt(cpuBackend, { ...tinyShape(t.alphabet), head: 'lm' }, seed);
  const bytes = await saveCheckpoint(m, { alphabet: t.alphabet, task: t.name });
  m.dispose();
  return bytes;
}

/** A tiny freshly initialised reward model for `task`. */
export async function tinyRewardModel(task: string, seed: number): Promise<Uint8Array> {
  const t = getTask(task);
  const rm = RewardModel.fresh(cpuBackend, { ...tinyShape(t.alphabet), head: 'reward' }, t.alphabet, t.name, seed);
  const bytes = await rm.checkpoint();
  rm.dispose();
  return bytes;
}

/** Shipped checkpoints as the tiny models: `<task>` an actor, `<task>_rm` a reward model. */
export function tinyShipped(seed: number): HostDeps['fetchCheckpoint'] {
  return (stem) => (stem.endsWith('_rm') ? tinyRewardModel(stem.slice(0, -3), seed) : tinyActor(stem, seed));
}
