// A reward function written in the page, through the worker with the real PpoTrainer (float64 CPU
// backend, tiny model): it is checked when its config arrives, it scores every sample it is given,
// and a call that throws pauses the run with the sample, leaving the trainer's whole state (weights,
// moments, counter) as it was; the user edits the function and training goes on.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import type { PpoTrainer } from '../../src/rl/trainer.ts';
import { PpoTrainer as Trainer } from '../../src/rl/trainer.ts';
import { rng } from '../helpers/random.ts';
import { tinyShipped, workerHarness } from '../helpers/workerHarness.ts';

const SMALL: Partial<PpoConfig> = { promptsPerBatch: 2, samplesPerPrompt: 2, maxResponseLength: 4, ppoEpochs: 1, miniBatches: 1 };
const LENGTH = '(prompt, response) => response.length / 4';
const THROWS = '(prompt, response) => { throw new Error("no reward for " + prompt) }';

function host(salt: number) {
  let trainer: PpoTrainer | null = null;
  const h = workerHarness({
    fetchCheckpoint: tinyShipped(rng(salt).int(0, 1e6)),
    patience: 60_000,
    pollEvery: 5,
    createTrainer: async (init) => {
      trainer = await Trainer.create(init);
      return trainer;
    },
  });
  return { ...h, trainer: () => trainer as unknown as PpoTrainer };
}

describe('a written reward function in the worker (cpu)', () => {
  it('is checked on arrival: a working one reports its score on a sample, a broken one names the problem and the sample', async () => {
    const h = host(61);
    await h.send({ type: 'init', backend: 'cpu' });
    const cfg = { ...DEFAULT_CONFIG, ...SMALL, task: 'sentiment' as const, rewardSource: 'function' as const };
    await h.send({ type: 'setConfig', config: { ...cfg, rewardFunction: LENGTH } });
    await h.send({ type: 'setConfig', config: { ...cfg, rewardFunction: '(prompt, response) => NaN' } });
    await h.send({ type: 'setConfig', config: { ...cfg, rewardFunction: '(prompt, response) =>' } });
    const [ok, nan, syntax] = h.of('rewardFunctionChecked');
    expect(ok.problem).toBeUndefined();
    expect(ok.score).toBeGreaterThan(0);
    expect(nan.problem).toMatchObject({ kind: 'not-a-number', message: expect.stringMatching(/returned NaN; allowed: a finite number/) });
    expect(nan.problem?.sample?.prompt).toMatch(/^the /);
    expect(syntax.problem?.kind).toBe('syntax');
    expect(h.of('error')).toEqual([]);
  });

  it('scores with the function; a throwing one pauses with its sample and changes nothing; the edited one trains on', async () => {
    const h = host(62);
    await h.send({ type: 'init', backend: 'cpu' });
    const cfg: PpoConfig = { ...DEFAULT_CONFIG, ...SMALL, task: 'sentiment', rewardSource: 'function', rewardFunction: LENGTH };
    await h.send({ type: 'setConfig', config: cfg });
    await h.send({ type: 'step' });
    for (const row of h.of('samples')[0].rows) {
      const expected = Math.min(cfg.scoreClip, row.response.length / 4) + (row.endedWithEos ? 0 : cfg.noEosPenalty);
      expect(row.reward).toBeCloseTo(expected, 12);
    }
    const t = h.trainer();
    // The saved state holds the config, so it is read after the edit and before the failing step.
    await h.send({ type: 'setConfig', config: { ...cfg, rewardFunction: THROWS } });
    const before = await t.saveState();
    await h.send({ type: 'step' });
    const paused = h.of('paused').at(-1);
    expect(paused?.rewardFunction).toMatchObject({ kind: 'threw', iter: 2, message: expect.stringMatching(/threw Error: no reward for the /) });
    expect(paused?.rewardFunction?.sample?.prompt).toMatch(/^the /);
    expect(typeof paused?.rewardFunction?.sample?.response).toBe('string');
    expect(paused?.reason).toMatch(/nothing of that iteration was applied/);
    // The same trainer, byte for byte: weights, optimiser moments, counter, KL coefficient.
    expect(h.trainer()).toBe(t);
    expect(t.iter).toBe(1);
    expect(Array.from(await t.saveState())).toEqual(Array.from(before));
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0]);

    await h.send({ type: 'setConfig', config: cfg });
    await h.send({ type: 'step' });
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1]);
    expect(t.iter).toBe(2);
    expect(Array.from(await t.saveState())).not.toEqual(Array.from(before));
    expect(h.of('error')).toEqual([]);
  });
});
