// Why a chart is flat by construction for the runs it shows, so a student does not read a
// critic-free or single-update run's zeros as "nothing happened".
import type { PpoConfig } from '../../rl/config.ts';

type NoteConfig = Pick<PpoConfig, 'advantageEstimator' | 'ppoEpochs' | 'miniBatches'>;

/** A one-line note for `metric`'s chart when every shown run makes it 0 by design, else null. */
export function chartNote(metric: string, configs: readonly NoteConfig[]): string | null {
  if (configs.length === 0) return null;
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
