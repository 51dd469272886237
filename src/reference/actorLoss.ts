// float64 reference of the actor's whole loss step on the logits (oracle for shaders/actor_loss.wgsl):
// log-softmax at temperature T gathered at the action tokens and the entropy (logprobsRef), the
// policy loss (policyLossRef), the entropy bonus −entropyCoef·agg(H) and the optional KL loss
// klCoef·agg(KL(logp‖ref)) (aggregateRef with the loss aggregation), and the gradient of
//   loss = policy + klCoef·agg(kl) − entropyCoef·agg(H)
// with respect to the logits (logprobsBackwardRef). It is the per-op composition the trainer used
// before the fused kernel, op for op and in the same float64 operations, so the CPU backend (which
// runs this function) trains exactly as before.
import { aggregateRef } from './aggregate.ts';
import { klGradRef, klRef, type KlEstimator } from './kl.ts';
import { logprobsBackwardRef, logprobsRef } from './logprobs.ts';
import { policyLossRef, type PolicyLossParams } from './policyLoss.ts';

export interface ActorLossParams extends PolicyLossParams {
  /** Entropy bonus coefficient (≥ 0; 0 = no entropy term in the gradient). */
  entropyCoef: number;
  /** KL loss: coefficient and estimator on d = logp − ref; null = no KL loss. */
  kl: { coef: number; estimator: KlEstimator } | null;
}

export interface ActorLossDims {
  B: number;
  /** Positions per sequence in the logits. */
  S: number;
  /** Action tokens per sequence; logits rows start … start + A − 1 score them. */
  A: number;
  V: number;
  start: number;
  temperature: number;
}

export interface ActorLossOut {
  /** ∂loss/∂logits (B, S, V); 0 outside the action rows. */
  gradLogits: Float64Array;
  logprobs: Float64Array; // (B, A)
  /** POLICY_STATS: loss, clipfrac, clipfrac_lower, ppo_kl. */
  policy: Float64Array;
  /** agg(entropy) with the loss aggregation. */
  entropy: number;
  /** agg(KL) with the loss aggregation; 0 without a KL loss. */
  klLoss: number;
}

export function actorLossRef(
  logits: ArrayLike<number>, // (B, S, V)
  tokens: ArrayLike<number>, // (B, A)
  oldLogprobs: ArrayLike<number>, // (B, A)
  advantages: ArrayLike<number>, // (B, A)
  mask: ArrayLike<number>, // (B, A)
  dims: ActorLossDims,
  params: ActorLossParams,
  isWeights: ArrayLike<number> | null = null, // (B, A)
  refLogprobs: ArrayLike<number> | null = null, // (B, A), needed with params.kl
): ActorLossOut {
  const { B, S, A, V, start, temperature: T } = dims;
  if (params.kl && !refLogprobs) throw new Error('actorLossRef: a KL loss needs the reference log-probs');
  const scored = new Float64Array(B * A * V); // the action rows of the logits
  for (let b = 0; b < B; b++) {
    for (let a = 0; a < A; a++) {
      const src = (b * S + start + a) * V;
      for (let v = 0; v < V; v++) scored[(b * A + a) * V + v] = logits[src + v];
    }
  }
  const { logprobs, entropy } = logprobsRef(scored, tokens, B, A, V, T);
  const pol = policyLossRef(oldLogprobs, logprobs, advantages, mask, B, A, params, isWeights);
  const gradLogprobs = pol.gradLogprobs;
  const normScale = params.normScale ?? 'per_seq';
  const ent = aggregateRef(entropy, mask, B, A, params.agg, normScale);
  let gradEntropy: Float64Array | null = null;
  if (params.entropyCoef > 0) gradEntropy = ent.weights.map((w) => w * -params.entropyCoef); // loss −c·Σw·H
  let klLoss = 0;
  if (params.kl) {
    const klTok = klRef(logprobs, refLogprobs!, params.kl.estimator);
    const agg = aggregateRef(klTok, mask, B, A, params.agg, normScale);
    klLoss = agg.value;
    const dKl = klGradRef(logprobs, refLogprobs!, params.kl.estimator);
    // w⊙(c·klGrad) added to the policy gradient (0 on masked tokens, where w = 0)
    for (let i = 0; i < B * A; i++) gradLogprobs[i] += 1 * (agg.weights[i] * (dKl[i] * params.kl.coef));
  }
  const gScored = logprobsBackwardRef(scored, tokens, B, A, V, T, gradLogprobs, gradEntropy);
  const gradLogits = new Float64Array(B * S * V);
  for (let b = 0; b < B; b++) {
    for (let a = 0; a < A; a++) {
      const dst = (b * S + start + a) * V;
      for (let v = 0; v < V; v++) gradLogits[dst + v] = gScored[(b * A + a) * V + v];
    }
  }
  return { gradLogits, logprobs, policy: pol.stats, entropy: ent.value, klLoss };
}
