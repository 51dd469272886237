// An own-model run's rows as the playground's metric points: the charts, their notes and the CSV
// export read them by the metric vocabulary's names.
import { beforeAll, describe, expect, it } from 'vitest';
import { isMetricName } from '../../src/rl/metricNames.ts';
import { metricsToCsv } from '../../src/store/exportMetrics.ts';
import { HF_ROW_METRICS, hfMetricPoints } from '../../src/store/hfRunMetrics.ts';
import { noteConfigs } from '../../src/ui/charts/chartRun.ts';
import { chartNote } from '../../src/ui/charts/chartNotes.ts';
import { hfChartRun, hfRunsChart } from '../../src/ui/hf/hfChartRun.ts';
import { DEFAULT_HF_TRAIN } from '../../src/rl/hf/hfTrainSettings.ts';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { hfRunRow } from '../helpers/hfRunFixture.ts';
import { Rng } from '../../src/util/rng.ts';

describe('hfMetricPoints', () => {
  it("carries each row's numbers under the vocabulary's names, a critic's value loss only where there is one", () => {
    const rng = new Rng(7);
    const rows = [hfRunRow(rng, 1), { ...hfRunRow(rng, 2), value_loss: null }, hfRunRow(rng, 3)];
    rows[0].value_loss = 0.25;
    rows[2].value_loss = 0.125;
    const points = hfMetricPoints(rows);
    for (const name of HF_ROW_METRICS) expect(isMetricName(name), name).toBe(true);
    expect(points.map((p) => p.iter)).toEqual([1, 2, 3]);
    points.forEach((p, i) => {
      const r = rows[i];
      expect(p.values).toEqual({
        reward_mean: r.reward_mean,
        kl: r.kl,
        response_length_mean: r.response_length_mean,
        policy_loss: r.policy_loss,
        clipfrac: r.clipfrac,
        ...(r.value_loss === null ? {} : { value_loss: r.value_loss }),
      });
    });
    expect('value_loss' in points[1].values).toBe(false);
  });

  it('exports as the playground CSV: one line an iteration, every number as the trainer gave it', () => {
    const rng = new Rng(8);
    const rows = [hfRunRow(rng, 1), hfRunRow(rng, 2)].map((r) => ({ ...r, value_loss: null }));
    const csv = metricsToCsv([{ id: 'now', name: '=group_norm, lr 0.001', metrics: hfMetricPoints(rows) }]);
    const [header, ...lines] = csv.trim().split('\n');
    expect(header).toBe('run_id,run_name,iter,clipfrac,kl,policy_loss,response_length_mean,reward_mean');
    expect(lines).toHaveLength(2);
    lines.forEach((line, i) => {
      // a name a spreadsheet would run as a formula is written as text
      expect(line.startsWith(`now,"'=group_norm, lr 0.001",${i + 1},`)).toBe(true);
      const numbers = line.split(',').slice(-5).map(Number);
      const r = rows[i];
      expect(numbers).toEqual([r.clipfrac, r.kl, r.policy_loss, r.response_length_mean, r.reward_mean]);
    });
  });
});

describe('noteConfigs', () => {
  const config = { advantageEstimator: 'group_norm' as const, ppoEpochs: 1, miniBatches: 1 };
  const run = (id: string, c: typeof config | null) => ({ id, name: id, color: '#000', metrics: [], config: c });
  it("gives every run's settings, or none when one run's are not known", () => {
    expect(noteConfigs([run('a', config), run('b', { ...config, ppoEpochs: 2 })])).toHaveLength(2);
    expect(noteConfigs([run('a', config), run('b', null)])).toEqual([]);
    expect(noteConfigs([])).toEqual([]);
  });
});

describe('an own-model run on the charts', () => {
  beforeAll(() => loadNamespaces(['charts']));
  const rng = new Rng(9);
  const grpo = hfChartRun({
    id: 'g',
    name: 'GRPO',
    color: '#000',
    rows: [1, 2].map((i) => ({ ...hfRunRow(rng, i), value_loss: null })),
    settings: { ...DEFAULT_HF_TRAIN, estimator: 'group_norm', ppoEpochs: 1, miniBatches: 1 },
  });
  const ppo = hfChartRun({
    id: 'p',
    name: 'PPO',
    color: '#111',
    rows: [1, 2].map((i) => ({ ...hfRunRow(rng, i), value_loss: 0.5 })),
    settings: { ...DEFAULT_HF_TRAIN, estimator: 'gae' },
  });

  it('has a chart for each metric its rows carry, the value loss only where a critic ran', () => {
    for (const m of ['reward_mean', 'policy_loss', 'clipfrac', 'kl', 'response_length_mean'] as const) expect(hfRunsChart(m, [grpo]), m).toBe(true);
    expect(hfRunsChart('value_loss', [grpo])).toBe(false);
    expect(hfRunsChart('value_loss', [grpo, ppo])).toBe(true);
    for (const m of ['entropy', 'approx_kl', 'beta', 'kl_token_mean'] as const) expect(hfRunsChart(m, [grpo, ppo]), m).toBe(false);
  });

  it("gives the notes the run's settings: a single update per batch says why its clip fraction is 0", () => {
    expect(chartNote('clipfrac', noteConfigs([grpo]))).toMatch(/every ratio is 1/);
    expect(chartNote('clipfrac', noteConfigs([grpo, ppo]))).toBeNull(); // PPO's arm updates 2 × 2 times a batch
    expect(hfChartRun({ id: 'x', name: 'x', color: '#000', rows: [], settings: null }).config).toBeNull();
  });
});
