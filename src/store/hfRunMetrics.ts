// An own-model run's rows as the playground's metric points: the same names for the same numbers
// (src/rl/metricNames.ts; the own-model trainer averages its losses and clip fraction over every
// update step, as the playground's does), so its charts, their help and the CSV export are the
// playground's. `iter` is the row's own: iterations done, as the panel's table counts them.
import type { HfTrainRow } from '../rl/hf/hfTrainSettings.ts';
import type { MetricValues } from '../rl/metricNames.ts';
import type { MetricPoint } from './runs.ts';

/** The metrics a row carries, in the vocabulary's names (value_loss only with a critic). */
export const HF_ROW_METRICS = ['reward_mean', 'kl', 'response_length_mean', 'policy_loss', 'clipfrac', 'value_loss'] as const satisfies readonly (keyof HfTrainRow &
  keyof MetricValues)[];

export function hfMetricPoints(rows: readonly HfTrainRow[]): MetricPoint[] {
  return rows.map((r) => {
    const values: MetricValues = {};
    for (const name of HF_ROW_METRICS) {
      const v = r[name];
      if (v !== null) values[name] = v;
    }
    return { iter: r.iter, values };
  });
}
