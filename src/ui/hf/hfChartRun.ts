// An own-model run as the playground's chart draws it (ChartRun): its rows as metric points under
// the vocabulary's names, and what the charts' notes read of its settings. The own-model panel and
// an embedded chart of a run file (`?run=FILE&embed=chart:<metric>`) draw it the same way.
import type { HfTrainRow, HfTrainSettings } from '../../rl/hf/hfTrainSettings.ts';
import type { MetricName } from '../../rl/metricNames.ts';
import { HF_ROW_METRICS, hfMetricPoints } from '../../store/hfRunMetrics.ts';
import type { NoteConfig } from '../charts/chartNotes.ts';
import type { ChartRun } from '../charts/chartRun.ts';

/** What the charts' notes read of an own-model run: its estimator and updates (a fixed β in the reward, plain sampling). */
export function noteConfigOf(s: HfTrainSettings): NoteConfig {
  return { advantageEstimator: s.estimator, ppoEpochs: s.ppoEpochs, miniBatches: s.miniBatches, klController: 'fixed', klInReward: true, useKlLoss: false, topK: 0, topP: 1 };
}

export function hfChartRun(run: { id: string; name: string; color: string; rows: readonly HfTrainRow[]; settings: HfTrainSettings | null; dashed?: boolean }): ChartRun {
  return {
    id: run.id,
    name: run.name,
    color: run.color,
    metrics: hfMetricPoints(run.rows),
    config: run.settings ? noteConfigOf(run.settings) : null,
    ownModel: true,
    ...(run.dashed ? { dashed: true } : {}),
  };
}

/** Whether `metric` has a chart for these runs: one of the rows' metrics, and a value loss only where a critic ran. */
export function hfRunsChart(metric: MetricName, runs: readonly ChartRun[]): boolean {
  if (!(HF_ROW_METRICS as readonly string[]).includes(metric)) return false;
  return metric !== 'value_loss' || runs.some((r) => r.metrics.some((p) => p.values.value_loss !== undefined));
}
