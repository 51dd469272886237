// The config reaches the worker once per change: checked where it entered (the store's
// applyConfig, typed CheckedConfig after), sent ahead of Start when the settings settle, not sent
// again by Start, Step or a Reset, and sent again only to a new worker.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { clientHarness, metrics } from '../helpers/fakeTrainerWorker.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the config sent to the worker', () => {
  it('goes once per change: ahead of Start, not again at Start, Step or Reset', async () => {
    const h = clientHarness();
    h.client.warmUp();
    expect(h.worker.of('setConfig')).toHaveLength(1);
    await h.client.start();
    h.worker.reply(metrics(0));
    await h.client.pause();
    await h.client.step();
    await h.client.reset();
    await h.client.start();
    expect(h.worker.of('setConfig')).toHaveLength(1);
    // A change while a run is active waits for the next run; the next Start sends it, once.
    expect(h.store.getState().setField('seed', 5)).toEqual([]);
    await h.advance(1000);
    expect(h.worker.of('setConfig')).toHaveLength(1);
    await h.client.reset();
    await h.advance(1000); // the settled settings go ahead of Start
    expect(h.worker.of('setConfig').map((m) => m.config.seed)).toEqual([DEFAULT_CONFIG.seed, 5]);
    await h.client.start();
    expect(h.worker.of('setConfig')).toHaveLength(2);
  });

  it('settings typed in a burst go once, when they settle', async () => {
    const h = clientHarness();
    h.client.warmUp();
    for (const lr of [2e-4, 3e-4, 4e-4]) h.store.getState().setField('actorLr', lr);
    await h.advance(1000);
    expect(h.worker.of('setConfig').map((m) => m.config.actorLr)).toEqual([DEFAULT_CONFIG.actorLr, 4e-4]);
    expect(h.worker.of('prepare')).toHaveLength(2);
  });

  it("the test switch 'ppo-test-no-warm-up' leaves the worker to the first command, which gets the settled config", async () => {
    const g = globalThis as { localStorage?: unknown };
    const before = g.localStorage;
    g.localStorage = { getItem: (key: string) => (key === 'ppo-test-no-warm-up' ? '1' : null) };
    try {
      const h = clientHarness();
      h.client.warmUp();
      expect(h.workers).toHaveLength(0);
      // Settings still settle without starting a worker; Start starts one and sends them.
      h.store.getState().setField('seed', 7);
      await h.advance(1000);
      expect(h.workers).toHaveLength(0);
      await h.client.start();
      expect(h.workers).toHaveLength(1);
      expect(h.worker.of('setConfig').map((m) => m.config.seed)).toEqual([7]);
      expect(h.worker.of('prepare')).toHaveLength(0);
    } finally {
      g.localStorage = before;
    }
  });

  it('a new worker (another backend) gets the config again', async () => {
    const h = clientHarness();
    await h.client.step();
    expect(h.worker.of('setConfig')).toHaveLength(1);
    await h.client.reset();
    h.store.getState().setBackend('cpu');
    await h.client.step();
    expect(h.workers).toHaveLength(2);
    expect(h.worker.sent.map((m) => m.type)).toEqual(['init', 'setConfig', 'step']);
  });

  it('an invalid setting never enters the store, so it is never sent', () => {
    const h = clientHarness();
    const before = h.store.getState().config;
    expect(h.store.getState().setField('nHead', 3)[0].field).toBe('nHead');
    expect(h.store.getState().config).toBe(before);
  });
});
