// `npm run record-runs` (src/record/): an arm trained through the page's own worker code and
// written as a run file. The file trains the very run `npm run learning` measures for the same
// seed (src/cli/presetRun.ts runs PpoTrainer directly): on the float64 CPU backend every metric of
// every iteration but the wall-clock times is equal, bit for bit, although the two evaluate different numbers of held-out
// prompts (evaluations draw from their own seed stream). The file reads back through every check
// of the page's reader, with the recipe, the budget, the evaluations of the page's schedule, the
// last batch and the inspected first and last iterations.
import { describe, expect, it } from 'vitest';
import { runPreset } from '../../src/cli/presetRun.ts';
import { recordArm } from '../../src/record/recordArm.ts';
import { armConfig, findPreset, presetArms } from '../../src/rl/presets.ts';
import { readRunFile } from '../../src/store/runFile.ts';
import { evalSize } from '../../src/worker/evalSchedule.ts';
import { cpuBackend } from '../helpers/backends.ts';

const ITERS = 3;

describe('a recorded preset run', () => {
  it('"Reward hacking without KL", arm β = 0.6, seed 2: the learning run’s metrics, read back as the page reads a run file', async () => {
    const preset = findPreset('Reward hacking without KL')!;
    const arm = presetArms(preset).findIndex((a) => a.label === 'β = 0.6');
    expect(arm).toBeGreaterThan(0);
    const seed = 2;
    const recorded = await recordArm({ preset, arm, seed, backend: 'cpu', iterations: ITERS });
    const config = armConfig(preset, arm, seed);
    const measured = await runPreset({ be: cpuBackend, config, iters: ITERS, evalCount: 4, evalSamples: 1 });

    expect(recorded.recorder.metrics.map((p) => p.iter)).toEqual([0, 1, 2]);
    // every metric but the wall-clock ones (time_rollout_s, …)
    const trained = (values: object) => Object.fromEntries(Object.entries(values).filter(([k]) => !k.startsWith('time_')));
    expect(Object.keys(trained(measured.metrics[0])).length).toBeGreaterThan(20);
    expect(recorded.recorder.metrics.map((p) => trained(p.values))).toEqual(measured.metrics.map(trained));

    const file = readRunFile(recorded.text);
    expect(file.run.config).toEqual(config);
    expect(file.run.config.klCoef).toBe(0.6);
    expect(file.run).toMatchObject({ name: 'β = 0.6', preset: preset.name, budget: ITERS, backend: 'cpu' });
    expect(file.run.metrics).toEqual(recorded.recorder.metrics);
    // the page's schedule: the SFT model, then the end of the budget, each on the page's number of prompts
    expect(file.run.evals?.map((e) => [e.iter, e.prompts])).toEqual([
      [0, evalSize(config).count],
      [ITERS, evalSize(config).count],
    ]);
    expect(file.batch?.samples?.iter).toBe(ITERS - 1);
    expect(file.batch?.samples?.rows.length).toBeGreaterThan(0); // the trainer's sample rows, as the page gets them
    expect(file.batch?.ratios?.clip).toEqual({ clipLow: config.clipLow, clipHigh: config.clipHigh, dualClip: config.dualClip });
    expect(file.traces.map((t) => t.trace.iter)).toEqual([0, ITERS - 1]);
    for (const t of file.traces) expect(t.tokenText).toHaveLength(t.trace.B * t.trace.A);
    expect(file.state).toBeNull();
  });
});
