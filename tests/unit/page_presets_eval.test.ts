// Page-side logic of preset runs and the held-out curve: which iteration budget applies to the
// current settings, the configs of a paired preset's arms, the speed/ETA readout, `?budget=` in
// the link, the held-out chart series (sampled + greedy per run, each task's headline metric) and
// evaluation rows in the CSV / JSON exports.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { PRESETS } from '../../src/rl/presets.ts';
import { metricsToCsv, metricsToJson } from '../../src/store/exportMetrics.ts';
import { configMatchesPreset, formatEta, formatSpeed, planArms, presetBudget, speedFrom } from '../../src/store/presetRun.ts';
import type { RunRecord } from '../../src/store/runs.ts';
import { configToQuery, parseQuery } from '../../src/store/urlConfig.ts';
import { greedyId, HELD_OUT_PASS_KEY, heldOutKey, heldOutSeries, heldOutTitle, passId } from '../../src/ui/charts/heldOut.ts';

// The chart texts are in the lazily loaded `charts` namespace.
beforeAll(() => loadNamespaces(['charts']));

const paired = PRESETS.find((p) => (p.arms?.length ?? 0) >= 2)!;
const single = PRESETS.find((p) => !p.arms)!;

function run(id: string, task: string, evals: { iter: number; values: Record<string, number> }[], metrics: RunRecord['metrics'] = []): RunRecord {
  return { id, name: `run ${id}`, color: '#000', visible: true, config: { ...DEFAULT_CONFIG, task } as PpoConfig, backend: 'webgpu', createdAt: 0, metrics, evals };
}

describe('preset budget', () => {
  it('applies while the settings are the preset (or one of its arms), not after they drift', () => {
    const cfg = { ...DEFAULT_CONFIG, ...single.values } as PpoConfig;
    expect(configMatchesPreset(cfg, single)).toBe(true);
    expect(presetBudget(cfg, single.name, null)).toBe(single.iterations);
    expect(presetBudget(cfg, single.name, 3)).toBe(3);
    expect(presetBudget(cfg, null, null)).toBeNull();
    expect(presetBudget(cfg, 'no such preset', null)).toBeNull();
    // Change one value the preset sets: its budget no longer applies.
    const [key, value] = Object.entries(single.values)[0];
    const drifted = { ...cfg, [key]: typeof value === 'number' ? value + 1 : `${String(value)}x` } as PpoConfig;
    expect(presetBudget(drifted, single.name, null)).toBeNull();
    // Every arm of a paired preset counts as that preset.
    const plan = planArms(paired);
    if (!plan.ok) throw new Error(plan.problems.join('; '));
    for (const arm of plan.arms) expect(presetBudget(arm.config, paired.name, null)).toBe(paired.iterations);
  });

  it('plans one valid config per arm, each the whole recipe (never the current settings), or names the problem', () => {
    const plan = planArms(paired);
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(plan.arms.map((a) => a.label)).toEqual(paired.arms!.map((a) => a.label));
    for (const [i, arm] of plan.arms.entries()) expect(arm.config).toEqual({ ...DEFAULT_CONFIG, ...paired.values, ...paired.arms![i].values });
    // The arms differ in what the preset compares.
    expect(JSON.stringify(plan.arms[0].config)).not.toBe(JSON.stringify(plan.arms[1].config));
    // A kept model size that no arm can train is refused with the arm and the field named.
    const bad = planArms(paired, () => ({ nLayer: 2, nHead: 3, dModel: 64 }));
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems[0]).toMatch(new RegExp(`^${paired.arms![0].label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*nHead`));
  });

  it('every preset has a budget of at most 200 iterations', () => {
    for (const p of PRESETS) {
      expect(Number.isInteger(p.iterations), p.name).toBe(true);
      expect(p.iterations, p.name).toBeGreaterThan(0);
      expect(p.iterations, p.name).toBeLessThanOrEqual(200);
    }
  });
});

describe('speed and ETA', () => {
  it('iterations per second over arrival times', () => {
    expect(speedFrom([])).toBeNull();
    expect(speedFrom([5])).toBeNull();
    expect(speedFrom([1000, 1000])).toBeNull();
    expect(speedFrom([0, 500, 1000, 1500, 2000])).toBeCloseTo(2, 12);
    expect(speedFrom([0, 5000])).toBeCloseTo(0.2, 12);
  });

  it('ETA to the budget, "—" without a budget or speed, "done" at the budget', () => {
    expect(formatEta(10, null, 1)).toBe('—');
    expect(formatEta(10, 40, null)).toBe('—');
    expect(formatEta(10, 40, 0)).toBe('—');
    expect(formatEta(10, 40, NaN)).toBe('—');
    expect(formatEta(40, 40, 1)).toBe('done');
    expect(formatEta(30, 40, 2)).toBe('5 s');
    expect(formatEta(0, 40, 0.2)).toBe('3 min 20 s');
    expect(formatEta(0, 200, 0.02)).toBe('2 h 46 min');
    expect(formatSpeed(null)).toBe('—');
    expect(formatSpeed(0.2137)).toBe('0.21 it/s');
    expect(formatSpeed(3.44)).toBe('3.4 it/s');
    expect(formatSpeed(12.6)).toBe('13 it/s');
  });
});

describe('?budget= in the link', () => {
  it('sets every preset budget, survives the round trip, and a bad value is named and ignored', () => {
    const ok = parseQuery('?budget=3&clipLow=0.1');
    expect(ok.budget).toBe(3);
    expect(ok.problems).toEqual([]);
    expect(ok.config.clipLow).toBe(0.1);
    expect(parseQuery(`?${configToQuery(ok.config, [], 3)}`).budget).toBe(3);
    expect(parseQuery(`?${configToQuery(ok.config)}`).budget).toBeNull();
    for (const bad of ['0', '-2', '2.5', 'abc', '', '100000']) {
      const p = parseQuery(`?budget=${bad}&clipLow=0.1`);
      expect(p.budget, bad).toBeNull();
      expect(p.problems, bad).toEqual([`budget = ${JSON.stringify(bad)}: allowed: a whole number of iterations from 1 to 10000`]);
      expect(p.config.clipLow).toBe(0.1);
    }
  });
});

describe('held-out chart series', () => {
  it("plots each task's headline metric, sampled and greedy, keyed by iterations done", () => {
    const a = run('a', 'arithmetic', [
      { iter: 0, values: { accuracy: 0.14, greedy_accuracy: 0.22, eos_rate: 1 } },
      { iter: 10, values: { accuracy: 0.2, greedy_accuracy: 0.3, eos_rate: 1 } },
    ]);
    const s = run('s', 'sentiment', [{ iter: 0, values: { positive_rate: 0.28, greedy_positive_rate: 0, distinct_1: 0.2 } }]);
    const { rows, lines } = heldOutSeries([a, s]);
    expect(rows).toEqual([
      { iter: 0, a: 0.14, [greedyId('a')]: 0.22, s: 0.28, [greedyId('s')]: 0 },
      { iter: 10, a: 0.2, [greedyId('a')]: 0.3 },
    ]);
    expect(lines.map((l) => [l.run.id, l.greedy])).toEqual([
      ['a', true],
      ['s', true],
    ]);
    expect(heldOutKey('stop', [])).toBe('exact_length_rate');
    expect(heldOutTitle(['arithmetic'])).toBe('Held-out accuracy');
    expect(heldOutTitle(['arithmetic', 'sentiment'])).toMatch(/Held-out score/);
  });

  it('draws pass@k (the page draws 4 per prompt) beside accuracy where the evaluation logged it', () => {
    expect(HELD_OUT_PASS_KEY).toBe('pass_at_4');
    const a = run('a', 'arithmetic', [
      { iter: 0, values: { accuracy: 0.24, greedy_accuracy: 0.19, pass_at_4: 0.39 } },
      { iter: 10, values: { accuracy: 0.8, greedy_accuracy: 0.9, pass_at_4: 0.97 } },
    ]);
    // Saved before pass@k was logged: no pass line.
    const old = run('o', 'arithmetic', [{ iter: 0, values: { accuracy: 0.24, greedy_accuracy: 0.19 } }]);
    // A task whose headline is not a rate of correct answers draws none even if a key looks alike.
    const s = run('s', 'sentiment', [{ iter: 0, values: { positive_rate: 0.28, greedy_positive_rate: 0, pass_at_4: 0.5 } }]);
    const { rows, lines } = heldOutSeries([a, old, s]);
    expect(rows).toEqual([
      { iter: 0, a: 0.24, [greedyId('a')]: 0.19, [passId('a')]: 0.39, o: 0.24, [greedyId('o')]: 0.19, s: 0.28, [greedyId('s')]: 0 },
      { iter: 10, a: 0.8, [greedyId('a')]: 0.9, [passId('a')]: 0.97 },
    ]);
    expect(lines.map((l) => [l.run.id, l.greedy, l.pass])).toEqual([
      ['a', true, true],
      ['o', true, false],
      ['s', true, false],
    ]);
  });

  it('runs without evaluations (saved before they existed) or with non-finite values draw nothing', () => {
    const old = { ...run('o', 'arithmetic', []), evals: undefined };
    const nan = run('n', 'arithmetic', [{ iter: 0, values: { accuracy: NaN } }]);
    expect(heldOutSeries([old, nan])).toEqual({ rows: [], lines: [] });
  });
});

describe('exports with held-out evaluations', () => {
  const r = run(
    'r1',
    'arithmetic',
    [
      { iter: 0, values: { accuracy: 0.1, greedy_accuracy: 0.2 } },
      { iter: 2, values: { accuracy: 0.3, greedy_accuracy: 0.4 } },
    ],
    [
      { iter: 0, values: { reward_mean: 0.5 } },
      { iter: 1, values: { reward_mean: 0.6 } },
    ],
  );

  it('CSV: eval_ columns on the row of their iteration, and a row of their own past the last iteration', () => {
    const lines = metricsToCsv([r]).trim().split('\n');
    expect(lines).toEqual(['run_id,run_name,iter,eval_accuracy,eval_greedy_accuracy,reward_mean', 'r1,run r1,0,0.1,0.2,0.5', 'r1,run r1,1,,,0.6', 'r1,run r1,2,0.3,0.4,']);
    // A run saved before evaluations existed exports as before.
    const old = { ...r, evals: undefined };
    expect(metricsToCsv([old]).trim().split('\n')).toEqual(['run_id,run_name,iter,reward_mean', 'r1,run r1,0,0.5', 'r1,run r1,1,0.6']);
  });

  it('JSON: each run carries its evaluations and budget', () => {
    const doc = JSON.parse(metricsToJson([{ ...r, budget: 40, preset: 'Learn arithmetic' }]));
    expect(doc.runs[0].evals).toEqual(r.evals);
    expect(doc.runs[0].budget).toBe(40);
    expect(doc.runs[0].preset).toBe('Learn arithmetic');
    expect(JSON.parse(metricsToJson([{ ...r, evals: undefined }])).runs[0].evals).toEqual([]);
  });
});
