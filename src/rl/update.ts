// One PPO minibatch update for the actor and for the critic. Each records forward → loss →
// backward → grad-norm → AdamW on the device and returns its statistics as device tensors, which
// the trainer reads back once at the end of the iteration.
//
// Actor loss = policyLoss (PPO clip / GSPO / CISPO / SAPO / GPG / GMPO / Clip-Cov / KL-Cov, token-level TIS weights when on)
//            + klLossCoef·agg(KL(logp‖ref)) − entropyCoef·agg(H).
// klLossCoef is the coefficient the trainer applies this iteration (the adaptive controller's β
// when the KL is only in the loss, see klController.ts).
// The KL-loss gradient is w⊙(klLossCoef·klGrad), w the aggregation weights of the KL term (0 on
// masked tokens), added to the policy-loss gradient.
// Clip-Cov and KL-Cov choose their tokens over the minibatch the loss sees (verl: the micro-batch
// its policy loss is called on); clip_cov's choice is seeded per step by covStepSeed.
import type { Backend } from '../backend/backend.ts';
import { tensorsIn } from '../backend/scope.ts';
import type { Tensor } from '../backend/tensor.ts';
import type { OptimizerParams } from '../model/gpt.ts';
import type { TrainableSequenceModel } from '../model/sequenceModel.ts';
import { actorLoss } from '../ops/actorLoss.ts';
import { valueLoss } from '../ops/valueLoss.ts';
import type { PpoConfig } from './config.ts';
import type { Experience } from './experience.ts';
import { actorPolicyParams } from './policyParams.ts';
import { gatherRowsMany, sliceSeq, sliceSeqBackward } from '../ops/slice.ts';
export { covStepSeed } from '../reference/policyLoss.ts';

/** Minibatch rows of the experience, gathered on the device. */
export interface Minibatch {
  n: number;
  index: Int32Array; // (n) rows of the batch
  sequences: Tensor; // (n, S) i32
  attnMask: Tensor; // (n, S)
  positions: Tensor; // (n, S) i32
  actionTokens: Tensor; // (n, A) i32
  actionMask: Tensor; // (n, A)
  oldLogprobs: Tensor; // (n, A)
  refLogprobs: Tensor; // (n, A)
  advantages: Tensor; // (n, A)
  returns: Tensor; // (n, A)
  oldValues: Tensor; // (n, A)
  tisWeights: Tensor | null; // (n, A) stop-gradient TIS weights, null when off
}

export function gatherMinibatch(be: Backend, e: Experience, index: Int32Array): Minibatch {
  // The row index is dropped when the scope returns; the minibatch's tensors are the caller's.
  return be.scope((): Minibatch => {
    const idx = be.tensor(index, [index.length], 'i32');
    // One gather for all: it copies 32-bit words, so the i32 ids come out as they went in, and
    // the device takes up to three tensors per dispatch.
    const rows = gatherRowsMany(be, {
      xs: [
        e.sequences,
        e.attnMask,
        e.positions,
        e.actionTokens,
        e.rsMask ?? e.actionMask, // the update trains on the tokens rejection sampling kept
        e.oldLogprobs,
        e.refLogprobs,
        e.advantages,
        e.returns,
        e.values,
        ...(e.tisWeights ? [e.tisWeights] : []),
      ],
      index: idx,
    });
    const [sequences, attnMask, positions, actionTokens, actionMask, oldLogprobs, refLogprobs, advantages, returns, oldValues, tisWeights] = rows;
    return {
      n: index.length,
      index,
      sequences,
      attnMask,
      positions,
      actionTokens,
      actionMask,
      oldLogprobs,
      refLogprobs,
      advantages,
      returns,
      oldValues,
      tisWeights: tisWeights ?? null,
    };
  });
}

export function disposeMinibatch(be: Backend, mb: Minibatch): void {
  be.dispose(...tensorsIn(mb));
}

/** Device results of one actor step; the caller reads and disposes them. */
export interface ActorStepStats {
  policy: Tensor; // (4) POLICY_STATS: loss, clipfrac, clipfrac_lower, ppo_kl
  entropy: Tensor; // (1) agg(entropy) with the loss aggregation
  klLoss: Tensor | null; // (1) agg(KL(logp‖ref)) when useKlLoss
  gradNorm: Tensor; // (1) pre-clip global gradient norm
  logprobs: Tensor; // (n, A) new log-probs at this step's forward (before its AdamW)
}

export function actorStep<Cache>(
  actor: TrainableSequenceModel<Cache>,
  mb: Minibatch,
  P: number,
  _A: number,
  cfg: PpoConfig,
  opt: OptimizerParams,
  klLossCoef: number,
  covSeed = 0,
): ActorStepStats {
  const { be } = actor;
  const T = cfg.temperature;
  // Every activation and gradient made here but the returned statistics is dropped when the scope returns.
  return be.scope((): ActorStepStats => {
    actor.zeroGrad();
    const { out: logits, cache } = actor.forward(mb.sequences, mb.attnMask, mb.positions); // (n, S, V)
    // Log-probs of the action tokens (logits rows P−1 … S−2), policy loss, entropy bonus, KL loss
    // and ∂loss/∂logits in one op (one pass over the logits on WebGPU; src/reference/actorLoss.ts).
    // k1+ / k3+ in the KL loss take k2's gradient d (verl's straight-through estimators).
    const r = actorLoss(be, {
      logits,
      start: P - 1,
      tokens: mb.actionTokens,
      temperature: T,
      oldLogprobs: mb.oldLogprobs,
      advantages: mb.advantages,
      actionMask: mb.actionMask,
      params: { ...actorPolicyParams(cfg, covSeed), entropyCoef: cfg.entropyCoef, kl: cfg.useKlLoss ? { coef: klLossCoef, estimator: cfg.klLossEstimator } : null },
      isWeights: mb.tisWeights,
      refLogprobs: cfg.useKlLoss ? mb.refLogprobs : null,
    });
    be.dispose(logits);
    actor.backward(cache, r.gradLogits); // (n, S, V), 0 outside the action rows
    const gradNorm = actor.optimizerStep(opt);
    return { policy: r.policy, entropy: r.entropy, klLoss: cfg.useKlLoss ? r.klLoss : null, gradNorm, logprobs: r.logprobs };
  });
}

export interface CriticStepStats {
  value: Tensor; // (2) VALUE_STATS: loss, vf_clipfrac
  gradNorm: Tensor; // (1)
  /** (n, A) values at this step's forward (before its AdamW); only when asked for (an inspected iteration). */
  values?: Tensor;
}

export function criticStep<Cache>(
  critic: TrainableSequenceModel<Cache>,
  mb: Minibatch,
  P: number,
  A: number,
  cfg: PpoConfig,
  opt: OptimizerParams,
  keepValues = false,
): CriticStepStats {
  const { be } = critic;
  const S = P + A;
  return be.scope((): CriticStepStats => {
    critic.zeroGrad();
    const { out: all, cache } = critic.forward(mb.sequences, mb.attnMask, mb.positions); // (n, S)
    const values = sliceSeq(be, { x: all, start: P - 1, len: A }); // (n, A)
    const { stats, gradValues } = valueLoss(be, {
      values,
      oldValues: mb.oldValues,
      returns: mb.returns,
      actionMask: mb.actionMask,
      params: { clip: cfg.valueClip, agg: cfg.lossAgg, normScale: cfg.normScale },
    });
    critic.backward(cache, sliceSeqBackward(be, { grad: gradValues, seqLen: S, start: P - 1 })); // (n, S)
    const gradNorm = critic.optimizerStep(opt);
    return keepValues ? { value: stats, gradNorm, values } : { value: stats, gradNorm };
  });
}

/** Linear warmup to the peak over `warmupSteps` optimizer steps, then constant. */
export function warmupLr(peak: number, warmupSteps: number, step: number): number {
  return warmupSteps > 0 && step < warmupSteps ? (peak * (step + 1)) / warmupSteps : peak;
}
