// The NaN/Inf guard of a Hugging Face model's iteration, as the character trainer's: the actor's
// and critic's adapters, AdamW moments and step counts are copied on the device before the
// iteration; a non-finite metric, or a non-finite adapter value after the update (one norm over
// each flat buffer: one number read back), puts the copies back and reports where it appeared.
// The base never moves, so the run continues from the iteration before.
import type { Backend } from '../../backend/backend.ts';
import { disposeLoraSnapshot, type LoraSnapshot, type LoraTrainable, restoreLora, saveLora } from '../../model/hf/loraParams.ts';
import { gradNorm } from '../../ops/optim.ts';
import { type HfPpoConfig, type HfPpoMetrics, type HfPpoRoles, type HfScore, hfPpoIteration } from './hfPpo.ts';

export interface HfNonFinite {
  iter: number; // 1-based
  quantity: string;
  value: number;
}

export type HfGuardedResult = { metrics: HfPpoMetrics; nonFinite: null } | { metrics: null; nonFinite: HfNonFinite };

export class HfNanGuard {
  private actor: LoraSnapshot | null = null;
  private critic: LoraSnapshot | null = null;

  constructor(private readonly be: Backend) {}

  /** One iteration (`iteration` 0-based); on a non-finite value the roles are as they were before it. */
  async iteration(roles: HfPpoRoles, prompts: readonly (readonly number[])[], score: HfScore, cfg: HfPpoConfig, iteration: number): Promise<HfGuardedResult> {
    const be = this.be;
    this.actor = saveLora(be, roles.actor, this.actor);
    if (roles.critic) this.critic = saveLora(be, roles.critic, this.critic);
    const m = await hfPpoIteration(roles, prompts, score, cfg, iteration);
    const checked: [string, number | null][] = [
      ['reward_mean', m.scoreMean],
      ['kl', m.klMean],
      ['policy_loss', m.policyLoss],
      ['clipfrac', m.clipfrac],
      ['value_loss', m.valueLoss],
      ['actor adapter norm', await this.norm(roles.actor)],
      ['critic adapter norm', roles.critic && cfg.estimator === 'gae' ? await this.norm(roles.critic) : null],
    ];
    const bad = checked.find(([, v]) => v !== null && !Number.isFinite(v));
    if (!bad) return { metrics: m, nonFinite: null };
    restoreLora(be, roles.actor, this.actor);
    if (roles.critic && this.critic) restoreLora(be, roles.critic, this.critic);
    return { metrics: null, nonFinite: { iter: iteration + 1, quantity: bad[0], value: bad[1]! } };
  }

  private async norm(t: LoraTrainable): Promise<number> {
    const n = gradNorm(this.be, { grads: t.params });
    const [v] = await this.be.read(n);
    this.be.dispose(n);
    return v;
  }

  dispose(): void {
    disposeLoraSnapshot(this.be, this.actor);
    disposeLoraSnapshot(this.be, this.critic);
    this.actor = null;
    this.critic = null;
  }
}

/** The guard's report in one line: where, what, and what to try. */
export function nonFiniteMessage(n: HfNonFinite): string {
  return `iteration ${n.iter}: ${n.quantity} became ${n.value}; the adapters were put back as they were before it. Lower the learning rate, or check the reward for non-finite scores`;
}
