// The trainer's full state (src/rl/trainerState.ts): save at iteration k, continue to k+n; a fresh
// trainer loaded from the saved bytes and run to k+n gives identical metrics and weights on the
// float64 CPU backend, and close ones on WebGPU. Bad files are rejected without touching anything;
// the device snapshot undoes an iteration (critic, moments, β and counter included).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { decodeSafetensors, encodeSafetensors } from '../../src/model/safetensors.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { decodeTrainerState } from '../../src/rl/trainerState.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectClose } from '../helpers/random.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

// GAE (a critic), adaptive KL, two epochs: every piece of state matters for the continuation.
const CONFIG: Partial<PpoConfig> = {
  seed: 9,
  actorLr: 3e-3,
  ppoEpochs: 2,
  klController: 'adaptive',
  klCoef: 0.1,
  klTarget: 0.05,
  klHorizon: 32,
  advantageEstimator: 'gae',
  warmupSteps: 3,
};
const VOLATILE = /^time_|^gpu_/;
const stable = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !VOLATILE.test(k)));

async function resumeRun(be: Backend, k: number, n: number) {
  const ck = await tinyCheckpoint('stop');
  const a = await PpoTrainer.create({ be, config: tinyConfig(CONFIG), actorCheckpoint: ck });
  for (let i = 0; i < k; i++) await a.iteration();
  const state = await a.saveState();
  const straight: Record<string, number>[] = [];
  for (let i = 0; i < n; i++) straight.push(stable((await a.iteration()).metrics));
  const wa = await a.readWeights();
  a.dispose();
  const b = await PpoTrainer.loadState({ be, state });
  expect(b.iter).toBe(k);
  const resumed: Record<string, number>[] = [];
  for (let i = 0; i < n; i++) resumed.push(stable((await b.iteration()).metrics));
  const wb = await b.readWeights();
  b.dispose();
  return { state, straight, resumed, wa, wb };
}

describe('trainer state', () => {
  it('CPU: save at k = 2, resume in a fresh trainer: iterations 2..4 identical (metrics and weights)', { timeout: 120_000 }, async () => {
    const { state, straight, resumed, wa, wb } = await resumeRun(cpuBackend, 2, 2);
    expect(resumed).toEqual(straight);
    expect(Array.from(wb.actor)).toEqual(Array.from(wa.actor));
    expect(Array.from(wb.critic!)).toEqual(Array.from(wa.critic!));
    const parsed = decodeTrainerState(state);
    expect(parsed.iteration).toBe(2);
    expect(parsed.actor.steps).toBe(2 * 2 * 2); // iterations × epochs × minibatches
    expect(parsed.critic).not.toBeNull();
    expect(parsed.config.klController).toBe('adaptive');
    expect(parsed.klBeta).not.toBe(0.1); // the controller moved and its β is kept
  });

  it('WebGPU: the resumed run stays close to the straight one', { timeout: 300_000 }, async () => {
    const { straight, resumed, wa, wb } = await resumeRun(await webgpuBackend(), 1, 1);
    for (const key of ['reward_mean', 'kl_token_mean', 'policy_loss', 'value_loss', 'beta']) {
      expectClose([resumed[0][key]], [straight[0][key]], 1e-4, 1e-6, key);
    }
    expectClose(wb.actor, wa.actor, 1e-4, 1e-6, 'actor');
    expectClose(wb.critic!, wa.critic!, 1e-4, 1e-6, 'critic');
  });

  it('the reference stays the SFT weights and rejects broken files without touching the trainer', { timeout: 120_000 }, async () => {
    const ck = await tinyCheckpoint('stop');
    const t = await PpoTrainer.create({ be: cpuBackend, config: tinyConfig(CONFIG), actorCheckpoint: ck });
    await t.iteration();
    const good = await t.saveState();
    const sftRef = decodeTrainerState(good).reference;
    const fresh = await PpoTrainer.create({ be: cpuBackend, config: tinyConfig(CONFIG), actorCheckpoint: ck });
    expect(Array.from(decodeTrainerState(await fresh.saveState()).reference)).toEqual(Array.from(sftRef));
    fresh.dispose();

    const before = await t.readWeights();
    const { tensors, metadata } = decodeSafetensors(good);
    const rebuild = (meta: Record<string, string>, drop?: string, poison?: string) =>
      encodeSafetensors(
        [...tensors]
          .filter(([name]) => name !== drop)
          .map(([name, x]) => {
            const data = x.data.slice();
            if (name === poison) data[3] = NaN;
            return { name, dtype: x.dtype, shape: x.shape, data };
          }),
        meta,
      );
    const cases: [Uint8Array, RegExp][] = [
      [good.subarray(0, good.length - 9), /truncated|out of range/],
      [rebuild({ ...metadata, format_version: '99' }), /format_version 99/],
      [rebuild({ ...metadata, task: 'arithmetic', config: JSON.stringify({ ...JSON.parse(metadata.config), task: 'arithmetic' }) }), /alphabet|task|vocab/],
      [rebuild(metadata, 'critic.adam_v'), /critic\.adam_v" is missing|unexpected tensor/],
      [rebuild(metadata, undefined, 'actor.adam_m'), /actor\.adam_m" holds a non-finite value/],
      [rebuild({ ...metadata, config: JSON.stringify({ ...JSON.parse(metadata.config), lam: 7 }) }), /lam = 7/],
      [rebuild({ ...metadata, iteration: '-1' }), /iteration/],
      // Found by `npm run fuzz`: a config that is not an object, and one broken everywhere, got a
      // 4 kB message listing every setting; now the first three problems and a count.
      [rebuild({ ...metadata, config: '[1]' }), /metadata "config" must be an object, got \[1\]/],
      [rebuild({ ...metadata, config: JSON.stringify({ task: JSON.parse(metadata.config).task }) }), /config is invalid: .*; and \d+ more$/],
    ];
    for (const [bytes, why] of cases) {
      await expect(t.restoreState(bytes)).rejects.toThrow(why);
      await expect(PpoTrainer.loadState({ be: cpuBackend, state: bytes })).rejects.toThrow(why);
    }
    const after = await t.readWeights();
    expect(Array.from(after.actor)).toEqual(Array.from(before.actor));
    expect(t.iter).toBe(1);
    // a good file restores in place: back to iteration 1's state after two more iterations
    await t.iteration();
    await t.iteration();
    await t.restoreState(good);
    expect(t.iter).toBe(1);
    expect(Array.from((await t.readWeights()).actor)).toEqual(Array.from(before.actor));
    t.dispose();
  });

  it('the device snapshot undoes an iteration: weights, critic, both moments, β and the counter', { timeout: 120_000 }, async () => {
    const ck = await tinyCheckpoint('stop');
    const t = await PpoTrainer.create({ be: cpuBackend, config: tinyConfig(CONFIG), actorCheckpoint: ck });
    await t.iteration();
    const snap = t.deviceSnapshot();
    const before = await t.saveState();
    const next = (await t.iteration()).metrics;
    t.restoreDeviceSnapshot(snap);
    expect(Array.from(await t.saveState())).toEqual(Array.from(before));
    // and the same iteration replays identically
    const again = (await t.iteration()).metrics;
    expect(stable(again)).toEqual(stable(next));
    t.dispose();
  });
});
