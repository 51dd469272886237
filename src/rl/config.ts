// The PPO/RLHF config, by job: its knobs and defaults (configKnobs.ts), their validation where a
// config enters (configValidate.ts); each knob's verl / OpenRLHF key is src/export/engineKeys.ts.
// Importers read them all from here.
import { rsCriterion, type RolloutCorrectionParams, type RolloutRsOption } from '../reference/rolloutCorrection.ts';
import { DEFAULT_CONFIG, type PpoConfig } from './configKnobs.ts';
import { checked, type CheckedConfig } from './configValidate.ts';

export * from './configKnobs.ts';
export * from './configValidate.ts';

/**
 * The rollout correction the config asks for, or null when it asks for none: importance weights
 * when tisCap is set (at rolloutIs level; IcePop band with icepopLower, OpenRLHF's floor with
 * tisLower), rejection sampling when rolloutRs is not 'off' (k1: ratio bounds [1/t, t]).
 */
export function rolloutCorrectionOf(c: Pick<PpoConfig, 'tisCap' | 'rolloutIs' | 'icepopLower' | 'tisLower' | 'rolloutRs' | 'rolloutRsThreshold'>): RolloutCorrectionParams | null {
  if (c.tisCap === null && c.rolloutRs === 'off') return null;
  return {
    isLevel: c.tisCap === null ? null : c.rolloutIs,
    isUpper: c.tisCap ?? 2,
    isLower: c.tisCap === null ? null : c.icepopLower,
    tisLower: c.tisCap === null ? null : c.tisLower,
    rs: c.rolloutRs === 'off' ? [] : [rsCriterion(c.rolloutRs as RolloutRsOption, c.rolloutRsThreshold)],
  };
}

/** The defaults, checked once. */
export const DEFAULT_CHECKED: CheckedConfig = checked(DEFAULT_CONFIG);
