// Which knobs the KL-shaping view's batch was computed with, and which the settings would use: the
// batch's come from its run (the β its metrics reported at that iteration, which the adaptive
// controller moves), the settings' from the config panel. A difference is a what-if, never the batch.
import type { PpoConfig } from '../../rl/config.ts';
import type { RunRecord } from '../../store/runs.ts';
import { changedKnobs, type ShapingKnobs, type ShapingSetup } from './klShaping.ts';

/** β applied to the rewards by a config: 0 while the KL is kept out of them. */
const rewardBeta = (c: PpoConfig) => (c.klInReward ? c.klCoef : 0);

export interface KlBatchContext {
  /** What the batch trained with. */
  batch: ShapingKnobs;
  setup: ShapingSetup;
  /** The settings' knobs, and a label naming what differs; null when nothing does. */
  whatIf: { knobs: ShapingKnobs; label: string } | null;
  /** The KL is not in the run's reward (β applied = 0). */
  klOutOfReward: boolean;
}

/**
 * `run` is the run the samples belong to (undefined for samples with no run: the settings then
 * stand for the batch and there is no what-if). `iter` is the samples' iteration. An own-model
 * run's batch (`settingsApply` false) has no what-if either: the settings panel does not train it.
 */
export function klBatchContext(run: Pick<RunRecord, 'config' | 'metrics'> | undefined, iter: number, settings: PpoConfig, settingsApply = true): KlBatchContext {
  const cfg = run?.config ?? settings;
  const point = run?.metrics.find((m) => m.iter === iter) ?? run?.metrics[run.metrics.length - 1];
  const reported = point?.values.beta;
  const batch: ShapingKnobs = { beta: typeof reported === 'number' && Number.isFinite(reported) ? reported : rewardBeta(cfg), gamma: cfg.gamma, lam: cfg.lam };
  const setup: ShapingSetup = { klEstimator: cfg.klEstimator, advantageEstimator: cfg.advantageEstimator, groupKlOrder: cfg.groupKlOrder };
  // The settings differ from what the run was started with: with a fixed β that is a changed β; with
  // the adaptive controller the batch's β moved by itself, which is no what-if.
  const settingsKnobs: ShapingKnobs = { beta: rewardBeta(settings), gamma: settings.gamma, lam: settings.lam };
  const started: ShapingKnobs = { beta: rewardBeta(cfg), gamma: cfg.gamma, lam: cfg.lam };
  const usesLam = setup.advantageEstimator === 'gae';
  const changed = run && settingsApply ? changedKnobs(started, settingsKnobs, usesLam) : '';
  return {
    batch,
    setup,
    whatIf: changed ? { knobs: settingsKnobs, label: changedKnobs(batch, settingsKnobs, usesLam) || changed } : null,
    klOutOfReward: !cfg.klInReward,
  };
}
