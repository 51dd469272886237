// Why a chart is flat by construction for the runs it shows, so a student does not read a
// critic-free or single-update run's zeros as "nothing happened"; and, for the charts that need it,
// what the line means (the KL the adaptive controller steers, DAPO's dropped groups).
import type { PpoConfig } from '../../rl/config.ts';

export type NoteConfig = Pick<PpoConfig, 'advantageEstimator' | 'ppoEpochs' | 'miniBatches'> &
  Partial<Pick<PpoConfig, 'klController' | 'klTarget' | 'topK' | 'topP' | 'dynamicSampling'>>;

/** The per-token KL target every shown run steers to (adaptive controller, one shared target), else null. */
export function klTargetLine(configs: readonly NoteConfig[]): number | null {
  if (configs.length === 0 || !configs.every((c) => c.klController === 'adaptive')) return null;
  const targets = new Set(configs.map((c) => c.klTarget));
  const [t] = [...targets];
  return targets.size === 1 && typeof t === 'number' ? t : null;
}

/** A one-line note for `metric`'s chart when every shown run makes it 0 by design, else null. */
export function chartNote(metric: string, configs: readonly NoteConfig[]): string | null {
  if (configs.length === 0) return null;
  if (metric === 'kl_token_mean') {
    const t = klTargetLine(configs);
    if (t !== null) return `Adaptive KL: β moves to bring this toward the target of ${t} per token (dashed line).`;
    return 'The mean over responses of each response’s per-token KL to the reference: what the adaptive KL controller reads (verl’s scale).';
  }
  if (metric === 'rollout_old_kl' && configs.every((c) => (c.topK ?? 0) === 0 && (c.topP ?? 1) === 1)) {
    return '≈ 0 by construction: without top-k or top-p the sampler draws from π_old itself. Set Top-k or Top-p to see the mismatch that TIS corrects.';
  }
  if (metric === 'filtered_groups') {
    return 'Prompts whose samples all scored the same (no learning signal), dropped by dynamic sampling and replaced by fresh ones.';
  }
  if (metric === 'value_loss' || metric === 'explained_variance') {
    if (configs.every((c) => c.advantageEstimator !== 'gae')) {
      const names = [...new Set(configs.map((c) => c.advantageEstimator))].join(', ');
      return `No critic: ${names} scores each response against its group, so there is no value function to fit.`;
    }
  }
  if (metric === 'clipfrac' || metric === 'approx_kl') {
    if (configs.every((c) => c.ppoEpochs * c.miniBatches === 1)) {
      return 'One update per batch: it starts at the sampling policy, so every ratio is 1 and nothing clips. Raise PPO epochs or minibatches to see clipping.';
    }
  }
  return null;
}
