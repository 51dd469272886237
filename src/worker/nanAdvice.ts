// Which knob most likely made an iteration produce a NaN / ±Inf, for the page to suggest.
//
// Rule (a heuristic, stated so it can be checked): the quantity that first went non-finite says
// which knobs could have caused it; among those, the one furthest above its default (value /
// default) is named. When none is above its default, the first candidate is named (the usual
// culprit for that quantity). Candidates per quantity:
//   sampler log-probs, reward scores, reference / old log-probs, entropy, policy loss, actor grad
//   norm → actor learning rate, clip range, KL-loss β (the actor's weights or step blew up);
//   values, returns, value loss, critic grad norm → critic learning rate;
//   KL, token rewards, advantages, KL loss → β (KL coefficient in the reward / KL-loss
//   coefficient), then the actor learning rate (the actor ran away from the reference).
import { DEFAULT_CONFIG, type PpoConfig } from '../rl/config.ts';

export type KnobField = 'actorLr' | 'criticLr' | 'clipHigh' | 'clipLow' | 'klCoef' | 'klLossCoef';

export interface KnobAdvice {
  field: KnobField;
  /** Plain-words name of the knob: "learning rate", "clip range", "β". */
  kind: 'learning rate' | 'clip range' | 'β';
  label: string;
  value: number;
  defaultValue: number;
  /** What to try instead: the default when the value is above it, else a tenth of the value. */
  suggested: number;
  /** How far above its default the value is (value / default). */
  excess: number;
}

const LABELS: Record<KnobField, [KnobAdvice['kind'], string]> = {
  actorLr: ['learning rate', 'actor learning rate'],
  criticLr: ['learning rate', 'critic learning rate'],
  clipHigh: ['clip range', 'upper clip range'],
  clipLow: ['clip range', 'lower clip range'],
  klCoef: ['β', 'KL coefficient β (in the reward)'],
  klLossCoef: ['β', 'KL-loss coefficient β'],
};

const CRITIC = /^(values?|values_mean|returns(_mean)?|value_loss|critic_grad_norm|vf_clipfrac|explained_variance)$/;
const KL = /^(kl|kl_seq|kl_token_mean|kl_loss|token_rewards|token_reward_sum_mean|shaped_reward_mean|advantages(_mean|_std)?|beta)$/;

function candidates(quantity: string, cfg: PpoConfig): KnobField[] {
  const beta: KnobField[] = [...(cfg.klInReward ? (['klCoef'] as const) : []), ...(cfg.useKlLoss ? (['klLossCoef'] as const) : [])];
  if (CRITIC.test(quantity)) return ['criticLr'];
  if (KL.test(quantity)) return [...beta, 'actorLr'];
  return ['actorLr', 'clipHigh', 'clipLow', ...(cfg.useKlLoss ? (['klLossCoef'] as const) : [])];
}

function advice(field: KnobField, cfg: PpoConfig): KnobAdvice {
  const value = cfg[field];
  const defaultValue = DEFAULT_CONFIG[field];
  const excess = defaultValue > 0 ? value / defaultValue : value > 0 ? Infinity : 1;
  const [kind, label] = LABELS[field];
  return { field, kind, label, value, defaultValue, suggested: value > defaultValue ? defaultValue : value / 10, excess };
}

/** The knob most likely at fault for a non-finite `quantity` (see the rule in the header). */
export function nanAdvice(quantity: string, cfg: PpoConfig): KnobAdvice {
  const all = candidates(quantity, cfg).map((f) => advice(f, cfg));
  let best = all[0];
  for (const a of all) if (a.excess > best.excess) best = a;
  return best;
}

/** The advice in English, for logs and tests; the page words it in its language (notices.knobAdviceText). */
export function adviceText(a: KnobAdvice): string {
  const x = a.excess > 1 && Number.isFinite(a.excess) ? ` (${formatTimes(a.excess)} its default ${a.defaultValue})` : ` (default ${a.defaultValue})`;
  return `most likely the ${a.label}: ${a.field} = ${a.value}${x}; try ${a.field} = ${fmt(a.suggested)}`;
}

/** A suggested value or a ratio as the advice writes it: three significant digits. */
export const adviceNumber = (x: number) => String(Number(x.toPrecision(3)));
const fmt = adviceNumber;
const formatTimes = (x: number) => `${fmt(x)}×`;
