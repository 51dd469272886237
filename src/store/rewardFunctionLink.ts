// A reward function is code: one that arrives in a link is someone else's, so the page shows it
// and runs it only once the visitor accepts it. The functions that ship with the page (the default
// and the presets') and the one already in force here need no acceptance. Until then the link's
// function is held aside, out of the config the worker sees, and Start says why it waits.
import { t } from '../i18n/index.ts';
import { DEFAULT_REWARD_FUNCTION, type PpoConfig } from '../rl/config.ts';
import { PRESETS, presetArms } from '../rl/presets.ts';
import type { RewardFunctionProblem } from '../rl/rewardFunction/problem.ts';

/** The reward functions that ship with the page. */
export const SHIPPED_REWARD_FUNCTIONS: ReadonlySet<string> = new Set([
  DEFAULT_REWARD_FUNCTION,
  ...PRESETS.flatMap((p) => presetArms(p).flatMap((a) => (a.values.rewardFunction === undefined ? [] : [a.values.rewardFunction]))),
]);

/** Whether a link's function must be accepted before it runs: it is neither shipped nor the one in force. */
export function needsAcceptance(fromLink: string, inForce: string): boolean {
  return fromLink !== inForce && !SHIPPED_REWARD_FUNCTIONS.has(fromLink);
}

/** The latest check of a written function (compiled and called once on a sample, in the worker). */
export interface RewardCheck {
  source: string;
  score?: number;
  problem?: RewardFunctionProblem;
}

/** Why Start (or Step) must wait for the reward function, in the page's language, or null when it need not. */
export function rewardFunctionBlock(config: PpoConfig, pending: string | null, check: RewardCheck | null): string | null {
  if (config.rewardSource !== 'function') return null;
  if (pending !== null) return t('settings:reward.blockPending');
  if (check?.source === config.rewardFunction && check.problem) return t('settings:reward.blockRefused', { message: check.problem.message });
  return null;
}
