// The trainer client's handling of a run's messages, with a fake worker: a pause that crosses the
// budget's last iteration, messages of a run that was reset, and the notice texts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { findPreset } from '../../src/rl/presets.ts';
import * as notices from '../../src/store/notices.ts';
import { STATE_SAVE_INTERVAL_MS } from '../../src/store/resume.ts';
import { adviceText, nanAdvice } from '../../src/worker/nanAdvice.ts';
import { clientHarness, metrics } from '../helpers/fakeTrainerWorker.ts';

const PAIRED = 'Tight vs loose clipping';
const armLabels = findPreset(PAIRED)!.arms!.map((a) => a.label);
const stateBytes = () => new Uint8Array([1, 2, 3]).buffer as ArrayBuffer;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('trainer client: Pause during the last iteration of a budget', () => {
  it('the pause lands while the last iteration is in flight: its metrics are kept, the run stays paused, Start trains on past the budget', async () => {
    const h = clientHarness();
    await h.client.start({ budget: 3 });
    expect(h.worker.of('start')).toEqual([{ type: 'start', untilIter: 3 }]);
    h.worker.reply(metrics(1));
    h.worker.reply(metrics(2));
    await h.client.pause();
    expect(h.store.getState().runState).toBe('paused');
    // The state is asked for behind the iteration in flight.
    expect(h.worker.sent.slice(-2).map((m) => m.type)).toEqual(['pause', 'saveState']);

    h.worker.reply({ type: 'paused', reason: 'paused by the user', stage: 'update' });
    h.worker.reply(metrics(3));
    // Metrics never ask for a save (autosave.ts runs on its own schedule): only the Pause's.
    expect(h.worker.of('saveState')).toHaveLength(1);
    for (const m of h.worker.of('saveState')) h.worker.reply({ type: 'state', iter: 3, bytes: stateBytes(), requestId: m.requestId });
    await h.advance(0);

    const s = h.store.getState();
    expect(s.runState).toBe('paused');
    expect(s.notice).toEqual({ tone: 'info', text: 'Paused: paused by the user', echo: true });
    expect(h.activeRun()!.metrics.map((m) => m.iter)).toEqual([1, 2, 3]);
    expect(h.saved).toHaveLength(1);
    expect(h.saved[0]).toMatchObject({ runId: s.activeRunId, iter: 3, wasRunning: false });
    expect(h.pending()).toBe(0);

    await h.client.start();
    expect(h.worker.of('start').at(-1)).toEqual({ type: 'start', untilIter: undefined });
    expect(h.store.getState().runState).toBe('running');
  });

  it('the worker finished before the pause reached it: the budget notice stays and the run is paused', async () => {
    const h = clientHarness();
    await h.client.start({ budget: 3 });
    for (const i of [1, 2, 3]) h.worker.reply(metrics(i));
    h.worker.reply({ type: 'finished', iter: 3 });
    await h.client.pause(); // the worker is idle already and answers nothing
    await h.advance(0);
    const s = h.store.getState();
    expect(s.runState).toBe('paused');
    expect(s.stage).toBe('idle');
    expect(s.notice).toEqual({ tone: 'info', text: 'Reached the budget of 3 iterations. Start trains on past it; Reset begins a new run.' });
    expect(h.activeRun()!.metrics).toHaveLength(3);
  });

  it('Run both: an arm whose last iteration finished while paused moves on to the next arm on Start', async () => {
    const h = clientHarness();
    h.store.getState().setBudgetOverride(2);
    await h.client.runArms(PAIRED);
    expect(h.store.getState().sequence).toMatchObject({ preset: PAIRED, index: 0, budget: 2 });
    expect(h.worker.of('start').at(-1)).toEqual({ type: 'start', untilIter: 2 });
    h.worker.reply(metrics(1));
    await h.client.pause();
    h.worker.reply({ type: 'paused', reason: 'paused by the user', stage: 'rollout' });
    h.worker.reply(metrics(2)); // the arm's last iteration, in flight at the click

    await h.client.start();
    // In Run both the stop is always asked for: the worker, at its budget already, says finished at once.
    expect(h.worker.of('start').at(-1)).toEqual({ type: 'start', untilIter: 2 });
    h.worker.reply({ type: 'finished', iter: 2 });
    await h.advance(0);

    const s = h.store.getState();
    expect(s.sequence).toMatchObject({ index: 1, runId: s.activeRunId });
    expect(s.runs.map((r) => r.name)).toEqual(armLabels);
    expect(s.runs[0].metrics.map((m) => m.iter)).toEqual([1, 2]);
    expect(s.runState).toBe('running');
    expect(h.worker.sent.slice(-3).map((m) => m.type)).toEqual(['reset', 'setConfig', 'start']);
  });
});

describe('trainer client: run messages after a Reset', () => {
  it('are dropped until the worker acknowledges the reset; the next run begins clean', async () => {
    const h = clientHarness();
    await h.client.start();
    h.worker.reply(metrics(1));
    await h.client.reset();
    // An iteration in flight at the click still reports: it belongs to the run just closed.
    h.worker.reply(metrics(2));
    h.worker.reply({ type: 'samples', iter: 2, rows: [] });
    h.worker.reply({ type: 'ratios', iter: 2, ratios: [1], advantages: [0] });
    h.worker.reply({ type: 'eval', iter: 2, values: { accuracy: 1 }, prompts: 4, seconds: 0.1 });
    h.worker.reply({ type: 'finished', iter: 2 });
    await h.advance(1000);

    let s = h.store.getState();
    expect(s.runs).toHaveLength(1);
    expect(s.runs[0].metrics.map((m) => m.iter)).toEqual([1]);
    expect(s.runs[0].evals ?? []).toEqual([]);
    expect(s.activeRunId).toBeNull();
    expect(s.runState).toBe('idle');
    expect(s.samples).toBeNull();
    expect(s.notice).toBeNull();

    let settled = false;
    void h.client.settled().then(() => (settled = true));
    await h.advance(100);
    expect(settled).toBe(false);
    h.worker.reply({ type: 'resetDone' });
    await h.advance(100);
    expect(settled).toBe(true);

    await h.client.start();
    h.worker.reply(metrics(1));
    await h.advance(1000);
    s = h.store.getState();
    expect(s.runs).toHaveLength(2);
    expect(h.activeRun()!.metrics.map((m) => m.iter)).toEqual([1]);
  });

  it('a state asked for before the reset is not stored as anybody’s, and its request ends', async () => {
    const h = clientHarness();
    await h.client.start();
    h.worker.reply(metrics(1));
    await h.advance(STATE_SAVE_INTERVAL_MS);
    await h.client.pause();
    const asked = h.worker.of('saveState');
    expect(asked).toHaveLength(2); // the scheduled save and the Pause's
    await h.client.reset();
    h.worker.reply({ type: 'state', iter: 1, bytes: stateBytes(), requestId: asked[0].requestId });
    expect(h.pending()).toBe(1);
    h.worker.reply({ type: 'state', iter: 1, bytes: stateBytes(), requestId: asked[1].requestId });
    h.worker.reply({ type: 'resetDone' });
    await h.advance(0);
    expect(h.saved).toEqual([]);
    expect(h.pending()).toBe(0);
  });
});

describe('trainer client: the warm-up worker', () => {
  it('fails to initialise before any command: dropped without a notice; the next command starts a fresh one', async () => {
    const h = clientHarness();
    h.client.warmUp();
    expect(h.worker.sent.map((m) => m.type)).toEqual(['init', 'setConfig', 'prepare']);
    h.worker.reply({ type: 'error', message: 'no WebGPU adapter' });
    expect(h.workers[0].terminated).toBe(true);
    expect(h.store.getState().notice).toBeNull();
    await h.client.step();
    expect(h.workers).toHaveLength(2);
    expect(h.worker.sent.map((m) => m.type)).toEqual(['init', 'setConfig', 'step']);
    // Now the user asked for something: the same error is shown.
    h.worker.reply({ type: 'error', message: 'no WebGPU adapter' });
    expect(h.store.getState().notice).toEqual({ tone: 'error', text: 'Trainer error: no WebGPU adapter' });
    expect(h.workers[1].terminated).toBe(false);
  });
});

describe('trainer client: notices', () => {
  it('say what happened to the device, with the iteration count in words', () => {
    expect(notices.deviceLost({ type: 'deviceLost', reason: 'destroyed', stage: 'update', iter: 1 })).toBe(
      'The GPU device was lost (destroyed) after 1 iteration, during update. Getting a new device and rebuilding the trainer from its last saved state…',
    );
    expect(notices.deviceLost({ type: 'deviceLost', reason: 'destroyed', iter: 0 })).toMatch(/^The GPU device was lost \(destroyed\) after 0 iterations\. /);
    expect(notices.deviceLost({ type: 'deviceLost', reason: 'destroyed', iter: null })).toMatch(/^The GPU device was lost \(destroyed\)\. /);
    expect(notices.deviceRecovered({ type: 'deviceRecovered', adapter: 'SwiftShader', fromIter: 4, lostAt: 5, replayed: 1, resumed: false })).toBe(
      'The GPU device was lost and replaced (SwiftShader); the trainer was rebuilt from its last saved state. 1 iteration is replayed (lost at 5, restarted from the state saved at 4). Press Start to continue.',
    );
    expect(notices.deviceRecovered({ type: 'deviceRecovered', adapter: 'A', fromIter: 0, lostAt: 3, replayed: 3, resumed: true })).toMatch(
      / 3 iterations are replayed \(lost at 3, restarted from the state saved at 0\)\.$/,
    );
  });

  it('name commands as words and say what a failed request means', () => {
    expect(notices.commandLabel('trainRewardModel')).toBe('Train reward model');
    expect(notices.trainerMissing('snapshot')).toBe(`Snapshot requested. ${notices.TRAINER_MISSING}`);
    expect(notices.trainerError('boom', 'update')).toBe('Trainer error during update: boom');
    expect(notices.trainerError('boom')).toBe('Trainer error: boom');
  });

  it('a NaN pause says where, what, and the knob to change', () => {
    const h = clientHarness();
    const advice = nanAdvice('policy_loss', DEFAULT_CONFIG);
    h.client.receive({ type: 'paused', reason: 'non-finite', stage: 'update', nonFinite: { iter: 3, stage: 'update', quantity: 'policy_loss', value: NaN, advice } });
    expect(h.store.getState().notice).toEqual({
      tone: 'warn',
      text: `Paused: iteration 3 produced a non-finite policy_loss (NaN) in the update stage. The state from before it was restored and nothing charted is lost. Suggested fix: ${adviceText(advice)}.`,
    });
  });

  it('an error in the middle of Run both names the arm, counts iterations not yet charted, and says what Start and Reset do', async () => {
    const h = clientHarness();
    h.store.getState().setBudgetOverride(2);
    await h.client.runArms(PAIRED);
    h.worker.reply(metrics(1)); // still in the flush batch
    h.worker.reply({ type: 'error', message: 'buffer mapping failed', stage: 'update' });
    const s = h.store.getState();
    expect(s.runState).toBe('paused');
    expect(s.sequence).toMatchObject({ index: 0, stoppedBy: 'buffer mapping failed' });
    expect(s.notice).toEqual({
      tone: 'error',
      text: `“${PAIRED}” (Run both) stopped at arm 1 of 2, “${armLabels[0]}”, after 1 of 2 iterations. Trainer error during update: buffer mapping failed. Start retries this arm from iteration 1; Reset ends Run both (finished arms are kept).`,
    });
  });
});
