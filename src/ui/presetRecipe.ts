// What a preset card says about its recipe's estimator and critic, read off the configs its arms
// train (presetConfig), so the card's words cannot drift from the run: "RLOO, no critic", or per
// arm when the arms differ ("PPO (GAE): GAE with a critic (value model) · GRPO: GRPO, no critic").
import type { TFunction } from 'i18next';
import type { AdvantageEstimator } from '../rl/config.ts';
import { presetArms, presetConfig, type Preset } from '../rl/presets.ts';

/** The estimators' usual names (the same in every language: they are the papers' and the engines'). */
export const ESTIMATOR_NAMES: Record<AdvantageEstimator, string> = {
  gae: 'GAE',
  reinforce: 'REINFORCE++',
  reinforce_baseline: 'REINFORCE++ baseline',
  group_norm: 'GRPO',
  rloo: 'RLOO',
  dr_grpo: 'Dr. GRPO',
  opo: 'OPO',
  grpo_passk: 'GRPO pass@k',
  remax: 'ReMax',
};

export interface RecipePart {
  /** The arm's label; null when every arm shares the estimator (or there is one arm). */
  arm: string | null;
  estimator: AdvantageEstimator;
  /** A critic (value model) is trained: only GAE uses one. */
  critic: boolean;
}

/** Each arm's estimator and critic; one part when the arms agree. */
export function recipeParts(preset: Preset): RecipePart[] {
  const arms = presetArms(preset).map((a, i) => ({ arm: a.label, estimator: presetConfig(preset, i).advantageEstimator }));
  if (arms.every((a) => a.estimator === arms[0].estimator)) return [{ arm: null, estimator: arms[0].estimator, critic: arms[0].estimator === 'gae' }];
  return arms.map((a) => ({ ...a, critic: a.estimator === 'gae' }));
}

/** The card's recipe line in the page's language: its label and its text. */
export function recipeText(t: TFunction<'presets'>, preset: Preset): { label: string; text: string } {
  const parts = recipeParts(preset);
  const paired = presetArms(preset).length > 1;
  const what = (p: RecipePart) => t(p.critic ? 'recipe.withCritic' : 'recipe.noCritic', { estimator: ESTIMATOR_NAMES[p.estimator] });
  if (parts.length === 1) return { label: t(paired ? 'recipe.labelEveryArm' : 'recipe.label'), text: what(parts[0]) };
  return { label: t('recipe.labelArms'), text: parts.map((p) => t('recipe.arm', { label: p.arm, what: what(p) })).join(t('recipe.join')) };
}
