// The teaching views' data per run: each run keeps its latest batch, the views show the run the
// student picked (else the run training, else the newest), a new run starts empty without losing
// the earlier run's batch (Run both), and a deleted run takes its batch with it. The trainer client
// files each ratios message under the active run with the clip settings it was trained with.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { createAppStore } from '../../src/store/appStore.ts';
import { changedBatches, keepBatches, shownRunId, type BatchRatios, type BatchSamples } from '../../src/store/batches.ts';
import { clientHarness, metrics } from '../helpers/fakeTrainerWorker.ts';

const clip = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3 };
const samplesAt = (iter: number, prompt = 'p'): BatchSamples => ({
  iter,
  rows: [{ prompt, response: 'x', reward: iter, endedWithEos: true, tokens: [{ text: 'x', advantage: 1, kl: 0, ratio: 1, value: 0 }] }],
});
const ratiosAt = (iter: number, r = 1): BatchRatios => ({ iter, ratios: [r, r], advantages: [1, -1], clip });

describe('teaching-view batches: one per run', () => {
  it('Run both: arm 2 starts empty, arm 1 keeps its batch, and the student can switch between them', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const arm1 = s().beginRun({ name: 'β = 0' }).id;
    s().setSamples(arm1, samplesAt(1, 'soup'));
    s().setRatios(arm1, ratiosAt(1, 1.5));
    expect(s().samples?.rows[0].prompt).toBe('soup');
    expect(s().ratios?.ratios).toEqual([1.5, 1.5]);
    expect(s().batchRunId).toBe(arm1);

    const arm2 = s().beginRun({ name: 'β = 0.6' }).id;
    expect(s().samples).toBeNull();
    expect(s().ratios).toBeNull();
    expect(s().batches[arm1].samples?.rows[0].prompt).toBe('soup');
    s().setSamples(arm2, samplesAt(1, 'calm'));
    s().setRatios(arm2, ratiosAt(1, 0.9));
    expect(s().samples?.rows[0].prompt).toBe('calm');

    s().viewRun(arm1);
    expect(s().batchRunId).toBe(arm1);
    expect(s().samples?.rows[0].prompt).toBe('soup');
    expect(s().ratios?.ratios).toEqual([1.5, 1.5]);
    // a later iteration of the run training is filed under it, not under the run on show
    s().setSamples(arm2, samplesAt(2, 'calmer'));
    expect(s().samples?.rows[0].prompt).toBe('soup');
    expect(s().batches[arm2].samples?.iter).toBe(2);
    s().viewRun(arm2);
    expect(s().samples?.rows[0].prompt).toBe('calmer');
  });

  it('each run keeps only its latest iteration', () => {
    const store = createAppStore();
    const id = store.getState().beginRun().id;
    for (let i = 1; i <= 5; i++) store.getState().setRatios(id, ratiosAt(i));
    expect(Object.keys(store.getState().batches)).toEqual([id]);
    expect(store.getState().batches[id].ratios?.iter).toBe(5);
  });

  it('with no run training the views show the newest run with a batch; a picked run stays until a new run begins', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const a = s().beginRun().id;
    s().setSamples(a, samplesAt(3));
    const b = s().beginRun().id;
    s().setSamples(b, samplesAt(7));
    s().endRun();
    expect(s().batchRunId).toBe(b);
    s().viewRun(a);
    expect(s().samples?.iter).toBe(3);
    s().beginRun();
    expect(s().viewRunId).toBeNull();
    expect(s().samples).toBeNull();
  });

  it('a deleted run takes its batch with it; the views fall back to another run', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const a = s().beginRun().id;
    s().setSamples(a, samplesAt(1));
    const b = s().beginRun().id;
    s().setSamples(b, samplesAt(2));
    s().viewRun(b);
    s().deleteRun(b);
    expect(s().batches).not.toHaveProperty(b);
    expect(s().viewRunId).toBeNull();
    expect(s().batchRunId).toBe(a);
    expect(s().samples?.iter).toBe(1);
  });

  it('resuming a run shows its own saved batch until its next iteration', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const a = s().beginRun().id;
    s().endRun();
    s().restoreBatches({ [a]: { samples: samplesAt(4), ratios: ratiosAt(4) }, 'run-gone': { samples: samplesAt(9), ratios: null } });
    expect(Object.keys(s().batches)).toEqual([a]);
    s().activateRun(a);
    expect(s().ratios?.iter).toBe(4);
  });

  it('restoring keeps a batch the page already holds over the saved one (it is newer)', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const a = s().beginRun().id;
    s().setSamples(a, samplesAt(6));
    s().restoreBatches({ [a]: { samples: samplesAt(2), ratios: null } });
    expect(s().samples?.iter).toBe(6);
  });

  it('picking a run that does not exist follows the run training', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const a = s().beginRun().id;
    s().setSamples(a, samplesAt(1));
    s().viewRun('run-nope');
    expect(s().viewRunId).toBeNull();
    expect(s().batchRunId).toBe(a);
  });
});

describe('teaching-view batches: pure helpers', () => {
  it('shownRunId: picked, else active (even before its first batch), else the newest with a batch', () => {
    const runs = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    const batches = { a: { samples: samplesAt(1), ratios: null }, b: { samples: samplesAt(1), ratios: null } };
    expect(shownRunId({ runs, activeRunId: 'c', viewRunId: 'a', batches })).toBe('a');
    expect(shownRunId({ runs, activeRunId: 'c', viewRunId: null, batches })).toBe('c');
    expect(shownRunId({ runs, activeRunId: null, viewRunId: null, batches })).toBe('b');
    expect(shownRunId({ runs, activeRunId: null, viewRunId: 'gone', batches })).toBe('b');
    expect(shownRunId({ runs, activeRunId: null, viewRunId: null, batches: {} })).toBeNull();
  });

  it('changedBatches and keepBatches', () => {
    const x = { samples: samplesAt(1), ratios: null };
    const y = { samples: samplesAt(2), ratios: null };
    expect(changedBatches({ a: x, b: x }, { a: x, b: y, c: x })).toEqual({ b: y, c: x });
    const all = { a: x, b: y };
    expect(keepBatches(all, new Set(['a', 'b']))).toBe(all);
    expect(keepBatches(all, new Set(['b']))).toEqual({ b: y });
  });
});

describe('trainer client: ratios are filed with the clip settings they were trained with', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the worker's clip settings, else the run's config, never the settings edited since", async () => {
    const h = clientHarness();
    const s = () => h.store.getState();
    s().applyConfig({ ...DEFAULT_CONFIG, clipLow: 0.1, clipHigh: 0.15, dualClip: null });
    await h.client.start();
    const runId = s().activeRunId!;
    h.worker.reply(metrics(1));
    // the student edits ε while the run trains: the trainer keeps the run's config
    s().applyConfig({ ...DEFAULT_CONFIG, clipLow: 0.3, clipHigh: 0.4 });
    h.worker.reply({ type: 'ratios', iter: 1, ratios: [1.2], advantages: [1] });
    expect(s().batches[runId].ratios?.clip).toEqual({ clipLow: 0.1, clipHigh: 0.15, dualClip: null });
    h.worker.reply({ type: 'ratios', iter: 2, ratios: [1.2], advantages: [1], clip: { clipLow: 0.05, clipHigh: 0.06, dualClip: 2 } });
    expect(s().ratios).toMatchObject({ iter: 2, clip: { clipLow: 0.05, clipHigh: 0.06, dualClip: 2 } });
    h.worker.reply({ type: 'samples', iter: 2, rows: samplesAt(2).rows });
    expect(s().batches[runId].samples?.iter).toBe(2);
  });
});
