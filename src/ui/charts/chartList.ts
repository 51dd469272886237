// Which metric charts the page draws, in order: the standard PPO debug metrics, the per-token KL
// the adaptive controller steers, every KL coefficient a run applies (β in the reward, the KL-loss
// coefficient), the rollout-vs-old mismatch, and DAPO's dropped groups (only for runs that use
// dynamic sampling). Presenter mode draws PRESENTER_METRICS only. Titles are in the `charts`
// namespace (titles.<metric>), read when shown so they follow the page's language.
import { t } from '../../i18n/index.ts';
import type { PpoConfig } from '../../rl/config.ts';
import type { MetricName } from '../../rl/metricNames.ts';
import type { RunRecord } from '../../store/runs.ts';

export interface ChartSpec {
  /** The chart's title in the current language. */
  readonly title: string;
  metric: MetricName;
  /** Shown only for runs (or, with none, the current settings) this holds for, or that logged the metric. */
  only?: (c: PpoConfig) => boolean;
  /**
   * Like `only`, for a metric every run logs whether it applies or not (β is logged as 0 without
   * the KL in the reward): shown only for runs this holds for.
   */
  applies?: (c: PpoConfig) => boolean;
}

/** The title of `metric`'s chart in the current language. */
export function chartTitle(metric: string): string {
  return t(`charts:titles.${metric}`);
}

function chart(metric: MetricName, when: Pick<ChartSpec, 'only' | 'applies'> = {}): ChartSpec {
  return {
    metric,
    ...when,
    get title() {
      return chartTitle(metric);
    },
  };
}

export const CHARTS: readonly ChartSpec[] = [
  chart('reward_mean'),
  chart('policy_loss'),
  chart('value_loss'),
  chart('clipfrac'),
  chart('kl'),
  chart('kl_token_mean'),
  chart('beta', { applies: (c) => c.klInReward }),
  chart('kl_loss_coef', { applies: (c) => c.useKlLoss }),
  chart('kl_loss', { applies: (c) => c.useKlLoss }),
  chart('approx_kl'),
  chart('entropy'),
  chart('explained_variance'),
  chart('response_length_mean'),
  chart('rollout_old_kl'),
  chart('filtered_groups', { only: (c) => c.dynamicSampling }),
  chart('rollout_corr_rollout_rs_masked_fraction', { only: (c) => c.rolloutRs !== 'off' }),
];

/**
 * The four a lecture needs on a projector: is it learning (reward), does it generalise (held-out
 * accuracy, drawn beside Reward), how hard does each update push (clip fraction), how far from the
 * reference has it gone (KL).
 */
export const PRESENTER_METRICS: readonly MetricName[] = ['reward_mean', 'clipfrac', 'kl'];

/** The charts for these runs (and, when none is shown, the current settings); presenter mode keeps PRESENTER_METRICS. */
export function chartsFor(runs: readonly Pick<RunRecord, 'config' | 'metrics'>[], current: PpoConfig, present = false): ChartSpec[] {
  if (present) return CHARTS.filter((c) => PRESENTER_METRICS.includes(c.metric));
  return CHARTS.filter((c) => {
    if (c.applies) return runs.length === 0 ? c.applies(current) : runs.some((r) => c.applies!(r.config));
    if (!c.only) return true;
    if (runs.length === 0) return c.only(current);
    return runs.some((r) => c.only!(r.config) || r.metrics.some((m) => Object.hasOwn(m.values, c.metric)));
  });
}
