// The worker's logic with the real PpoTrainer (float64 CPU backend, tiny model), end to end through
// the protocol messages: a budget through the worker posts exactly what the same trainer driven
// directly produces, with the stages of each iteration in pipeline order, however it is split into
// steps, pauses and starts; step, start/pause and snapshot; a learned reward model; the NaN guard's
// full restore; save and resume.
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer, type IterationResult } from '../../src/rl/trainer.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { rng } from '../helpers/random.ts';
import { tinyShipped, workerHarness, type HarnessOptions } from '../helpers/workerHarness.ts';

const SMALL: Partial<PpoConfig> = { promptsPerBatch: 2, samplesPerPrompt: 2, maxResponseLength: 4, ppoEpochs: 1, miniBatches: 1 };
const VOLATILE = /^time_|^gpu_/;
const stable = (v: Record<string, number>) => Object.fromEntries(Object.entries(v).filter(([k]) => !VOLATILE.test(k)));

/** The host with the real trainer on the CPU backend, shipping tiny checkpoints made from `salt`'s seed. */
const realHost = (salt: number, opts: HarnessOptions = {}) => workerHarness({ fetchCheckpoint: tinyShipped(rng(salt).int(0, 1e6)), patience: 60_000, pollEvery: 5, ...opts });

describe('TrainerHost with the real PpoTrainer (cpu)', () => {
  it('a budget through the worker posts exactly the metrics, samples and ratios of the trainer driven directly, stages in pipeline order', async () => {
    const N = 3;
    const config: PpoConfig = { ...DEFAULT_CONFIG, ...SMALL, task: 'stop', advantageEstimator: 'gae', klController: 'adaptive', evalEvery: 2 };
    const shipped = tinyShipped(rng(50).int(0, 1e6));
    const h = workerHarness({ fetchCheckpoint: shipped, patience: 60_000, pollEvery: 5 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config });
    await h.send({ type: 'start', untilIter: N });
    await h.untilMessages('finished');
    expect(h.of('error')).toEqual([]);

    // The same trainer driven directly: the last iteration of a budget samples nothing ahead.
    const direct = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: await shipped('stop') });
    const results: IterationResult[] = [];
    try {
      for (let i = 0; i < N; i++) results.push(await direct.iteration({ sampleNext: i < N - 1 }));
    } finally {
      direct.dispose();
    }
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2]);
    expect(h.of('metrics').map((m) => stable(m.values))).toEqual(results.map((r) => stable(r.metrics)));
    expect(h.of('samples').map((m) => m.rows)).toEqual(results.map((r) => r.samples));
    expect(h.of('ratios').map(({ ratios, advantages }) => ({ ratios, advantages }))).toEqual(results.map((r) => ({ ratios: r.ratios.ratios, advantages: r.ratios.advantages })));

    // Per iteration: its stages (the next rollout, sampled ahead, goes with all but the last), then
    // its metrics, samples and ratios; evaluations at 0, 2 and the end of the budget; then finished.
    const ahead = ['stage:rollout', 'stage:experience', 'stage:update', 'stage:rollout', 'stage:idle'];
    const last = ['stage:rollout', 'stage:experience', 'stage:update', 'stage:idle'];
    const posted = ['metrics', 'samples', 'ratios'];
    expect(h.msgs.filter((m) => m.type !== 'ready').map((m) => (m.type === 'stage' ? `stage:${m.stage}` : m.type === 'eval' ? `eval${m.iter}` : m.type))).toEqual([
      'eval0',
      ...ahead,
      ...posted,
      ...ahead,
      ...posted,
      'eval2',
      ...last,
      ...posted,
      'eval3',
      'finished',
    ]);
    expect(h.host.isRunning).toBe(false);
  });

  it('steps, a pause mid-budget and a new start post the same metrics as one straight run', async () => {
    const N = 4;
    const config: PpoConfig = { ...DEFAULT_CONFIG, ...SMALL, task: 'stop', advantageEstimator: 'gae', evalEvery: 0 };
    const shipped = tinyShipped(rng(53).int(0, 1e6));
    const straight = workerHarness({ fetchCheckpoint: shipped, patience: 60_000, pollEvery: 5 });
    await straight.send({ type: 'init', backend: 'cpu' });
    await straight.send({ type: 'setConfig', config });
    await straight.send({ type: 'start', untilIter: N });
    await straight.untilMessages('finished');

    const h = workerHarness({ fetchCheckpoint: shipped, patience: 60_000, pollEvery: 5 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config });
    await h.send({ type: 'step' });
    await h.send({ type: 'start', untilIter: N });
    await h.untilMessages('metrics', 2);
    await h.send({ type: 'pause' });
    await h.until(() => !h.host.isRunning, 'pause');
    expect(h.of('finished')).toEqual([]);
    await h.send({ type: 'start', untilIter: N });
    await h.untilMessages('finished');
    expect(h.of('finished')).toEqual([{ type: 'finished', iter: N }]);
    expect([...h.of('error'), ...straight.of('error')]).toEqual([]);
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2, 3]);
    expect(h.of('metrics').map((m) => stable(m.values))).toEqual(straight.of('metrics').map((m) => stable(m.values)));
  });

  it('step, start/pause and snapshot on the default task', async () => {
    const h = realHost(51);
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, ...SMALL } });
    await h.send({ type: 'step' });
    expect(h.of('error')).toEqual([]);
    const m = h.of('metrics');
    expect(m).toHaveLength(1);
    const first = m[0].iter;
    for (const k of ['policy_loss', 'value_loss', 'reward_mean', 'clipfrac', 'kl']) expect(Number.isFinite(m[0].values[k]), k).toBe(true);
    expect(h.of('samples')[0].rows.length).toBeGreaterThan(0);
    expect(h.of('ratios')[0].ratios.length).toBeGreaterThan(0);
    expect(h.of('stage').map((s) => s.stage)).toEqual(expect.arrayContaining(['rollout', 'experience', 'update', 'idle']));
    // The SFT baseline was evaluated before the first iteration: the task's held-out metrics, sampled and greedy.
    const baseline = h.of('eval');
    expect(baseline.map((e) => e.iter)).toEqual([0]);
    for (const k of ['accuracy', 'greedy_accuracy', 'eos_rate']) {
      expect(baseline[0].values[k], k).toBeGreaterThanOrEqual(0);
      expect(baseline[0].values[k], k).toBeLessThanOrEqual(1);
    }

    await h.send({ type: 'start' });
    await h.until(() => h.of('metrics').length >= 3, '2 more iterations');
    await h.send({ type: 'pause' });
    await h.until(() => !h.host.isRunning, 'pause');
    // Paused by the user, once, and no iteration starts after the one in flight.
    expect(h.of('paused')).toEqual([expect.objectContaining({ reason: 'paused by the user' })]);
    await new Promise((r) => setTimeout(r, 500));
    const n = h.of('metrics').length;
    await new Promise((r) => setTimeout(r, 300));
    expect(h.of('metrics').length).toBe(n);
    await h.send({ type: 'step' });
    expect(h.of('metrics').map((x) => x.iter)).toEqual(Array.from({ length: n + 1 }, (_, i) => first + i));

    // Default evalEvery (10) evaluates again only after 10 iterations.
    expect(h.of('eval').map((e) => e.iter)).toEqual(Array.from({ length: Math.floor((n + 1) / 10) + 1 }, (_, i) => 10 * i));

    await h.send({ type: 'snapshot', requestId: 1 });
    const snap = h.of('snapshot')[0];
    expect(snap.requestId).toBe(1);
    const ck = parseCheckpoint(new Uint8Array(snap.bytes));
    expect(ck.task).toBe('arithmetic');
    expect(ck.config.head).toBe('lm');
    expect(h.of('error')).toEqual([]);
  });

  it('rewardSource "model" trains sentiment with the learned reward model', async () => {
    const h = realHost(51);
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, ...SMALL, task: 'sentiment', rewardSource: 'model' } });
    await h.send({ type: 'step' });
    expect(h.of('error')).toEqual([]);
    const m = h.of('metrics')[0];
    expect(Number.isFinite(m.values.reward_mean)).toBe(true);
    // a fresh reward head gives small non-constant scores, never the ±3 clip of the lexicon rule
    const rewards = h.of('samples')[0].rows.map((r) => r.reward);
    expect(rewards.every((r) => Number.isFinite(r) && Math.abs(r) < 3)).toBe(true);
  });

  it('a NaN restores the full state: actor, critic, both moments, β and counter; the reference never moves', async () => {
    let real: PpoTrainer | null = null;
    let poisonAt = -1;
    const h = realHost(52, {
      // The real trainer, whose iteration `poisonAt` really updates every weight and then reports a NaN loss.
      createTrainer: async (init) => {
        const t = await PpoTrainer.create(init);
        real = t;
        const iteration = t.iteration.bind(t);
        t.iteration = async (o) => {
          const r = await iteration(o);
          if (r.iter === poisonAt) r.metrics.policy_loss = NaN;
          return r;
        };
        return t;
      },
    });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, ...SMALL, advantageEstimator: 'gae', klController: 'adaptive', klTarget: 0.01 } });
    await h.send({ type: 'step' });
    await h.send({ type: 'step' });
    const t = real as unknown as PpoTrainer;
    const before = await t.saveState();
    poisonAt = 2;
    await h.send({ type: 'step' });
    const paused = h.of('paused');
    expect(paused.at(-1)).toMatchObject({ reason: expect.stringMatching(/non-finite policy_loss = NaN in iteration 2/) });
    expect(t.iter).toBe(2);
    // byte-identical state: actor and critic weights, both AdamW moments and step counts, β, reference
    expect(Array.from(await t.saveState())).toEqual(Array.from(before));
    expect(h.of('error')).toEqual([]);
    // nothing of the failed iteration was posted
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1]);
  });

  it('saveState / loadState: a fresh worker resumes the run exactly (page reload); a bad file changes nothing', async () => {
    const cfg = { ...DEFAULT_CONFIG, ...SMALL, task: 'stop' as const, advantageEstimator: 'gae' as const, klController: 'adaptive' as const };
    const a = realHost(51);
    await a.send({ type: 'init', backend: 'cpu' });
    await a.send({ type: 'setConfig', config: cfg });
    await a.send({ type: 'step' });
    await a.send({ type: 'step' });
    await a.send({ type: 'saveState', requestId: 1 });
    const saved = a.of('state');
    expect(saved).toHaveLength(1);
    expect(saved[0].iter).toBe(2);
    expect(saved[0].requestId).toBe(1);
    await a.send({ type: 'step' });
    const straight = a.of('metrics').at(-1)!;

    const b = realHost(51);
    await b.send({ type: 'init', backend: 'cpu' });
    await b.send({ type: 'loadState', requestId: 1, bytes: new Uint8Array([1, 2, 3]).buffer });
    expect(b.of('error').at(-1)!.message).toMatch(/safetensors/);
    expect(b.of('error').at(-1)!.requestId).toBe(1);
    expect(b.of('stateLoaded')).toEqual([]);
    await b.send({ type: 'loadState', requestId: 2, bytes: saved[0].bytes.slice(0) });
    expect(b.of('stateLoaded')).toEqual([{ type: 'stateLoaded', requestId: 2, iter: 2, config: cfg }]);
    await b.send({ type: 'step' });
    const resumed = b.of('metrics').at(-1)!;
    expect(resumed.iter).toBe(straight.iter);
    expect(stable(resumed.values)).toEqual(stable(straight.values));
  });
});
