// Why a chart is flat by construction for the runs it shows, so a student does not read a
// critic-free or single-update run's zeros as "nothing happened"; and, for the charts that need it,
// what the line means (the KL the adaptive controller steers, DAPO's dropped groups).
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
    if (t !== null) return `Adaptive KL: β moves to bring this toward the target of ${t} per token (dashed line).`;
    return 'The mean over responses of each response’s per-token KL to the reference: what the adaptive KL controller reads (verl’s scale).';
  }
  if (metric === 'rollout_old_kl' && configs.every(samplesFromOld)) {
    return '≈ 0 by construction, up to float32 rounding: without top-k or top-p the sampler draws from π_old itself (the same weights), so the axis stays at ±0.01 rather than magnify rounding. Set Top-k or Top-p to see the mismatch that TIS corrects.';
  }
  if (metric === 'beta' || metric === 'kl_loss_coef') {
    const driven = configs.map(adaptiveDrives);
    if (driven.every((d) => d === metric)) return 'Adaptive KL: the controller raises this while the KL per token is above its target and lowers it while below.';
    if (driven.every((d) => d === null)) return 'Fixed coefficient: flat by design. Choose the adaptive KL controller to see it move.';
    return null;
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
    if (configs.every(oneUpdate)) {
      return 'One update per batch: it starts at the sampling policy, so every ratio is 1 and nothing clips (0 up to float32 rounding; the axis stays at ±0.01). Raise PPO epochs or minibatches to see clipping.';
    }
  }
  return null;
}
