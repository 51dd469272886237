// Which metric charts the page draws, in order: the standard PPO debug metrics, the per-token KL
// the adaptive controller steers, the rollout-vs-old mismatch, and DAPO's dropped groups (only
// for runs that use dynamic sampling).
import type { PpoConfig } from '../../rl/config.ts';
import type { RunRecord } from '../../store/runs.ts';

export interface ChartSpec {
  title: string;
  metric: string;
  /** Shown only for runs (or, with none, the current settings) this holds for, or that logged the metric. */
  only?: (c: PpoConfig) => boolean;
}

export const CHARTS: readonly ChartSpec[] = [
  { title: 'Reward', metric: 'reward_mean' },
  { title: 'Policy loss', metric: 'policy_loss' },
  { title: 'Value loss', metric: 'value_loss' },
  { title: 'Clip fraction', metric: 'clipfrac' },
  { title: 'KL', metric: 'kl' },
  { title: 'KL per token', metric: 'kl_token_mean' },
  { title: 'β', metric: 'beta' },
  { title: 'Approx KL', metric: 'approx_kl' },
  { title: 'Entropy', metric: 'entropy' },
  { title: 'Explained variance', metric: 'explained_variance' },
  { title: 'Response length', metric: 'response_length_mean' },
  { title: 'Rollout vs old KL', metric: 'rollout_old_kl' },
  { title: 'Filtered groups (DAPO)', metric: 'filtered_groups', only: (c) => c.dynamicSampling },
];

/** The charts for these runs (and, when none is shown, the current settings). */
export function chartsFor(runs: readonly Pick<RunRecord, 'config' | 'metrics'>[], current: PpoConfig): ChartSpec[] {
  return CHARTS.filter((c) => {
    if (!c.only) return true;
    if (runs.length === 0) return c.only(current);
    return runs.some((r) => c.only!(r.config) || r.metrics.some((m) => Object.hasOwn(m.values, c.metric)));
  });
}
