// The update's statistics: every minibatch step returns device tensors, which are all read back
// in the iteration's one final readback and reduced on the host (metrics.ts). The iteration
// frees them.
import type { Tensor } from '../backend/tensor.ts';
import type { ActorStepStats, CriticStepStats } from './update.ts';

/** Device statistics of every minibatch step, named as metrics.ts's UpdateHost. */
export class UpdateStats {
  readonly tensors = {
    policy: [] as Tensor[], // (4) each, POLICY_STATS
    entropy: [] as Tensor[], // (1) each
    klLoss: [] as Tensor[], // (1) each, with the KL loss only
    actorGradNorm: [] as Tensor[], // (1) each
    value: [] as Tensor[], // (2) each, VALUE_STATS, with a critic only
    criticGradNorm: [] as Tensor[], // (1) each
  };

  add(a: ActorStepStats, c: CriticStepStats | null): void {
    const t = this.tensors;
    t.policy.push(a.policy);
    t.entropy.push(a.entropy);
    t.actorGradNorm.push(a.gradNorm);
    if (a.klLoss) t.klLoss.push(a.klLoss);
    if (c) {
      t.value.push(c.value);
      t.criticGradNorm.push(c.gradNorm);
    }
  }
}
