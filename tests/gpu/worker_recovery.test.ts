// GPU device loss through the worker protocol with the real PpoTrainer on WebGPU (Dawn): the test
// hook destroys the device while an update is in flight; the host reports the loss, acquires a new
// device, rebuilds the trainer from the last full state it saved, reports how many iterations it
// replays, and trains on; the replayed iterations reproduce the lost ones. With no device coming
// back it reports deviceUnavailable, and the saved state continues on the CPU backend.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import type { WorkerToPage } from '../../src/worker/protocol.ts';
import type { TrainerHost } from '../../src/worker/trainerHost.ts';
import { expectClose } from '../helpers/random.ts';
import { tinyCheckpoint } from '../helpers/rl.ts';
import { workerHarness } from '../helpers/workerHarness.ts';

const CFG: PpoConfig = {
  ...DEFAULT_CONFIG,
  task: 'stop',
  promptsPerBatch: 2,
  samplesPerPrompt: 2,
  maxResponseLength: 4,
  ppoEpochs: 1,
  miniBatches: 1,
  advantageEstimator: 'gae',
  evalEvery: 0,
};

/** The host with the real trainer, WebGPU on Dawn (or the CPU backend) and `ck` as the shipped checkpoint. */
const gpuHost = (ck: Uint8Array, onPost?: (m: WorkerToPage, h: TrainerHost) => void) =>
  workerHarness({ fetchCheckpoint: async () => ck, onPost, patience: 250_000, pollEvery: 10 });

describe('device loss (WebGPU on Dawn, real trainer)', () => {
  it('device.destroy() during an update: reported, new device, rebuilt from the saved state, replayed iterations match, training goes on', { timeout: 300_000 }, async () => {
    const ck = await tinyCheckpoint('stop');
    let destroyed = false;
    const g = gpuHost(ck, (m, h) => {
      // the page's periodic save, after iteration 1 (state at 2)
      if (m.type === 'metrics' && m.iter === 1) void h.handle({ type: 'saveState', requestId: 1 });
      // destroy the device in the update of iteration 3 (4 done: 0..3 → lost during the 4th)
      if (m.type === 'stage' && m.stage === 'update' && !destroyed && g.of('metrics').length === 4) {
        destroyed = true;
        void h.handle({ type: 'debugDestroyDevice' });
      }
    });
    await g.send({ type: 'init', backend: 'webgpu', testHooks: true });
    await g.send({ type: 'setConfig', config: CFG });
    await g.send({ type: 'start', untilIter: 7 });
    await g.until(() => g.of('finished').length > 0 || g.of('error').length > 0, 'the run to finish');
    expect(g.of('error')).toEqual([]);
    expect(destroyed).toBe(true);
    const lost = g.of('deviceLost');
    expect(lost).toHaveLength(1);
    expect(lost[0].reason).toMatch(/destroyed/);
    expect(lost[0].iter).toBe(4);
    // The destroy lands while the device runs this update or, when the update finished first, the
    // next iteration's rollout, which iteration 4 records ahead (src/rl/probe.ts nextRollout): both
    // are iteration 4's work, which is what recovery replays from.
    expect(['update', 'rollout']).toContain(lost[0].stage);
    const rec = g.of('deviceRecovered');
    expect(rec).toEqual([expect.objectContaining({ fromIter: 2, lostAt: 4, replayed: 2, resumed: true })]);
    expect(g.made).toEqual(['webgpu', 'webgpu']);
    // iterations 0..3, then 2 and 3 replayed, then 4..6; the budget counts the replays again
    const iters = g.of('metrics').map((m) => m.iter);
    expect(iters).toEqual([0, 1, 2, 3, 2, 3, 4, 5, 6]);
    expect(g.of('finished')[0].iter).toBe(7);
    // the replay reproduces what was lost (same kernels, same seeds, same state)
    const m = g.of('metrics');
    for (const k of ['reward_mean', 'policy_loss', 'value_loss', 'kl', 'entropy']) {
      expectClose([m[4].values[k], m[5].values[k]], [m[2].values[k], m[3].values[k]], 1e-5, 1e-7, k);
    }
  });

  it('no device comes back: deviceUnavailable names the state to continue from; it continues on the CPU backend', { timeout: 300_000 }, async () => {
    const ck = await tinyCheckpoint('stop');
    const g = gpuHost(ck);
    await g.send({ type: 'init', backend: 'webgpu', testHooks: true });
    await g.send({ type: 'setConfig', config: CFG });
    await g.send({ type: 'step' });
    await g.send({ type: 'step' });
    await g.send({ type: 'saveState', requestId: 1 });
    const saved = g.of('state');
    expect(saved.map((s) => s.iter)).toEqual([2]);
    await g.send({ type: 'step' });
    await g.send({ type: 'debugDestroyDevice', failReacquire: true });
    await g.until(() => g.of('deviceUnavailable').length > 0, 'deviceUnavailable');
    expect(g.of('deviceUnavailable')[0]).toMatchObject({ iter: 2, message: expect.stringMatching(/no WebGPU adapter came back/) });
    await g.send({ type: 'step' });
    expect(g.of('error').at(-1)!.message).toMatch(/GPU device was lost .* continue on the CPU backend/);
    expect(g.of('metrics')).toHaveLength(3);

    // the page's offer: a CPU worker resumes from the saved state
    const c = gpuHost(ck);
    await c.send({ type: 'init', backend: 'cpu' });
    await c.send({ type: 'loadState', requestId: 2, bytes: saved[0].bytes.slice(0) });
    expect(c.of('stateLoaded')[0].iter).toBe(2);
    await c.send({ type: 'step' });
    expect(c.of('error')).toEqual([]);
    const cm = c.of('metrics');
    expect(cm.map((x) => x.iter)).toEqual([2]);
    // float64 CPU vs float32 WebGPU from the same state: the same iteration, to float32 accuracy
    expectClose([cm[0].values.reward_mean!, cm[0].values.kl!], [g.of('metrics')[2].values.reward_mean!, g.of('metrics')[2].values.kl!], 1e-3, 1e-4, 'cpu vs webgpu');
  });

  it("debug messages are refused without test hooks; the page's quiet save with no trainer answers nothing", async () => {
    const g = gpuHost(new Uint8Array());
    await g.send({ type: 'init', backend: 'cpu' });
    await g.send({ type: 'saveState', requestId: 1, quiet: true });
    expect(g.msgs.map((m) => m.type)).toEqual(['ready']);
    await g.send({ type: 'saveState', requestId: 1 });
    expect(g.of('error').map((e) => e.message)).toEqual(['no trainer state yet: press Start or Step first']);
    g.msgs.length = 0;
    await g.send({ type: 'debugDestroyDevice' });
    await g.send({ type: 'debugSetActorLr', actorLr: 1e30 });
    expect(g.of('error').map((e) => e.message)).toEqual([expect.stringMatching(/debugDestroyDevice is a test hook/), expect.stringMatching(/debugSetActorLr is a test hook/)]);
  });
});
