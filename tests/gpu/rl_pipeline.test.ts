// The rollout sampled ahead (PpoTrainer.iteration: the next iteration's rollout is recorded after
// the update and read back with the statistics). It must change when work happens, never what is
// computed: the same metrics and weights as sampling at the start of each iteration, and a rollout
// ahead is never used once the config or the weights changed outside an iteration.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer, type TrainerInit } from '../../src/rl/trainer.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

// GAE and two minibatches: every stage of the iteration between one rollout and the next.
const CONFIG: Partial<PpoConfig> = { seed: 4, actorLr: 3e-3, advantageEstimator: 'gae', miniBatches: 2 };
const VOLATILE = /^time_|^gpu_/;
const stable = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !VOLATILE.test(k)));

async function trainer(be: Backend, over: Partial<PpoConfig> = {}, hooks: Pick<TrainerInit, 'onStage' | 'onRecord'> = {}): Promise<PpoTrainer> {
  return PpoTrainer.create({ be, config: tinyConfig({ ...CONFIG, ...over }), actorCheckpoint: await tinyCheckpoint('stop'), ...hooks });
}

/** Two trainers on one backend (the second with `over` applied), disposed after `body`. */
async function withTwo(be: Backend, body: (a: PpoTrainer, b: PpoTrainer) => Promise<void>, over: Partial<PpoConfig> = {}): Promise<void> {
  const a = await trainer(be);
  const b = await trainer(be, over);
  try {
    await body(a, b);
  } finally {
    a.dispose();
    b.dispose();
  }
}

describe.each(BACKENDS)('rollout sampled ahead on %s', (name, makeBackend) => {
  it('the pipeline view announces each stage when the device gets to it; benchmarks see the stages as they are recorded', { timeout: 300_000 }, async () => {
    const be = await makeBackend();
    // Both hooks in one log, with the submits made so far at each call.
    const log: string[] = [];
    const at = () => be.counters().submits;
    const t = await trainer(be, {}, { onStage: (s) => log.push(`stage ${s} @${at()}`), onRecord: (s) => log.push(`record ${s} @${at()}`) });
    try {
      await t.iteration();
      log.length = 0;
      const s0 = at();
      await t.iteration();
      // Four submits: the experience, the first minibatch, the second, and the readback with the rollout ahead.
      expect(at() - s0).toBe(name === 'webgpu' ? 4 : 0);
      const n = (k: number) => `@${s0 + (name === 'webgpu' ? k : 0)}`;
      const head = [`record rollout ${n(0)}`, `stage rollout ${n(0)}`, `record experience ${n(0)}`, `stage experience ${n(0)}`];
      expect(log).toEqual(
        name === 'webgpu'
          ? // Each stage after the first is announced once the device has done the one before: after the final submit.
            [...head, `record update ${n(1)}`, `record rollout ${n(3)}`, `record update ${n(3)}`, `stage update ${n(4)}`, `stage rollout ${n(4)}`]
          : // Ops run as they are recorded: each stage is running as soon as it is announced.
            [...head, `stage update ${n(0)}`, `record update ${n(0)}`, `stage rollout ${n(0)}`, `record rollout ${n(0)}`, `record update ${n(0)}`],
      );
    } finally {
      t.dispose();
    }
  });

  it('3 iterations give the same metrics and weights as sampling at the start of each iteration', { timeout: 300_000 }, async () => {
    const be = await makeBackend();
    await withTwo(be, async (ahead, plain) => {
      for (let i = 0; i < 3; i++) {
        const a = await ahead.iteration();
        const p = await plain.iteration({ sampleNext: false });
        expect(stable(a.metrics)).toEqual(stable(p.metrics));
        expect(a.samples).toEqual(p.samples);
      }
      const [wa, wp] = [await ahead.readWeights(), await plain.readWeights()];
      expect(Array.from(wa.actor)).toEqual(Array.from(wp.actor));
      expect(Array.from(wa.critic!)).toEqual(Array.from(wp.critic!));
    });
  });

  it('sampleAhead before the first iteration: the same iteration, with one readback instead of two', { timeout: 300_000 }, async () => {
    const be = await makeBackend();
    await withTwo(be, async (ahead, plain) => {
      await ahead.sampleAhead();
      const a = await ahead.iteration();
      const p = await plain.iteration();
      expect(stable(a.metrics)).toEqual(stable(p.metrics));
      expect(a.metrics.gpu_readbacks).toBe(p.metrics.gpu_readbacks - 1);
    });
  });

  it('a config change between iterations drops the rollout ahead: the next one samples with the new settings', { timeout: 300_000 }, async () => {
    const be = await makeBackend();
    await withTwo(be, async (ahead, plain) => {
      await ahead.iteration();
      await plain.iteration({ sampleNext: false });
      const cooler = { ...ahead.config, temperature: 0.5, topK: 2 };
      ahead.setConfig(cooler);
      plain.setConfig(cooler);
      expect(stable((await ahead.iteration()).metrics)).toEqual(stable((await plain.iteration({ sampleNext: false })).metrics));
    });
  });

  it('a restored state drops the rollout ahead, even at the same iteration count', { timeout: 300_000 }, async () => {
    const be = await makeBackend();
    // Two runs that differ only in their learning rate reach iteration 2 with different weights.
    await withTwo(
      be,
      async (a, b) => {
        for (let i = 0; i < 2; i++) {
          await a.iteration();
          await b.iteration();
        }
        await a.restoreState(await b.saveState());
        expect(a.iter).toBe(2);
        // b's own rollout ahead was sampled from these weights; a's was not and must not be used.
        expect(stable((await a.iteration()).metrics)).toEqual(stable((await b.iteration()).metrics));
      },
      { actorLr: 1e-3 },
    );
  });
});
