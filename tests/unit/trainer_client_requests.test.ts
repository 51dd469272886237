// The page's requests to the trainer worker: each one ends exactly once, on the reply that carries
// its id, on the error that carries it, on a failed send, on its time-out, or when the worker goes;
// and its pending entry is gone afterwards.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REQUEST_TIMEOUT_MS, RequestTimeoutError, SendFailedError, WorkerGoneError, WorkerReportedError } from '../../src/store/requests.ts';
import { TRAINER_MISSING } from '../../src/store/notices.ts';
import { STATE_SAVE_INTERVAL_MS } from '../../src/store/resume.ts';
import { vi } from 'vitest';
import { clientHarness } from '../helpers/fakeTrainerWorker.ts';
import { type KeptSftModel, useSft } from '../../src/store/sftState.ts';

const bytes = (...b: number[]) => new Uint8Array(b).buffer as ArrayBuffer;
const pairs = [{ prompt: '1+1=', chosen: '2', rejected: '3' }];

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('trainer client: replies are matched by request id', () => {
  it('two snapshots in flight each get their own bytes, whatever order the replies come in', async () => {
    const h = clientHarness();
    const first = h.client.models.snapshot();
    const second = h.client.models.snapshot();
    const [a, b] = h.worker.of('snapshot').map((m) => m.requestId);
    expect(a).not.toBe(b);
    h.worker.reply({ type: 'snapshot', bytes: bytes(2, 2), requestId: b });
    h.worker.reply({ type: 'snapshot', bytes: bytes(1, 1), requestId: a });
    expect([...new Uint8Array((await first)!)]).toEqual([1, 1]);
    expect([...new Uint8Array((await second)!)]).toEqual([2, 2]);
    expect(h.pending()).toBe(0);
  });

  it('a reply of another kind, or with an id nobody waits for, answers nothing', async () => {
    const h = clientHarness();
    const got = h.client.models.snapshot();
    const id = h.worker.idOf('snapshot');
    h.worker.reply({ type: 'rewardModelTrained', pairs: 1, accuracy: 1, requestId: id });
    h.worker.reply({ type: 'snapshot', bytes: bytes(9), requestId: id + 100 });
    expect(h.pending()).toBe(1);
    h.worker.reply({ type: 'snapshot', bytes: bytes(5), requestId: id });
    expect([...new Uint8Array((await got)!)]).toEqual([5]);
  });

  it('a reply without an id (the page test hook feeds those) answers the oldest request of its kind', async () => {
    const h = clientHarness();
    const first = h.client.models.trainRewardModel(pairs);
    const second = h.client.models.trainRewardModel(pairs);
    h.client.receive({ type: 'rewardModelTrained', pairs: 1, accuracy: 0.5 });
    expect(await first).toMatchObject({ pairs: 1, accuracy: 0.5 });
    expect(h.pending()).toBe(1);
    h.worker.reply({ type: 'rewardModelTrained', pairs: 1, accuracy: 1, requestId: h.worker.idOf('trainRewardModel') });
    expect(await second).toMatchObject({ accuracy: 1 });
  });

  it('an error carrying a request id fails that request only, and is shown as a trainer error', async () => {
    const h = clientHarness();
    const reward = h.client.models.trainRewardModel(pairs);
    const snap = h.client.models.snapshot();
    h.worker.reply({ type: 'error', message: 'task "arithmetic" has no learned reward model', requestId: h.worker.idOf('trainRewardModel') });
    expect(await reward).toBeNull();
    expect(h.store.getState().notice).toEqual({ tone: 'error', text: 'Trainer error: task "arithmetic" has no learned reward model' });
    expect(h.pending()).toBe(1);
    h.worker.reply({ type: 'snapshot', bytes: bytes(3), requestId: h.worker.idOf('snapshot') });
    expect(await snap).not.toBeNull();
  });

  it('the request itself rejects with WorkerReportedError naming the kind', async () => {
    const h = clientHarness();
    const got = h.client.connection.request('snapshot', {});
    h.worker.reply({ type: 'error', message: 'no actor weights yet: press Start or Step first', requestId: h.worker.idOf('snapshot') });
    const e = await got.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WorkerReportedError);
    expect(e).toMatchObject({ name: 'WorkerReportedError', kind: 'snapshot', message: 'no actor weights yet: press Start or Step first' });
  });
});

describe('trainer client: a failed send leaves no waiter behind', () => {
  it('no worker can start: trainRewardModel resolves null at once, says why, and nothing stays pending', async () => {
    const h = clientHarness();
    h.refuseWorkers();
    expect(await h.client.models.trainRewardModel(pairs)).toBeNull();
    expect(h.pending()).toBe(0);
    expect(h.store.getState().notice).toEqual({ tone: 'warn', text: `Train reward model requested. ${TRAINER_MISSING}` });
    const e = await h.client.connection.request('snapshot', {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SendFailedError);
    expect(e).toMatchObject({ name: 'SendFailedError', kind: 'snapshot' });
    expect(h.pending()).toBe(0);
  });

  it('postMessage throws: the request fails with SendFailedError and the notice names the command', async () => {
    const h = clientHarness();
    await h.client.step(); // a worker exists
    h.worker.postError = new Error('DataCloneError: an ArrayBuffer is detached');
    const e = await h.client.connection.request('loadState', { bytes: bytes(1) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SendFailedError);
    expect(h.pending()).toBe(0);
    expect(h.store.getState().notice?.text).toBe('Load state could not be sent to the trainer (DataCloneError: an ArrayBuffer is detached).');
    expect(await h.client.models.trainRewardModel(pairs)).toBeNull();
    expect(h.pending()).toBe(0);
  });
});

describe('trainer client: a reply that never comes', () => {
  it('a snapshot times out after its stated time, with a notice; a late reply changes nothing', async () => {
    const h = clientHarness();
    let settled: ArrayBuffer | null | undefined;
    void h.client.models.snapshot().then((b) => (settled = b));
    const id = h.worker.idOf('snapshot');
    await h.advance(REQUEST_TIMEOUT_MS.snapshot - 1);
    expect(settled).toBeUndefined();
    expect(h.pending()).toBe(1);
    await h.advance(1);
    expect(settled).toBeNull();
    expect(h.pending()).toBe(0);
    expect(h.store.getState().notice).toEqual({
      tone: 'error',
      text: `Snapshot: the trainer did not answer within ${REQUEST_TIMEOUT_MS.snapshot / 1000} s. Try again; if it keeps happening, reload the page (runs and their charts are kept).`,
    });
    h.worker.reply({ type: 'snapshot', bytes: bytes(1), requestId: id });
    expect(h.pending()).toBe(0);
  });

  it('every request kind has a time-out, and the request rejects with RequestTimeoutError', async () => {
    const h = clientHarness();
    for (const kind of ['snapshot', 'saveState', 'loadState', 'trainRewardModel'] as const) {
      expect(REQUEST_TIMEOUT_MS[kind]).toBeGreaterThan(0);
      const body = kind === 'loadState' ? { bytes: bytes(1) } : kind === 'trainRewardModel' ? { pairs } : {};
      const got = h.client.connection.request(kind, body as never).catch((x: unknown) => x);
      await h.advance(REQUEST_TIMEOUT_MS[kind]);
      const e = await got;
      expect(e).toBeInstanceOf(RequestTimeoutError);
      expect(e).toMatchObject({ kind, name: 'RequestTimeoutError' });
    }
    expect(h.pending()).toBe(0);
  });

  it('the state is saved on its own schedule while training, never on a metrics message', async () => {
    const h = clientHarness();
    await h.client.start();
    for (let i = 1; i <= 50; i++) h.worker.reply({ type: 'metrics', iter: i, values: { reward_mean: 0 } });
    expect(h.worker.of('saveState')).toHaveLength(0);
    await h.advance(STATE_SAVE_INTERVAL_MS);
    expect(h.worker.of('saveState')).toHaveLength(1);
    h.worker.reply({ type: 'state', iter: 50, bytes: bytes(1), requestId: h.worker.idOf('saveState') });
    await h.advance(STATE_SAVE_INTERVAL_MS);
    expect(h.worker.of('saveState')).toHaveLength(2);
    // Paused, the schedule stops (the Pause saved once).
    await h.client.pause();
    h.worker.reply({ type: 'state', iter: 50, bytes: bytes(1), requestId: h.worker.idOf('saveState') });
    const afterPause = h.worker.of('saveState').length;
    await h.advance(5 * STATE_SAVE_INTERVAL_MS);
    expect(h.worker.of('saveState')).toHaveLength(afterPause);
  });

  it('an automatic state save that is never answered blocks the next one only until its time-out', async () => {
    const h = clientHarness();
    await h.client.start();
    h.worker.reply({ type: 'metrics', iter: 1, values: { reward_mean: 0 } });
    await h.advance(STATE_SAVE_INTERVAL_MS);
    expect(h.worker.of('saveState')).toHaveLength(1);
    await h.advance(30_000);
    expect(h.worker.of('saveState')).toHaveLength(1); // still waiting for the first
    const before = h.store.getState().notice;
    await h.advance(REQUEST_TIMEOUT_MS.saveState);
    expect(h.store.getState().notice).toBe(before); // quiet: no notice for an automatic save
    await h.advance(STATE_SAVE_INTERVAL_MS);
    expect(h.worker.of('saveState')).toHaveLength(2);
  });
});

describe('trainer client: the worker goes', () => {
  it('a worker replaced by another (backend switch) fails its pending requests with WorkerGoneError', async () => {
    const h = clientHarness();
    const got = h.client.connection.request('snapshot', {}).catch((x: unknown) => x);
    const old = h.worker;
    h.store.getState().setBackend('cpu');
    await h.client.step();
    expect(old.terminated).toBe(true);
    expect(h.workers).toHaveLength(2);
    expect(await got).toBeInstanceOf(WorkerGoneError);
    expect(h.pending()).toBe(0);
  });

  it('a crashed worker fails every pending request; the snapshot resolves null with a notice', async () => {
    const h = clientHarness();
    const snap = h.client.models.snapshot();
    const reward = h.client.connection.request('trainRewardModel', { pairs }).catch((x: unknown) => x);
    h.worker.crash('out of memory');
    expect(await snap).toBeNull();
    expect(await reward).toBeInstanceOf(WorkerGoneError);
    expect(h.pending()).toBe(0);
    expect(h.store.getState().notice?.text).toMatch(/out of memory/);
  });
});

describe('trainer client: the worker made as the page opens (preload)', () => {
  it('is sent nothing until the warm-up adopts it: one worker, whose first message is init', async () => {
    const h = clientHarness();
    h.client.preload();
    h.client.preload(); // once
    expect(h.workers).toHaveLength(1);
    expect(h.worker.sent).toEqual([]);
    h.client.warmUp();
    expect(h.workers).toHaveLength(1);
    expect(h.worker.sent[0]).toEqual(expect.objectContaining({ type: 'init', backend: 'webgpu' }));
    h.worker.reply({ type: 'ready', adapter: 'test', backendLabel: 'WebGPU' });
    const snap = h.client.models.snapshot();
    h.worker.reply({ type: 'snapshot', bytes: bytes(7), requestId: h.worker.idOf('snapshot') });
    expect([...new Uint8Array((await snap)!)]).toEqual([7]);
  });

  it('is told the SFT models the page kept when it is put to use, before its init, not when it was made', async () => {
    const h = clientHarness();
    h.client.preload();
    // The kept models come back from the database after the worker was made (sftFlows.restoreSftModels).
    useSft.setState({ models: {} });
    useSft.getState().setModel({ task: 'arithmetic', origin: 'tab', dims: { nLayer: 2, nHead: 4, dModel: 128 }, meta: null, bytes: bytes(5, 6), savedAt: 0 } as KeptSftModel);
    try {
      h.client.warmUp();
      expect(h.workers).toHaveLength(1);
      expect(h.worker.sent.map((m) => m.type).slice(0, 2)).toEqual(['loadCheckpoint', 'init']);
      expect(h.worker.of('loadCheckpoint')[0]).toMatchObject({ role: 'actor', task: 'arithmetic' });
    } finally {
      useSft.setState({ models: {} });
    }
  });

  it('one whose script failed to load before it was adopted is let go: the next command starts a fresh one', async () => {
    const h = clientHarness();
    h.client.preload();
    const first = h.worker;
    first.crash('script failed to load');
    expect(first.terminated).toBe(true);
    expect(h.store.getState().notice).toBeNull(); // nobody asked for it yet: nothing to report
    const snap = h.client.models.snapshot();
    expect(h.workers).toHaveLength(2);
    expect(first.sent).toEqual([]);
    h.worker.reply({ type: 'snapshot', bytes: bytes(9), requestId: h.worker.idOf('snapshot') });
    expect([...new Uint8Array((await snap)!)]).toEqual([9]);
  });

  it('no worker can start now: preload leaves it to the first command, which says why', async () => {
    const h = clientHarness();
    h.refuseWorkers();
    h.client.preload();
    expect(h.workers).toHaveLength(0);
    expect(await h.client.models.trainRewardModel(pairs)).toBeNull();
    expect(h.store.getState().notice).toEqual({ tone: 'warn', text: `Train reward model requested. ${TRAINER_MISSING}` });
  });
});
