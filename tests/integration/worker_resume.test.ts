// Resume after a reload, through the worker protocol with the real PpoTrainer on the float64 CPU
// backend: a run that saves its full state after 2 iterations (as the page does every 10 s) and a
// fresh worker that loads that state and trains on produce exactly the metrics and evaluations of
// the uninterrupted run, so the page's curves continue bit-identically in the same run record.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import type { WorkerToPage } from '../../src/worker/protocol.ts';
import type { TrainerHost } from '../../src/worker/trainerHost.ts';
import { rng } from '../helpers/random.ts';
import { tinyActor, workerHarness } from '../helpers/workerHarness.ts';

// GAE (critic), adaptive KL (β moves), warm-up, two epochs × two minibatches, evals every 2.
const CFG: PpoConfig = {
  ...DEFAULT_CONFIG,
  task: 'stop',
  promptsPerBatch: 4,
  samplesPerPrompt: 2,
  maxResponseLength: 4,
  ppoEpochs: 2,
  miniBatches: 2,
  advantageEstimator: 'gae',
  klController: 'adaptive',
  klTarget: 0.01,
  warmupSteps: 3,
  actorLr: 3e-3,
  evalEvery: 2,
};
const VOLATILE = /^time_|^gpu_/;
const stable = (v: Record<string, number>) => Object.fromEntries(Object.entries(v).filter(([k]) => !VOLATILE.test(k)));

/** The host with the real trainer on the CPU backend and `ck` as the shipped checkpoint. */
const host = (ck: Uint8Array, onPost?: (m: WorkerToPage, h: TrainerHost) => void) => workerHarness({ fetchCheckpoint: async () => ck, onPost, patience: 100_000, pollEvery: 5 });

describe('resume after reload (CPU backend, real trainer)', () => {
  it('state saved mid-run at k = 2; a fresh worker resumes and iterations 2..5 are bit-identical to the uninterrupted run', { timeout: 200_000 }, async () => {
    const ck = await tinyActor('stop', rng(61).int(1, 1e6));
    const N = 6;
    const K = 2;
    // The uninterrupted run; the page asks for the state while it trains (after iteration K's metrics).
    const a = host(ck, (m, h) => {
      if (m.type === 'metrics' && m.iter === K - 1) void h.handle({ type: 'saveState', requestId: 1 });
    });
    await a.send({ type: 'init', backend: 'cpu' });
    await a.send({ type: 'setConfig', config: CFG });
    await a.send({ type: 'start', untilIter: N });
    await a.until(() => a.of('finished').length > 0, 'the straight run');
    expect(a.of('error')).toEqual([]);
    const saved = a.of('state');
    expect(saved.map((s) => s.iter)).toEqual([K]);
    // the state was taken between iterations while the loop kept running
    expect(a.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2, 3, 4, 5]);

    // "Reload": a new worker, the state from storage, Start with what is left of the budget.
    const b = host(ck);
    await b.send({ type: 'init', backend: 'cpu' });
    await b.send({ type: 'loadState', requestId: 2, bytes: saved[0].bytes.slice(0) });
    expect(b.of('stateLoaded')).toEqual([{ type: 'stateLoaded', requestId: 2, iter: K, config: CFG }]);
    await b.send({ type: 'start', untilIter: N });
    await b.until(() => b.of('finished').length > 0, 'the resumed run');
    expect(b.of('error')).toEqual([]);
    expect(b.of('finished')[0].iter).toBe(N);

    const straight = a.of('metrics').slice(K);
    const resumed = b.of('metrics');
    expect(resumed.map((m) => m.iter)).toEqual([2, 3, 4, 5]);
    expect(resumed.map((m) => stable(m.values))).toEqual(straight.map((m) => stable(m.values)));
    // the β of the adaptive controller moved and came back with the state
    expect(resumed[0].values.beta).toBe(straight[0].values.beta);
    // evaluations: the resumed worker re-evaluates at k (same value) and then at 4 and 6 like the straight run
    const evalsA = new Map(a.of('eval').map((e) => [e.iter, e.values]));
    for (const e of b.of('eval')) expect(e.values, `eval at ${e.iter}`).toEqual(evalsA.get(e.iter));
    expect(b.of('eval').map((e) => e.iter)).toEqual([2, 4, 6]);
    // the samples shown for the resumed iterations are the same too
    expect(b.of('samples').map((s) => s.rows)).toEqual(
      a
        .of('samples')
        .slice(K)
        .map((s) => s.rows),
    );
  });
});
