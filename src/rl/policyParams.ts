// The policy-loss parameters an actor step is trained with, from the run's settings: shared by the
// trainer's update, the samples view's cov_select and the inspector's recomputation, so all three
// read the knobs the same way. Free of backend imports (the page's inspector uses it).
import { covKnobs, sapoTemperatures, type PolicyLossParams } from '../reference/policyLoss.ts';
import type { PpoConfig } from './config.ts';

/** The settings the policy loss reads (a PpoConfig, or the inspector's knobs). */
export type PolicyKnobs = Pick<PpoConfig, 'clipLow' | 'clipHigh' | 'dualClip' | 'lossAgg' | 'lossMode' | 'normScale'> & object;

/** The policy-loss parameters of an actor step; covSeed seeds clip_cov's choice for that step. */
export function actorPolicyParams(k: PolicyKnobs, covSeed: number): PolicyLossParams {
  return {
    clipLow: k.clipLow,
    clipHigh: k.clipHigh,
    clipC: k.dualClip,
    agg: k.lossAgg,
    lossMode: k.lossMode,
    normScale: k.normScale,
    ...sapoTemperatures(k),
    ...covKnobs(k),
    covSeed,
  };
}
