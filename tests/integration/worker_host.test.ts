// The trainer worker's protocol logic (TrainerHost) driven in Node: init/ready, config validation
// that never applies bad values, start/pause/step semantics with messages handled between
// iterations, the NaN guard restoring the state saved before the iteration, device loss, snapshot,
// reset, checkpoint loading and the learned reward model handed to the trainer. The PPO trainer is
// a scripted stand-in here (its own tests cover the math); worker_ppo.test.ts runs the real one.
import { describe, expect, it, vi } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { type KernelSpec, specKey } from '../../src/gpu/pipelines.ts';
import { SFT_MODEL_DIMS } from '../../src/model/config.ts';
import { decodeStepKernels, type DecodeShape } from '../../src/ops/decodeStep.ts';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { promptWidth } from '../../src/rl/rollout.ts';
import { getTask } from '../../src/tasks/index.ts';
import type { HostDeps } from '../../src/worker/hostDeps.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { FakeTrainer } from '../helpers/fakeTrainer.ts';
import { tinyActor, tinyRewardModel, workerHarness } from '../helpers/workerHarness.ts';

// The decode-step shapes the worker asks to build ahead, in order (the op builds them as before).
const decodePrecompiles = vi.hoisted(() => [] as DecodeShape[]);
vi.mock('../../src/ops/decodeStep.ts', async (importOriginal) => {
  const op = await importOriginal<typeof import('../../src/ops/decodeStep.ts')>();
  const precompileShape: typeof op.precompileShape = (be, shape) => {
    decodePrecompiles.push(shape);
    return op.precompileShape(be, shape);
  };
  return { ...op, precompileShape };
});

const arithmetic = getTask('arithmetic');
const sftBytes = (task: string) => tinyActor(task, 1);

interface Opts {
  nanAt?: number;
  throwAt?: number;
  ms?: number;
  fetchFails?: boolean;
  fetchFailures?: number;
  noSecondDevice?: boolean;
  kernels?: number;
  /** Called when the host asks for the kernels the first iteration does not need. */
  onCompileRest?: () => void;
  /** Sees the kernels a new device is asked to build ahead, once the device exists. */
  onAhead?: (kernels: readonly KernelSpec[]) => void;
}

/** The host on the CPU backend with scripted trainers, a device that can be lost, and fetches that can fail. */
function harness(opts: Opts = {}) {
  const trainers: FakeTrainer[] = [];
  const fetched: string[] = [];
  let lose: ((r: string) => void) | null = null;
  const makeBackend: HostDeps['makeBackend'] = async (_choice, onLost, onCompiled, ahead) => {
    if (lose && opts.noSecondDevice) throw new Error('no adapter');
    lose = onLost;
    await new Promise((r) => setTimeout(r, 0)); // the device arrives later: the page's next messages are in by then
    opts.onAhead?.(ahead?.() ?? []);
    // A stand-in for the worker's pipeline compilation: `kernels` pipelines built one by one.
    const n = opts.kernels ?? 0;
    const compiled = (async () => {
      for (let i = 1; i <= n; i++) {
        await new Promise((r) => setTimeout(r, 0));
        onCompiled?.(i, n, i);
      }
    })();
    const compileRest = async () => opts.onCompileRest?.();
    return { be: cpuBackend as Backend, adapter: 'test adapter', ...(n > 0 ? { compiled, compileRest } : {}) };
  };
  const h = workerHarness({
    makeBackend,
    fetchCheckpoint: async (stem) => {
      fetched.push(stem);
      if (opts.fetchFails || fetched.length <= (opts.fetchFailures ?? 0)) throw new Error('HTTP 404 Not Found');
      if (stem === 'arithmetic' || stem === 'sentiment') return sftBytes(stem);
      if (stem === 'sentiment_rm') return tinyRewardModel('sentiment', 2);
      throw new Error(`HTTP 404 for ${stem}`);
    },
    createTrainer: async (init) => {
      const t = new FakeTrainer(init, { nanAt: opts.nanAt, throwAt: opts.throwAt, ms: opts.ms ?? 2, numbering: 'count' });
      trainers.push(t);
      return t;
    },
    patience: 5000,
  });
  return { ...h, trainers, fetched, lose: (r: string) => lose!(r) };
}

describe('TrainerHost', () => {
  it('init answers ready with the adapter and the backend label', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    expect(h.of('ready')).toEqual([{ type: 'ready', adapter: 'test adapter', backendLabel: 'CPU reference (float64, slow)' }]);
  });

  it('setConfig applies the config it is sent: the page checked it where it entered (src/store/slices/configSlice.ts)', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    const good = { ...DEFAULT_CONFIG, clipLow: 0.1 };
    await h.send({ type: 'setConfig', config: good });
    expect(h.of('error')).toHaveLength(0);
    expect(h.host.currentConfig).toEqual(good);
  });

  it('step runs exactly one iteration and posts stage, metrics, samples and ratios', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'step' });
    expect(h.fetched).toEqual(['arithmetic']);
    expect(h.of('metrics').map((m) => m.iter)).toEqual([1]);
    expect(h.of('metrics')[0].values.policy_loss).toBe(1);
    expect(h.of('samples')[0].rows[0].prompt).toBe('1+1=');
    // with the clip settings the update ran with (the trainer's config), for the page's clipping view
    const { clipLow, clipHigh, dualClip } = DEFAULT_CONFIG;
    expect(h.of('ratios')[0]).toEqual({ type: 'ratios', iter: 1, ratios: [1, 1.1], advantages: [0.5, -0.5], clip: { clipLow, clipHigh, dualClip } });
    expect(h.of('stage').map((m) => m.stage)).toEqual(['rollout', 'experience', 'update', 'idle']);
    await h.send({ type: 'step' });
    expect(h.of('metrics').map((m) => m.iter)).toEqual([1, 2]);
    expect(h.trainers).toHaveLength(1);
    expect(h.host.isRunning).toBe(false);
  });

  it('start keeps iterating, pause stops at the next boundary, step then adds exactly one', async () => {
    const h = harness({ ms: 3 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'start' });
    await h.until(() => h.of('metrics').length >= 3, '3 iterations');
    await h.send({ type: 'pause' });
    expect(h.of('paused')).toHaveLength(1);
    // at most the iteration in flight finishes after the pause
    const atPause = h.of('metrics').length;
    await new Promise((r) => setTimeout(r, 150));
    const settled = h.of('metrics').length;
    expect(settled - atPause).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.of('metrics').length).toBe(settled);
    await h.send({ type: 'step' });
    expect(h.of('metrics').length).toBe(settled + 1);
    const iters = h.of('metrics').map((m) => m.iter);
    expect(iters).toEqual(iters.map((_, i) => i + 1));
  });

  it("the user's pause captures the iteration in flight, and only that one; a plain pause captures none", async () => {
    const h = harness({ ms: 25 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'start' });
    // Mid-update of the second iteration: its final readback is still ahead.
    await h.until(() => h.of('stage').filter((m) => m.stage === 'update').length >= 2, 'the second update stage');
    await h.send({ type: 'pause', captureInFlight: true });
    await h.until(() => h.of('metrics').length >= 2, 'the iteration in flight');
    await new Promise((r) => setTimeout(r, 100));
    const t = h.trainers[0];
    expect(t.captured).toEqual([
      { k: 1, captured: false },
      { k: 2, captured: true },
    ]);
    // The next step is not captured: the pause asked for its own iteration only.
    await h.send({ type: 'step' });
    // A pause that does not ask captures nothing.
    await h.send({ type: 'start' });
    await h.until(() => h.of('stage').filter((m) => m.stage === 'update').length >= 4, 'the fourth update stage');
    await h.send({ type: 'pause' });
    await h.until(() => h.of('metrics').length >= 4, 'the fourth iteration');
    await new Promise((r) => setTimeout(r, 100));
    expect(t.captured.slice(2)).toEqual([
      { k: 3, captured: false },
      { k: 4, captured: false },
    ]);
    // With the inspector's switch on, every iteration is captured at its start.
    await h.send({ type: 'setCapture', on: true });
    await h.send({ type: 'step' });
    expect(t.captured[4]).toEqual({ k: 5, captured: true });
  });

  it('a non-finite loss restores the state from before the iteration and pauses naming the metric and stage', async () => {
    const h = harness({ nanAt: 3 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'start' });
    await h.until(() => h.of('paused').length > 0, 'the NaN pause');
    await new Promise((r) => setTimeout(r, 50));
    const p = h.of('paused')[0];
    expect(p.reason).toMatch(/non-finite policy_loss = NaN in iteration 3/);
    expect(p.stage).toBe('update');
    expect(h.of('metrics').map((m) => m.iter)).toEqual([1, 2]);
    const t = h.trainers[0];
    expect(t.restored).toEqual([2]);
    expect(t.weights).toBe(2);
    expect(h.host.isRunning).toBe(false);
    await h.send({ type: 'snapshot', requestId: 1 });
    expect([...new Uint8Array(h.of('snapshot')[0].bytes)]).toEqual([7, 2]);
  });

  it('an exception in an iteration is reported with its stage and the state is restored', async () => {
    const h = harness({ throwAt: 2 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'step' });
    await h.send({ type: 'step' });
    const e = h.of('error');
    expect(e).toHaveLength(1);
    expect(e[0].message).toBe('kernel exploded');
    expect(e[0].stage).toBe('update');
    expect(h.trainers[0].restored).toEqual([1]);
  });

  it('a lost device that does not come back stops training, names itself, and snapshot still returns the last good weights', async () => {
    const h = harness({ ms: 3, noSecondDevice: true });
    await h.send({ type: 'init', backend: 'webgpu' });
    await h.send({ type: 'step' });
    h.lose('destroyed: test');
    expect(h.of('deviceLost').at(-1)).toMatchObject({ reason: 'destroyed: test', iter: 1 });
    await h.until(() => h.of('deviceUnavailable').length > 0, 'deviceUnavailable');
    expect(h.of('deviceUnavailable')[0].message).toMatch(/no adapter/);
    await h.send({ type: 'start' });
    await new Promise((r) => setTimeout(r, 50));
    expect(h.of('metrics')).toHaveLength(1);
    expect(h.host.isRunning).toBe(false);
    await h.send({ type: 'snapshot', requestId: 1 });
    // saveState exists, so the host copy is the actor the trainer was built from
    const snap = h.of('snapshot');
    expect(snap).toHaveLength(1);
    expect(snap[0].bytes.byteLength).toBeGreaterThan(100);
  });

  it('reset disposes the trainer; the next step starts again from iteration 1 with fresh weights', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'step' });
    await h.send({ type: 'step' });
    await h.send({ type: 'reset' });
    expect(h.trainers[0].disposed).toBe(true);
    await h.send({ type: 'step' });
    expect(h.trainers).toHaveLength(2);
    expect(h.of('metrics').map((m) => m.iter)).toEqual([1, 2, 1]);
  });

  it('a missing shipped checkpoint is an error naming the file', async () => {
    const h = harness({ fetchFails: true });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'step' });
    expect(h.of('error')[0].message).toMatch(/checkpoints\/arithmetic\.safetensors.*404/);
    expect(h.of('metrics')).toHaveLength(0);
  });

  it('the config sent before Start fetches the SFT checkpoint once; the trainer, and the next one after a reset, get those bytes', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    expect(h.fetched).toEqual(['arithmetic']); // before any Start
    await h.send({ type: 'step' });
    await h.send({ type: 'reset' });
    await h.send({ type: 'step' });
    expect(h.fetched).toEqual(['arithmetic']);
    expect(h.trainers).toHaveLength(2);
    expect(h.trainers[1].init.actorCheckpoint).toBe(h.trainers[0].init.actorCheckpoint);
    // Another task fetches its own.
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'sentiment' } });
    expect(h.fetched).toEqual(['arithmetic', 'sentiment']);
    expect(h.of('error')).toHaveLength(0);
  });

  it("a config starts building the decode step at the SFT checkpoint's shape, not the config's sizes, and fetches nothing itself", async () => {
    const shapes = decodePrecompiles;
    shapes.length = 0;
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    // The checkpoint is dModel 32 (tinyShape); the config asks for 64, which the checkpoint overrides.
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, dModel: 64, nHead: 4, maxResponseLength: 5 } });
    await h.until(() => shapes.length > 0, 'the decode precompile');
    const sft = parseCheckpoint(await sftBytes('arithmetic')).config;
    expect(sft.dModel).toBe(32);
    expect(shapes[0]).toEqual({ dModel: sft.dModel, nHead: sft.nHead, seqLen: promptWidth(arithmetic) + 5 });
    expect(h.fetched).toEqual(['arithmetic']);
  });

  it('a device asks for the decode step ahead for the config and actor the page sent after init, before the queue applied them', async () => {
    const asked: (readonly KernelSpec[])[] = [];
    const h = harness({ onAhead: (k) => asked.push(k) });
    const config = { ...DEFAULT_CONFIG, maxResponseLength: 5 };
    const actor = await sftBytes('arithmetic'); // dModel 32: not the shipped sizes
    // As the page sends them to a new worker: init, its kept actor, its config, without waiting.
    await Promise.all([
      h.send({ type: 'init', backend: 'cpu' }),
      h.send({ type: 'loadCheckpoint', role: 'actor', bytes: actor.slice().buffer }),
      h.send({ type: 'setConfig', config }),
    ]);
    const shape = { dModel: 32, nHead: 2, seqLen: promptWidth(arithmetic) + 5 };
    expect(asked.map((ks) => ks.map(specKey))).toEqual([decodeStepKernels(shape).map(specKey)]);
    // Applied since: a new device (after a loss) asks for the same from the host's own state.
    h.lose('test');
    await h.untilMessages('deviceRecovered');
    expect(asked.map((ks) => ks.map(specKey))).toEqual([decodeStepKernels(shape).map(specKey), decodeStepKernels(shape).map(specKey)]);
  });

  it('without an actor of its own the page trains the shipped checkpoint: its sizes are the ones asked for ahead', async () => {
    const asked: (readonly KernelSpec[])[] = [];
    const h = harness({ onAhead: (k) => asked.push(k) });
    await Promise.all([h.send({ type: 'init', backend: 'cpu' }), h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'sentiment', maxResponseLength: 7 } })]);
    const shape = { dModel: SFT_MODEL_DIMS.dModel, nHead: SFT_MODEL_DIMS.nHead, seqLen: promptWidth(getTask('sentiment')) + 7 };
    expect(asked.map((ks) => ks.map(specKey))).toEqual([decodeStepKernels(shape).map(specKey)]);
  });

  it('a prefetch that failed is not kept: the step fetches again and trains', async () => {
    const h = harness({ fetchFailures: 1 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    await h.until(() => h.fetched.length === 1, 'the prefetch');
    await h.send({ type: 'step' });
    expect(h.fetched).toEqual(['arithmetic', 'arithmetic']);
    expect(h.of('error')).toHaveLength(0);
    expect(h.of('metrics')).toHaveLength(1);
  });

  it('pipeline compilation is reported as it goes (at most ~20 messages, the last one complete) and the first trainer waits for it', async () => {
    const h = harness({ kernels: 45 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'step' });
    const progress = h.of('compiling');
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.length).toBeLessThanOrEqual(21);
    expect(progress.map((p) => p.done)).toEqual([...progress.map((p) => p.done)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ done: 45, total: 45 });
    // The trainer was built after the last pipeline.
    const order = h.msgs.filter((m) => m.type === 'compiling' || m.type === 'metrics').map((m) => m.type);
    expect(order.at(-1)).toBe('metrics');
    expect(order.indexOf('metrics')).toBe(order.length - 1);
  });

  it('loadCheckpoint checks the head and alphabet, and the loaded actor is what the trainer gets', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    const wrongTask = await sftBytes('sentiment');
    await h.send({ type: 'loadCheckpoint', role: 'actor', bytes: wrongTask.slice().buffer });
    expect(h.of('error')[0].message).toMatch(/alphabet does not match task "arithmetic"/);
    await h.send({ type: 'loadCheckpoint', role: 'actor', bytes: new Uint8Array([1, 2, 3]).buffer });
    expect(h.of('error')).toHaveLength(2);
    const mine = await sftBytes('arithmetic');
    await h.send({ type: 'loadCheckpoint', role: 'actor', bytes: mine.slice().buffer });
    expect(h.of('error')).toHaveLength(2);
    await h.send({ type: 'step' });
    expect(h.fetched).toEqual([]);
    expect(h.trainers[0].init.actorCheckpoint).toEqual(mine);
  });

  it('an actor loaded after a trainer was prepared is what snapshot returns, and what the next trainer gets', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    await h.send({ type: 'prepare' }); // builds a trainer from the shipped checkpoint
    expect(h.trainers).toHaveLength(1);
    const mine = await sftBytes('arithmetic');
    await h.send({ type: 'loadCheckpoint', role: 'actor', bytes: mine.slice().buffer });
    await h.send({ type: 'snapshot', requestId: 1 });
    expect(new Uint8Array(h.of('snapshot')[0].bytes)).toEqual(mine);
    await h.send({ type: 'prepare' });
    expect(h.trainers).toHaveLength(2);
    expect(h.trainers[1].init.actorCheckpoint).toEqual(mine);
    expect(h.of('error')).toHaveLength(0);
  });

  it('prepare waits for the kernels outside the command queue: an export sent meanwhile is answered at once', async () => {
    const h = harness({ kernels: 400 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    await h.send({ type: 'prepare' });
    const mine = await sftBytes('arithmetic');
    await h.send({ type: 'loadCheckpoint', role: 'actor', bytes: mine.slice().buffer });
    await h.send({ type: 'snapshot', requestId: 1 });
    expect(new Uint8Array(h.of('snapshot')[0].bytes)).toEqual(mine);
    // The kernels were still compiling when the export was answered, and no trainer was built yet.
    expect(h.of('compiling').at(-1)?.done ?? 0).toBeLessThan(400);
    expect(h.trainers).toHaveLength(0);
    // Once they are built, the preparation goes ahead, from the loaded actor.
    await h.until(() => h.trainers.length === 1, 'the prepared trainer');
    expect(h.of('compiling').at(-1)!.done).toBe(400);
    expect(h.trainers[0].init.actorCheckpoint).toEqual(mine);
  });

  it('the other kernels build once the first iteration is done, not while it waits for the first ones', async () => {
    const metricsWhenAsked: number[] = [];
    const h: ReturnType<typeof harness> = harness({ kernels: 200, onCompileRest: () => metricsWhenAsked.push(h.of('metrics').length) });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    await h.send({ type: 'prepare' });
    await h.send({ type: 'start' });
    await h.untilMessages('metrics', 3);
    await h.send({ type: 'pause' });
    // Asked once (the session ignores later asks), right after the first iteration's metrics.
    expect(metricsWhenAsked).toEqual([1]);
  });

  it('a prepared trainer waiting for Start lets the other kernels build', async () => {
    const trainersWhenAsked: number[] = [];
    const h: ReturnType<typeof harness> = harness({ kernels: 200, onCompileRest: () => trainersWhenAsked.push(h.trainers.length) });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    await h.send({ type: 'prepare' });
    expect(trainersWhenAsked).toEqual([]);
    await h.until(() => trainersWhenAsked.length > 0, 'the other kernels asked for');
    expect(trainersWhenAsked).toEqual([1]);
    expect(h.of('compiling').at(-1)!.done).toBe(200);
  });

  it('the SFT timing asked while the first kernels compile is answered after the first iteration Start asked for', async () => {
    const h = harness({ kernels: 200 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG } });
    await h.send({ type: 'prepare' });
    await h.send({ type: 'timeSft', requestId: 5, dims: { nLayer: 1, nHead: 2, dModel: 32 } });
    await h.send({ type: 'start' });
    await h.untilMessages('sftTimed');
    await h.send({ type: 'pause' });
    const order = h.msgs.filter((m) => m.type === 'metrics' || m.type === 'sftTimed').map((m) => m.type);
    expect(order[0]).toBe('metrics');
    expect(h.of('sftTimed')[0].requestId).toBe(5);
  });

  it("an answer echoes the requestId of the command it answers, an error reporting that command's failure too; other errors carry none", async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'snapshot', requestId: 11 }); // no weights yet
    await h.send({ type: 'saveState', requestId: 12 }); // no trainer yet
    await h.send({ type: 'loadState', requestId: 13, bytes: new Uint8Array([1, 2, 3]).buffer });
    await h.send({ type: 'trainRewardModel', requestId: 14, pairs: [] }); // arithmetic has no reward model
    await h.send({ type: 'loadCheckpoint', role: 'critic', bytes: new Uint8Array([1]).buffer });
    expect(h.of('error').map((e) => e.requestId)).toEqual([11, 12, 13, 14, undefined]);
    await h.send({ type: 'step' });
    await h.send({ type: 'snapshot', requestId: 21 });
    await h.send({ type: 'saveState', requestId: 22 });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'sentiment', rewardSource: 'model' } });
    await h.send({ type: 'trainRewardModel', requestId: 24, pairs: [{ prompt: 'the food was', chosen: ' awful.', rejected: ' great.' }] });
    expect(h.of('error')).toHaveLength(5);
    expect(h.of('snapshot').map((m) => m.requestId)).toEqual([21]);
    expect(h.of('state').map((m) => m.requestId)).toEqual([22]);
    expect(h.of('rewardModelTrained').map((m) => m.requestId)).toEqual([24]);
  });

  it('rewardSource "model" loads the shipped reward model and hands the trainer a working scorer', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'sentiment', rewardSource: 'model' } });
    await h.send({ type: 'step' });
    expect(h.of('error')).toHaveLength(0);
    expect(h.fetched).toEqual(['sentiment', 'sentiment_rm']);
    const scorer = h.trainers[0].init.rewardModel!;
    expect(scorer).toBeInstanceOf(RewardModel);
    const seq = cpuBackend.tensor([0, 1, 5, 6, 2, 1, 7, 8, 9, 2], [2, 5], 'i32');
    const mask = cpuBackend.tensor([0, 1, 1, 1, 1, 1, 1, 1, 1, 1], [2, 5]);
    const pos = cpuBackend.tensor([0, 0, 1, 2, 3, 0, 1, 2, 3, 4], [2, 5], 'i32');
    const s = await cpuBackend.read(scorer.score(seq, mask, pos, [4, 4]));
    expect(s).toHaveLength(2);
    expect(s.every(Number.isFinite)).toBe(true);
    expect(s[0]).not.toBe(s[1]);
  });

  it('trainRewardModel fine-tunes the reward model on labelled pairs and reports accuracy before and after', async () => {
    const h = harness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'sentiment', rewardSource: 'model' } });
    // A person who prefers the gloomy ending: the opposite of the lexicon.
    const pairs = [
      { prompt: 'the food was', chosen: ' awful.', rejected: ' great.' },
      { prompt: 'the film is', chosen: ' dull and sad.', rejected: ' good.' },
      { prompt: 'the song felt', chosen: ' very bad.', rejected: ' lovely.' },
      { prompt: 'the room looked', chosen: ' stale.', rejected: ' fresh and warm.' },
    ];
    await h.send({ type: 'trainRewardModel', requestId: 1, pairs });
    expect(h.of('error')).toHaveLength(0);
    const done = h.of('rewardModelTrained');
    expect(done).toHaveLength(1);
    expect(done[0].pairs).toBe(4);
    expect(done[0].accuracy).toBe(1);
    expect(done[0].accuracyBefore).toBeLessThan(1);
    // the trainer built afterwards scores with the same (fine-tuned) model object
    await h.send({ type: 'step' });
    expect(h.fetched.filter((f) => f === 'sentiment_rm')).toHaveLength(1);
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'arithmetic' } });
    await h.send({ type: 'trainRewardModel', requestId: 1, pairs });
    expect(h.of('error').at(-1)!.message).toMatch(/task "arithmetic" has no learned reward model/);
  });
});
