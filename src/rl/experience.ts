// make_experience: prefill passes only (no decode) over the rollout's sequences, taken as the
// sampler left them on the device (a host batch, e.g. one a test gives, is uploaded).
//   old_logprobs (B,A) actor at temperature T · ref_logprobs (B,A) frozen SFT policy at T
//   values (B,A) critic · scores (B) given by the caller (rule or learned reward, clipped)
//   rollout_logprobs (B,A) the sampler's own log-probs (π_rollout, kept from the rollout) and,
//   with tisCap set, token-level TIS weights min(π_old/π_rollout, cap) for the policy loss
// then reward shaping (−β·KL_t, score on the last action token) and advantages (GAE + masked
// whitening, or a group estimator). Logits/values at position t score token t+1, so the action
// positions [P, P+A) of a sequence are scored by columns [P−1, P+A−2].
import type { Backend } from '../backend/backend.ts';
import { tensorsIn } from '../backend/scope.ts';
import type { Tensor } from '../backend/tensor.ts';
import type { SequenceModel } from '../model/sequenceModel.ts';
import { logprobs } from '../ops/logprobs.ts';
import { rolloutCorrection } from '../ops/rolloutCorrection.ts';
import { shapeRewards } from '../ops/shapeRewards.ts';
import { estimatorAdvantages } from './advantages.ts';
import { rolloutCorrectionOf, type PpoConfig } from './config.ts';
import { actionMaskOf, disposeRolloutTensors, type RolloutBatch, type RolloutTensors } from './rollout.ts';
import { gatherRows, sliceSeq } from '../ops/slice.ts';

/** Device tensors of one batch of experience; the trainer disposes them after the update. */
export interface Experience {
  B: number;
  P: number;
  A: number;
  sequences: Tensor; // (B, S) i32
  attnMask: Tensor; // (B, S) f32
  positions: Tensor; // (B, S) i32
  actionTokens: Tensor; // (B, A) i32 response token ids
  actionMask: Tensor; // (B, A) f32, the first EOS included
  oldLogprobs: Tensor; // (B, A)
  refLogprobs: Tensor; // (B, A)
  rolloutLogprobs: Tensor | null; // (B, A) π_rollout of the sampled tokens, null when the rollout has none
  tisWeights: Tensor | null; // (B, A) rollout-correction IS weights (token/sequence, TIS cap or IcePop band), null when off
  /** (B, A) the action mask after rejection sampling (verl rollout_rs): what advantages and the update use; null when off. */
  rsMask: Tensor | null;
  values: Tensor; // (B, A) critic values (zeros for group estimators, which have no critic)
  scores: Tensor; // (B) clipped task score (+ no-EOS penalty)
  rewards: Tensor; // (B, A) −β·KL_t + score at the last action token
  kl: Tensor; // (B, A) mask·KL_t with the reward's KL estimator
  advantages: Tensor; // (B, A) whitened where the estimator says so
  returns: Tensor; // (B, A)
  /** beta: the β applied to the rewards (0 when the KL is not in the reward). */
  /** baselines (B): ReMax's greedy rewards, null for every other estimator. */
  info: { beta: number; estimator: PpoConfig['advantageEstimator']; group: Int32Array; baselines: Float64Array | null };
}

/** Log-probabilities (B,A) of the action tokens under `model` at temperature T. */
export function actionLogprobs(model: SequenceModel, seq: Tensor, attn: Tensor, pos: Tensor, tokens: Tensor, P: number, A: number, T: number): Tensor {
  const { be } = model;
  return be.scope(() => {
    const logits = model.infer(seq, attn, pos); // (B, S, V)
    const scored = sliceSeq(be, { x: logits, start: P - 1, len: A }); // (B, A, V)
    return logprobs(be, { logits: scored, tokens, temperature: T }).logprobs;
  });
}

/** Critic values (B,A) of the states that precede each action token. */
export function actionValues(critic: SequenceModel, seq: Tensor, attn: Tensor, pos: Tensor, P: number, A: number): Tensor {
  return critic.be.scope(() => sliceSeq(critic.be, { x: critic.infer(seq, attn, pos), start: P - 1, len: A })); // (B, S) → (B, A)
}

/** The three roles the experience reads, each of any model family (the character model, a Hugging Face one). */
export interface ExperienceModels {
  actor: SequenceModel; // logits (B, S, V)
  reference: SequenceModel; // logits (B, S, V)
  /** values (B, S); null for the group estimators (critic-free, as in GRPO / RLOO / REINFORCE++). */
  critic: SequenceModel | null;
}

/**
 * Records every experience pass; no readback. `scores` (B) host values, already clipped.
 * `rewardBeta` is the β the rewards get: the caller passes 0 when the KL is not in the reward.
 * `onDevice`: the sampler's tensors of the same rollout, which the experience takes over (freed
 * with it, or here on a throw); without them the host batch is uploaded.
 */
export function makeExperience(
  be: Backend,
  m: ExperienceModels,
  r: RolloutBatch,
  scores: ArrayLike<number>,
  rewardBeta: number,
  cfg: PpoConfig,
  onDevice: RolloutTensors | null = null,
  baselines: ArrayLike<number> | null = null,
): Experience {
  const { B, P, A } = r;
  const S = P + A;
  // Intermediates (the unwhitened GAE advantages, the passes' activations) are dropped when the
  // scope returns, and everything is on a throw; the Experience's tensors are the caller's.
  try {
    return be.scope((): Experience => {
      const t = onDevice ?? uploadRollout(be, r);
      // The response columns of the sequences, gathered as rows of one 32-bit word each.
      const tokenRows = be.view(t.sequences, 0, [B * S, 1]); // (B·S, 1) i32
      const columns = be.tensor(actionColumns(B, P, A), [B * A], 'i32');
      const actionTokens = be.reshape(gatherRows(be, { x: tokenRows, index: columns }), [B, A]); // (B, A) i32
      return experienceFrom(be, m, r, t, actionTokens, scores, rewardBeta, cfg, baselines);
    });
  } catch (e) {
    disposeRolloutTensors(be, onDevice);
    throw e;
  }
}

/** The host batch as the tensors the sampler would have left. */
function uploadRollout(be: Backend, r: RolloutBatch): RolloutTensors {
  const S = r.P + r.A;
  return {
    sequences: be.tensor(r.sequences, [r.B, S], 'i32'),
    attnMask: be.tensor(r.attnMask, [r.B, S]),
    positions: be.tensor(r.positions, [r.B, S], 'i32'),
    actionMask: be.tensor(actionMaskOf(r), [r.B, r.A]),
    logprobs: r.logprobs ? be.tensor(r.logprobs, [r.B, r.A]) : null,
  };
}

/** Flat indices (B·A) of the response columns [P, P+A) of a (B, P+A) batch. */
function actionColumns(B: number, P: number, A: number): Int32Array {
  const out = new Int32Array(B * A);
  for (let b = 0; b < B; b++) for (let a = 0; a < A; a++) out[b * A + a] = b * (P + A) + P + a;
  return out;
}

function experienceFrom(
  be: Backend,
  m: ExperienceModels,
  r: RolloutBatch,
  { sequences, attnMask, positions, actionMask, logprobs: rolloutLogprobs }: RolloutTensors,
  actionTokens: Tensor,
  scores: ArrayLike<number>,
  rewardBeta: number,
  cfg: PpoConfig,
  baselines: ArrayLike<number> | null,
): Experience {
  const { B, P, A } = r;
  const T = cfg.temperature;
  const oldLogprobs = actionLogprobs(m.actor, sequences, attnMask, positions, actionTokens, P, A, T);
  const refLogprobs = actionLogprobs(m.reference, sequences, attnMask, positions, actionTokens, P, A, T);
  const values = m.critic ? actionValues(m.critic, sequences, attnMask, positions, P, A) : be.zeros([B, A]);
  const scoreT = be.tensor(scores, [B]);
  if (cfg.tisCap !== null && !rolloutLogprobs) throw new Error('tisCap is set but the rollout carries no sampler log-probs');
  if (cfg.rolloutRs !== 'off' && !rolloutLogprobs) throw new Error('rolloutRs is set but the rollout carries no sampler log-probs');
  // Rollout correction (verl compute_rollout_correction_and_add_to_batch): IS weights for the loss and
  // the rejection-sampled mask, which verl applies after the KL penalty and before the advantages.
  const rc = rolloutLogprobs ? rolloutCorrectionOf(cfg) : null;
  const corrected = rc && rolloutLogprobs ? rolloutCorrection(be, { oldLogprobs, rolloutLogprobs, actionMask, params: rc }) : null;
  const tisWeights = corrected?.weights ?? null;
  const rsMask = rc && rc.rs.length > 0 && corrected ? corrected.keep : null;
  if (corrected && !rsMask) be.dispose(corrected.keep);
  const trainMask = rsMask ?? actionMask;
  // Shaped rewards and the per-token KL are also what the metrics and the KL view show, so they
  // are computed for every estimator (the group estimators shape their own rewards internally).
  const { rewards, kl } = shapeRewards(be, { scores: scoreT, logprobs: oldLogprobs, refLogprobs, actionMask, beta: rewardBeta, estimator: cfg.klEstimator });
  // GAE and whitening count the tokens rejection sampling kept; the group estimators' KL penalty sums
  // over every sampled token, as verl sums it before rejection (the scores are whole responses, and
  // the update masks the rejected tokens' advantages out).
  const { advantages, returns } = estimatorAdvantages(be, {
    estimator: cfg.advantageEstimator,
    rewards,
    values,
    actionMask,
    trainMask,
    scores: scoreT,
    group: r.group,
    logprobs: oldLogprobs,
    refLogprobs,
    beta: rewardBeta,
    klEstimator: cfg.klEstimator,
    gamma: cfg.gamma,
    lam: cfg.lam,
    klOrder: cfg.groupKlOrder,
    baselines: baselines ? be.tensor(baselines, [B]) : null,
  });
  return {
    B,
    P,
    A,
    sequences,
    attnMask,
    positions,
    actionTokens,
    actionMask,
    oldLogprobs,
    refLogprobs,
    rolloutLogprobs,
    tisWeights,
    rsMask,
    values,
    scores: scoreT,
    rewards,
    kl,
    advantages,
    returns,
    info: { beta: rewardBeta, estimator: cfg.advantageEstimator, group: r.group, baselines: baselines ? Float64Array.from(baselines) : null },
  };
}

export function disposeExperience(be: Backend, e: Experience): void {
  be.dispose(...tensorsIn(e));
}
