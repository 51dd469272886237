// The held-out chart's caption: each run's own prompt count and schedule (recorded by its
// evaluations, else derived from its config), one phrase when the runs agree, and how long the
// latest evaluation took.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import type { RunRecord } from '../../src/store/runs.ts';
import { formatSeconds, heldOutCaption } from '../../src/ui/charts/heldOut.ts';
import { evalSize } from '../../src/worker/evalSchedule.ts';

// The chart texts are in the lazily loaded `charts` namespace.
beforeAll(() => loadNamespaces(['charts']));

const cfg = (c: Partial<PpoConfig>) => ({ ...DEFAULT_CONFIG, ...c }) as PpoConfig;
const run = (name: string, c: Partial<PpoConfig>, evals: RunRecord['evals'] = []) => ({ name, config: cfg(c), evals });

describe('held-out caption', () => {
  it('each run counts its own prompts: two runs of different batch sizes are named apart', () => {
    const big = run('big', { promptsPerBatch: 16, samplesPerPrompt: 4, evalEvery: 10 });
    const small = run('small', { promptsPerBatch: 4, samplesPerPrompt: 4, evalEvery: 5 });
    // The current settings are a third size: they must not decide either run's count.
    const { scope } = heldOutCaption([big, small], cfg({ promptsPerBatch: 2, samplesPerPrompt: 2, evalEvery: 3 }));
    expect(evalSize(big.config).count).toBe(38);
    expect(evalSize(small.config).count).toBe(10);
    expect(scope).toBe('big: 38 prompts every 10 iterations; small: 10 prompts every 5 iterations');
  });

  it('runs that agree share one phrase; what an evaluation recorded wins over the config', () => {
    const a = run('a', { promptsPerBatch: 16, samplesPerPrompt: 4 }, [{ iter: 0, values: { accuracy: 0.2 }, prompts: 38, seconds: 3.2 }]);
    const b = run('b', { promptsPerBatch: 16, samplesPerPrompt: 4 });
    expect(heldOutCaption([a, b], cfg({})).scope).toBe('38 prompts every 10 iterations');
    const recorded = run('r', { promptsPerBatch: 16, samplesPerPrompt: 4 }, [{ iter: 0, values: {}, prompts: 51 }]);
    expect(heldOutCaption([recorded], cfg({})).scope).toBe('51 prompts every 10 iterations');
  });

  it('with no run it describes the current settings; evaluation off is said', () => {
    expect(heldOutCaption([], cfg({ promptsPerBatch: 4, samplesPerPrompt: 4, evalEvery: 10 })).scope).toBe("10 prompts every 10 iterations (this run's settings)");
    expect(heldOutCaption([run('x', { evalEvery: 0 })], cfg({})).scope).toMatch(/prompts, evaluation off$/);
  });

  it('says how long the latest timed evaluation of the given run took', () => {
    const r = run('a', {}, [
      { iter: 0, values: {}, seconds: 3.24 },
      { iter: 10, values: {}, seconds: 2.96 },
      { iter: 20, values: {} }, // saved before durations were recorded
    ]);
    expect(heldOutCaption([r], cfg({}), r).took).toBe('last evaluation (after 10 iterations) took 3.0 s');
    expect(heldOutCaption([r], cfg({}), null).took).toBeNull();
    expect(heldOutCaption([r], cfg({}), run('none', {})).took).toBeNull();
  });

  it('formats durations', () => {
    expect([0.842, 3.24, 12.4, 125].map(formatSeconds)).toEqual(['0.84 s', '3.2 s', '12 s', '2 min 05 s']);
  });
});
