// Which metric charts the page draws, in order: the standard PPO debug metrics, the per-token KL
// the adaptive controller steers, every KL coefficient a run applies (β in the reward, the KL-loss
// coefficient), the rollout-vs-old mismatch, and DAPO's dropped groups (only for runs that use
// dynamic sampling). Presenter mode draws PRESENTER_METRICS only.
import type { PpoConfig } from '../../rl/config.ts';
import type { RunRecord } from '../../store/runs.ts';

export interface ChartSpec {
  title: string;
  metric: string;
  /** Shown only for runs (or, with none, the current settings) this holds for, or that logged the metric. */
  only?: (c: PpoConfig) => boolean;
  /**
   * Like `only`, for a metric every run logs whether it applies or not (β is logged as 0 without
   * the KL in the reward): shown only for runs this holds for.
   */
  applies?: (c: PpoConfig) => boolean;
}

export const CHARTS: readonly ChartSpec[] = [
  { title: 'Reward', metric: 'reward_mean' },
  { title: 'Policy loss', metric: 'policy_loss' },
  { title: 'Value loss', metric: 'value_loss' },
  { title: 'Clip fraction', metric: 'clipfrac' },
  { title: 'KL', metric: 'kl' },
  { title: 'KL per token', metric: 'kl_token_mean' },
  { title: 'β', metric: 'beta', applies: (c) => c.klInReward },
  { title: 'KL loss coefficient', metric: 'kl_loss_coef', applies: (c) => c.useKlLoss },
  { title: 'KL loss', metric: 'kl_loss', applies: (c) => c.useKlLoss },
  { title: 'Approx KL', metric: 'approx_kl' },
  { title: 'Entropy', metric: 'entropy' },
  { title: 'Explained variance', metric: 'explained_variance' },
  { title: 'Response length', metric: 'response_length_mean' },
  { title: 'Rollout vs old KL', metric: 'rollout_old_kl' },
  { title: 'Filtered groups (DAPO)', metric: 'filtered_groups', only: (c) => c.dynamicSampling },
];

/**
 * The four a lecture needs on a projector: is it learning (reward), does it generalise (held-out
 * accuracy, drawn beside Reward), how hard does each update push (clip fraction), how far from the
 * reference has it gone (KL).
 */
export const PRESENTER_METRICS: readonly string[] = ['reward_mean', 'clipfrac', 'kl'];

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
