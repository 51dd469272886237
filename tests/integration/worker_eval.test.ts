// Held-out evaluation scheduling and iteration budgets in the trainer worker's host: an evaluation
// of the SFT model before the first iteration (iteration 0), one after every `evalEvery`
// completed iterations and one at the end of a budget, none with evalEvery = 0; `start` with
// `untilIter` stops by itself at that total and says so with `finished`. The trainer is a scripted
// stand-in (tests/helpers/fakeTrainer.ts) whose evaluate() reports the weights it scores, so each
// eval is checked against the iteration count it belongs to. The last test runs a real evaluate()
// after a real iteration.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { presetValues } from '../../src/rl/presets.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { evalDue, evalSize } from '../../src/worker/evalSchedule.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { FakeTrainer } from '../helpers/fakeTrainer.ts';
import { tinyActor, workerHarness } from '../helpers/workerHarness.ts';

/** The host on the CPU backend with scripted trainers numbering iterations from 0, as PpoTrainer does. */
function harness() {
  const trainers: FakeTrainer[] = [];
  const h = workerHarness({
    makeBackend: async () => ({ be: cpuBackend as Backend, adapter: 'test' }),
    fetchCheckpoint: () => tinyActor('arithmetic', 1),
    createTrainer: async (init) => {
      const t = new FakeTrainer(init, { numbering: 'index' });
      trainers.push(t);
      return t;
    },
    patience: 5000,
  });
  return { ...h, trainers };
}

async function ready(config: Partial<PpoConfig>) {
  const h = harness();
  await h.send({ type: 'init', backend: 'cpu' });
  await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, ...config } });
  return h;
}

describe('evaluation schedule', () => {
  it('evalDue: 0 and every multiple of evalEvery; never with 0', () => {
    expect([0, 1, 2, 3, 4, 5, 6].filter((k) => evalDue(k, 3))).toEqual([0, 3, 6]);
    expect([0, 1, 10, 100].filter((k) => evalDue(k, 0))).toEqual([]);
    expect(evalDue(-3, 3)).toBe(false);
    expect(evalDue(1.5, 1)).toBe(false);
  });

  it('evalSize: about three rollout batches of rows, within [4, 64] prompts, 4 draws each', () => {
    // 16 prompts × 4 samples = 64 rows per rollout → 38 prompts × (4 sampled + 1 greedy) = 190 rows.
    expect(evalSize({ promptsPerBatch: 16, samplesPerPrompt: 4 })).toEqual({ count: 38, samplesPerPrompt: 4 });
    // 4 × 4 = 16 rows (the sentiment preset) → 10 prompts, 50 rows.
    expect(evalSize({ promptsPerBatch: 4, samplesPerPrompt: 4 })).toEqual({ count: 10, samplesPerPrompt: 4 });
    expect(evalSize({ promptsPerBatch: 1, samplesPerPrompt: 1 }).count).toBe(4);
    expect(evalSize({ promptsPerBatch: 256, samplesPerPrompt: 16 }).count).toBe(64);
  });
});

describe('TrainerHost held-out evaluation', () => {
  it('evaluates the SFT model before iteration 1 and then after every evalEvery iterations', async () => {
    const h = await ready({ evalEvery: 3 });
    for (let i = 0; i < 7; i++) await h.send({ type: 'step' });
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const evals = h.of('eval');
    expect(evals.map((e) => e.iter)).toEqual([0, 3, 6]);
    // Each evaluation scored the weights of its own iteration count, with the configured size.
    expect(evals.map((e) => e.values.accuracy)).toEqual([0, 0.03, 0.06]);
    expect(evals.map((e) => e.values.greedy_accuracy)).toEqual([0, 0.06, 0.12]);
    const size = evalSize(h.host.currentConfig);
    expect(h.trainers[0].evalCalls).toEqual([0, 3, 6].map((iter) => ({ iter, count: size.count, samples: size.samplesPerPrompt })));
    expect(evals.every((e) => e.prompts === size.count && e.seconds >= 0)).toBe(true);
    // The baseline comes before the first iteration's metrics, the others after their iteration's.
    const order = h.msgs.filter((m) => m.type === 'eval' || m.type === 'metrics').map((m) => `${m.type}${m.iter}`);
    expect(order.slice(0, 6)).toEqual(['eval0', 'metrics0', 'metrics1', 'metrics2', 'eval3', 'metrics3']);
  });

  it('evalEvery = 0 never evaluates', async () => {
    const h = await ready({ evalEvery: 0 });
    for (let i = 0; i < 4; i++) await h.send({ type: 'step' });
    expect(h.of('metrics')).toHaveLength(4);
    expect(h.of('eval')).toEqual([]);
    expect(h.trainers[0].evalCalls).toEqual([]);
  });

  it('a reset is acknowledged with resetDone, and the new trainer gets its own baseline evaluation', async () => {
    const h = await ready({ evalEvery: 10 });
    await h.send({ type: 'step' });
    await h.send({ type: 'reset' });
    await h.send({ type: 'step' });
    expect(h.trainers).toHaveLength(2);
    expect(h.of('eval').map((e) => e.iter)).toEqual([0, 0]);
    expect(h.trainers.map((t) => t.evalCalls.length)).toEqual([1, 1]);
    // The reset is acknowledged after the first run's messages and before the second run's.
    const order = h.msgs.filter((m) => m.type === 'eval' || m.type === 'metrics' || m.type === 'resetDone').map((m) => m.type);
    expect(order).toEqual(['eval', 'metrics', 'resetDone', 'eval', 'metrics']);
  });
});

describe('TrainerHost prepare (before Start)', () => {
  it('builds the trainer and evaluates the SFT model ahead; Start posts that evaluation first and does not evaluate again', async () => {
    const h = await ready({ evalEvery: 3 });
    await h.send({ type: 'prepare' });
    expect(h.trainers).toHaveLength(1);
    expect(h.trainers[0].evalCalls.map((c) => c.iter)).toEqual([0]);
    expect(h.msgs.filter((m) => m.type === 'eval' || m.type === 'metrics')).toEqual([]); // nothing posted yet
    await h.send({ type: 'prepare' }); // nothing changed: no second evaluation
    expect(h.trainers[0].evalCalls).toHaveLength(1);
    for (let i = 0; i < 4; i++) await h.send({ type: 'step' });
    expect(h.trainers).toHaveLength(1);
    expect(h.trainers[0].evalCalls.map((c) => c.iter)).toEqual([0, 3]);
    const order = h.msgs.filter((m) => m.type === 'eval' || m.type === 'metrics').map((m) => `${m.type}${m.iter}`);
    expect(order).toEqual(['eval0', 'metrics0', 'metrics1', 'metrics2', 'eval3', 'metrics3']);
    const size = evalSize(h.host.currentConfig);
    expect(h.of('eval')[0]).toMatchObject({ iter: 0, prompts: size.count, values: { accuracy: 0, greedy_accuracy: 0 } });
  });

  it('a config change after prepare makes Start evaluate again (the prepared baseline was for other settings)', async () => {
    const h = await ready({ evalEvery: 3 });
    await h.send({ type: 'prepare' });
    // temperature: taken by the live trainer (no rebuild), but it changes what an evaluation samples.
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, evalEvery: 3, temperature: 0.7 } });
    await h.send({ type: 'step' });
    expect(h.trainers).toHaveLength(1);
    expect(h.trainers[0].evalCalls.map((c) => c.iter)).toEqual([0, 0]);
    expect(h.of('eval').map((e) => e.iter)).toEqual([0]);
  });

  it('an older prepare still queued skips its work; prepare while training, or after iterations, does nothing', async () => {
    const h = await ready({ evalEvery: 3 });
    const first = h.send({ type: 'prepare' });
    const second = h.send({ type: 'prepare' });
    await Promise.all([first, second]);
    expect(h.trainers[0].evalCalls).toHaveLength(1);
    await h.send({ type: 'step' });
    await h.send({ type: 'prepare' });
    expect(h.trainers[0].evalCalls.map((c) => c.iter)).toEqual([0]);
    expect(h.of('error')).toEqual([]);
  });

  it('with evalEvery = 0 prepare builds the trainer and evaluates nothing', async () => {
    const h = await ready({ evalEvery: 0 });
    await h.send({ type: 'prepare' });
    expect(h.trainers).toHaveLength(1);
    expect(h.trainers[0].evalCalls).toEqual([]);
  });
});

describe('TrainerHost iteration budget', () => {
  it('start with iterations stops by itself after that many, evaluates at the end, and says finished', async () => {
    const h = await ready({ evalEvery: 4 });
    await h.send({ type: 'start', untilIter: 6 });
    await h.until(() => h.of('finished').length === 1, 'finished');
    await new Promise((r) => setTimeout(r, 30));
    expect(h.host.isRunning).toBe(false);
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(h.of('finished')).toEqual([{ type: 'finished', iter: 6 }]);
    // 0 (SFT), 4 (evalEvery), 6 (end of the budget).
    expect(h.of('eval').map((e) => e.iter)).toEqual([0, 4, 6]);
    // finished comes after the last evaluation, so the page has every point when it moves on.
    expect(h.msgs[h.msgs.length - 1].type).toBe('finished');
  });

  it('a later start with more iterations continues the same trainer; start without iterations runs until paused', async () => {
    const h = await ready({ evalEvery: 10 });
    await h.send({ type: 'start', untilIter: 2 });
    await h.until(() => h.of('finished').length === 1, 'first finished');
    await h.send({ type: 'start', untilIter: 5 });
    await h.until(() => h.of('finished').length === 2, 'second finished');
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2, 3, 4]);
    expect(h.of('finished').map((f) => f.iter)).toEqual([2, 5]);
    expect(h.trainers).toHaveLength(1);
    await h.send({ type: 'start' });
    await h.until(() => h.of('metrics').length >= 9, 'unbudgeted iterations');
    await h.send({ type: 'pause' });
    await h.until(() => !h.host.isRunning, 'pause');
    expect(h.of('finished')).toHaveLength(2);
  });

  it('the last iteration of a budget finishing while paused: the next start trains nothing more, evaluates the end and says finished', async () => {
    const h = await ready({ evalEvery: 10 });
    // Pause right after iteration 2 of 3 begins, as a user's click lands while it is in flight.
    await h.send({ type: 'start', untilIter: 3 });
    await h.until(() => h.of('metrics').length >= 2, 'two iterations');
    await h.send({ type: 'pause' });
    await h.until(() => !h.host.isRunning, 'pause');
    await new Promise((r) => setTimeout(r, 30));
    const done = h.of('metrics').length;
    expect(h.of('finished')).toEqual([]);
    // Start with the same total, whether or not the third iteration had completed before the pause.
    await h.send({ type: 'start', untilIter: 3 });
    await h.until(() => h.of('finished').length === 1, 'finished');
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBeLessThanOrEqual(3);
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2]);
    expect(h.of('finished')).toEqual([{ type: 'finished', iter: 3 }]);
    expect(h.of('eval').map((e) => e.iter)).toEqual([0, 3]);
    expect(h.host.isRunning).toBe(false);
  });

  it('start with a total the trainer has already reached says finished at once', async () => {
    const h = await ready({ evalEvery: 10 });
    await h.send({ type: 'start', untilIter: 2 });
    await h.until(() => h.of('finished').length === 1, 'first finished');
    await h.send({ type: 'start', untilIter: 2 });
    await h.until(() => h.of('finished').length === 2, 'second finished');
    await new Promise((r) => setTimeout(r, 30));
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1]);
    expect(h.of('finished').map((f) => f.iter)).toEqual([2, 2]);
    expect(h.of('eval').map((e) => e.iter)).toEqual([0, 2]);
  });

  it('pause inside a budget stops without finished; the remaining iterations need a new start', async () => {
    const h = await ready({ evalEvery: 10 });
    await h.send({ type: 'start', untilIter: 50 });
    await h.until(() => h.of('metrics').length >= 2, 'two iterations');
    await h.send({ type: 'pause' });
    await new Promise((r) => setTimeout(r, 40));
    const n = h.of('metrics').length;
    expect(n).toBeLessThan(50);
    expect(h.of('finished')).toEqual([]);
    expect(h.of('paused')).toHaveLength(1);
  });
});

describe('evaluation on the real trainer (CPU backend)', () => {
  // Its cost beside training is measured by `npm run bench -- --only trainer` (held-out evaluation
  // cost), not asserted here: wall-clock time is a benchmark's business.
  it('one evaluation at the "Learn arithmetic" size returns rates in [0, 1]', async () => {
    const root = new URL('../../public/checkpoints/', import.meta.url);
    const config = { ...DEFAULT_CONFIG, ...presetValues('Learn arithmetic') };
    const trainer = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: new Uint8Array(readFileSync(new URL('arithmetic.safetensors', root))) });
    try {
      await trainer.iteration();
      const { count, samplesPerPrompt } = evalSize(config);
      const values = await trainer.evaluate(count, samplesPerPrompt);
      expect(values.accuracy).toBeGreaterThanOrEqual(0);
      expect(values.accuracy).toBeLessThanOrEqual(1);
      expect(values.greedy_accuracy).toBeGreaterThanOrEqual(0);
      expect(values.greedy_accuracy).toBeLessThanOrEqual(1);
    } finally {
      trainer.dispose();
    }
  }, 120_000);
});
