// The names of the numbers an iteration reports, snake_case as verl / TRL log them: one vocabulary
// for the trainer that computes them (metrics.ts, probe.ts), the `metrics` message that carries
// them, the store that keeps them, the charts that draw them and the exports that write them.

/** Every iteration reports these. */
export const ITERATION_METRICS = [
  'iter',
  // the batch and its rewards (metrics.ts experienceMetrics)
  'reward_mean',
  'reward_min',
  'reward_max',
  'shaped_reward_mean',
  'token_reward_sum_mean',
  'kl',
  'kl_seq',
  'kl_token_mean',
  'beta',
  'kl_loss_coef',
  'advantages_mean',
  'advantages_std',
  'returns_mean',
  'values_mean',
  'explained_variance',
  'response_length_mean',
  'eos_rate',
  // the update (metrics.ts updateMetrics)
  'policy_loss',
  'clipfrac',
  'clipfrac_lower',
  'approx_kl',
  'entropy',
  'kl_loss',
  'actor_grad_norm',
  'value_loss',
  'vf_clipfrac',
  'critic_grad_norm',
  'actor_skipped_steps',
  'critic_skipped_steps',
  'update_steps',
  'actor_lr',
  'critic_lr',
  // time and device work (probe.ts)
  'time_rollout_s',
  'time_experience_s',
  'time_update_s',
  'gpu_submits',
  'gpu_readbacks',
  'gpu_dispatches',
] as const;

/**
 * Reported where they apply: the text task's fluency and diversity, the rollout-vs-old mismatch
 * (rollouts that kept their sampler's log-probs), DAPO's dynamic sampling counts.
 */
export const OCCASIONAL_METRICS = [
  'fluency',
  'distinct_1',
  'distinct_2',
  'rollout_old_kl',
  'rollout_old_max_abs_diff',
  'filtered_groups',
  'dynamic_sampling_rounds',
  'filled_with_filtered',
] as const;

/** verl's rollout_corr/ metrics with '_' for '/', for the rollout correction an iteration applied (metrics.ts). */
export type RolloutCorrMetric = `rollout_corr_${string}`;

export type IterationMetric = (typeof ITERATION_METRICS)[number];
export type OccasionalMetric = (typeof OCCASIONAL_METRICS)[number];
export type MetricName = IterationMetric | OccasionalMetric | RolloutCorrMetric;

/**
 * One iteration's metrics as the trainer returns them: every IterationMetric, and the occasional
 * ones where they apply (tests/integration/metric_names.test.ts checks each name is a MetricName).
 */
export type IterationMetrics = Record<IterationMetric, number> & { readonly [name: string]: number };

/** Metric values as a message carries them and the store keeps them: any of the names (a run saved by an older page may lack some). */
export type MetricValues = Partial<Record<MetricName, number>>;

const KNOWN: ReadonlySet<string> = new Set([...ITERATION_METRICS, ...OCCASIONAL_METRICS]);

/** Whether `name` is a metric of the vocabulary. */
export function isMetricName(name: string): name is MetricName {
  return KNOWN.has(name) || name.startsWith('rollout_corr_');
}
