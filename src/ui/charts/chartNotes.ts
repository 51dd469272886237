// Why a chart is flat by construction for the runs it shows, so a student does not read a
// critic-free or single-update run's zeros as "nothing happened"; and, for the charts that need it,
// what the line means (the KL the adaptive controller steers, DAPO's dropped groups). The words are
// in the `charts` namespace (notes.*), looked up at each call.
import { t as tr } from '../../i18n/index.ts';
import type { PpoConfig } from '../../rl/config.ts';

export type NoteConfig = Pick<PpoConfig, 'advantageEstimator' | 'ppoEpochs' | 'miniBatches'> &
  Partial<Pick<PpoConfig, 'klController' | 'klTarget' | 'topK' | 'topP' | 'dynamicSampling' | 'klInReward' | 'useKlLoss'>>;

const samplesFromOld = (c: NoteConfig) => (c.topK ?? 0) === 0 && (c.topP ?? 1) === 1;
const oneUpdate = (c: NoteConfig) => c.ppoEpochs * c.miniBatches === 1;
/** The adaptive controller drives β when the KL is in the reward, else the KL-loss coefficient (as OpenRLHF). */
const adaptiveDrives = (c: NoteConfig): 'beta' | 'kl_loss_coef' | null =>
  c.klController !== 'adaptive' ? null : c.klInReward !== false ? 'beta' : c.useKlLoss ? 'kl_loss_coef' : null;

/**
 * The half-height the y axis keeps at least, around 0, for a chart that is 0 by construction up to
 * float32 rounding for every shown run: without it the axis autoscales to ±1e-8 and rounding noise
 * reads as a signal. null: autoscale.
 */
export function noiseFloor(metric: string, configs: readonly NoteConfig[]): number | null {
  if (configs.length === 0) return null;
  if (metric === 'rollout_old_kl' && configs.every(samplesFromOld)) return 0.01;
  if ((metric === 'approx_kl' || metric === 'clipfrac') && configs.every(oneUpdate)) return 0.01;
  return null;
}

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
    if (t !== null) return tr('charts:notes.klTarget', { target: String(t) });
    return tr('charts:notes.klTokenMean');
  }
  if (metric === 'rollout_old_kl' && configs.every(samplesFromOld)) {
    return tr('charts:notes.rolloutOldZero', { piOld: 'π_old' });
  }
  if (metric === 'beta' || metric === 'kl_loss_coef') {
    const driven = configs.map(adaptiveDrives);
    if (driven.every((d) => d === metric)) return tr('charts:notes.coefAdaptive');
    if (driven.every((d) => d === null)) return tr('charts:notes.coefFixed');
    return null;
  }
  if (metric === 'filtered_groups') {
    return tr('charts:notes.filteredGroups');
  }
  if (metric === 'value_loss' || metric === 'explained_variance') {
    if (configs.every((c) => c.advantageEstimator !== 'gae')) {
      // Estimator identifiers (rloo, group_norm), as the settings name them.
      const names = [...new Set(configs.map((c) => c.advantageEstimator))].join(tr('charts:notes.nameSeparator'));
      return tr('charts:notes.noCritic', { names });
    }
  }
  if (metric === 'clipfrac' || metric === 'approx_kl') {
    if (configs.every(oneUpdate)) {
      return tr('charts:notes.oneUpdate');
    }
  }
  return null;
}
