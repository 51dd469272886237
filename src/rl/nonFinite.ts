// Naming where a NaN / ±Inf first appeared in a PPO iteration. The trainer checks the host copies
// it already reads back (no extra readback): the sampler's log-probs and the scores right after the
// rollout, the experience arrays (action tokens only) and the update statistics after the final
// readMany. The first stage in pipeline order that holds a non-finite value is the one that
// produced it: everything downstream of it is only a consequence.
import type { ExperienceHost, UpdateHost } from './metrics.ts';

/** The trainer's stages, in pipeline order (trainer.ts re-exports it). */
export type Stage = 'rollout' | 'experience' | 'update';

export class NonFiniteError extends Error {
  constructor(
    readonly stage: Stage,
    /** What held the value, as a metric-like name (e.g. "sampler_logprobs", "values", "policy_loss"). */
    readonly quantity: string,
    readonly value: number,
    /** The iteration index (0-based, as in metrics messages). */
    readonly iter: number,
  ) {
    super(`non-finite ${quantity} = ${value} in the ${stage} stage of iteration ${iter}`);
    this.name = 'NonFiniteError';
  }
}

/** The first non-finite entry of `x` where `mask` (if given) is non-zero, or null. */
export function firstNonFinite(x: ArrayLike<number>, mask?: ArrayLike<number>): number | null {
  for (let i = 0; i < x.length; i++) {
    if (mask && mask[i] === 0) continue;
    if (!Number.isFinite(x[i])) return x[i];
  }
  return null;
}

/** Throws NonFiniteError for the first named array holding a non-finite (masked) entry. */
export function checkFinite(stage: Stage, iter: number, arrays: [string, ArrayLike<number> | null | undefined][], mask?: ArrayLike<number>): void {
  for (const [name, x] of arrays) {
    if (!x) continue;
    const bad = firstNonFinite(x, x.length === mask?.length ? mask : undefined);
    if (bad !== null) throw new NonFiniteError(stage, name, bad, iter);
  }
}

const ROLLOUT_METRICS = /^(reward_|response_length|eos_rate|filtered_groups|dynamic_sampling)/;
const UPDATE_METRICS = /(loss|grad_norm|clipfrac|approx_kl|entropy|skipped_steps|update_steps)/;

/** The stage a metric is computed in (metrics that are neither rollout nor update come from the experience). */
export function stageOfMetric(name: string): Stage {
  if (ROLLOUT_METRICS.test(name)) return 'rollout';
  if (UPDATE_METRICS.test(name)) return 'update';
  return 'experience';
}

/** The experience's host arrays, in pipeline order (action tokens only). */
export function checkExperienceFinite(iter: number, e: ExperienceHost): void {
  const arrays: [string, ArrayLike<number> | null | undefined][] = [
    ['ref_logprobs', e.refLogprobs],
    ['old_logprobs', e.oldLogprobs],
    ['values', e.values],
    ['kl', e.kl],
    ['token_rewards', e.rewards],
    ['advantages', e.advantages],
    ['returns', e.returns],
  ];
  checkFinite('experience', iter, arrays, e.mask);
}

/** The update's statistics, every minibatch. */
export function checkUpdateFinite(iter: number, u: UpdateHost): void {
  const first = (xs: Float64Array[]) => xs.map((x) => x[0]);
  const all = (xs: Float64Array[]) => xs.flatMap((x) => Array.from(x));
  const arrays: [string, ArrayLike<number>][] = [
    ['policy_loss', all(u.policy)],
    ['entropy', first(u.entropy)],
    ['kl_loss', first(u.klLoss)],
    ['actor_grad_norm', first(u.actorGradNorm)],
    ['value_loss', all(u.value)],
    ['critic_grad_norm', first(u.criticGradNorm)],
  ];
  checkFinite('update', iter, arrays);
}
