// The actor's whole loss on its logits in one op (one pass over the logits on WebGPU): log-probs of
// the action tokens, the policy loss, the entropy bonus and the KL loss, and the gradient of their
// sum wrt the logits. Math: shaders/actor_loss.wgsl's header; float64 reference:
// src/reference/actorLoss.ts (the per-op composition that `perOp` below runs on WebGPU).
import type { GpuOpsHost } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { expectDType, expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { actorLossRef, type ActorLossParams } from '../reference/actorLoss.ts';
import { aggCode, KL_ESTIMATOR_CODE, LOSS_MODE_CODE } from '../reference/kernelCodes.ts';
import { COV_LOSS_MODES, policyAgg, SAPO_TAU_NEG_DEFAULT, SAPO_TAU_POS_DEFAULT, validatePolicyLossParams } from '../reference/policyLoss.ts';
import { aggregate } from './aggregate.ts';
import { kl, klGrad } from './kl.ts';
import { logprobs, logprobsBackward, LOGPROBS_ROWS_MAX_V } from './logprobs.ts';
import { defineOp, type Op } from './op.ts';
import { policyLoss } from './policyLoss.ts';
import { expectBA } from './shapes.ts';

export interface ActorLossArgs {
  logits: Tensor; // (B, S, V) f32, the actor's logits over whole sequences
  start: number; // logits rows start … start + A − 1 of each sequence score the action tokens
  tokens: Tensor; // (B, A) i32, the action tokens
  temperature: number;
  oldLogprobs: Tensor; // (B, A) f32
  advantages: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  params: ActorLossParams;
  isWeights?: Tensor | null; // (B, A) f32 stop-gradient per-token weights (as policyLoss)
  refLogprobs?: Tensor | null; // (B, A) f32, required with params.kl
}

export interface ActorLossResult {
  gradLogits: Tensor; // (B, S, V) f32, 0 outside the action rows
  logprobs: Tensor; // (B, A) f32
  policy: Tensor; // (4) f32 as POLICY_STATS
  entropy: Tensor; // (1) f32, agg(H)
  klLoss: Tensor; // (1) f32, agg(KL); 0 without a KL loss
}

const PACK_UNIFORM = uniformLayout('PackParams', { n: 'u32', has_is: 'u32', has_ref: 'u32' });
const ACTOR_LOSS_UNIFORM = uniformLayout('LossParams', {
  B: 'u32',
  S: 'u32',
  A: 'u32',
  V: 'u32',
  start: 'u32',
  temperature: 'f32',
  mode: 'u32',
  agg_pol: 'u32',
  agg: 'u32',
  clip_low: 'f32',
  clip_high: 'f32',
  clip_c: 'f32',
  has_dual: 'u32',
  ent_coef: 'f32',
  has_kl: 'u32',
  kl_coef: 'f32',
  kl_est: 'u32',
  tau_pos: 'f32',
  tau_neg: 'f32',
});
// One workgroup, a thread per sequence.
const ACTOR_LOSS_WG = 256; // the most sequences it takes; more (or V > LOGPROBS_ROWS_MAX_V) compose the per-op kernels
const PACK_INPUTS = kernel({ shader: 'actor_loss', entry: 'pack_inputs', uniform: PACK_UNIFORM, storage: ['read', 'read', 'read', 'read', 'read', 'rw'] });
const ACTOR_LOSS = kernel({
  shader: 'actor_loss',
  entry: 'actor_loss',
  uniform: ACTOR_LOSS_UNIFORM,
  storage: ['read', 'read', 'read', 'rw', 'rw', 'rw', 'rw', 'rw'],
  constants: { WG: ACTOR_LOSS_WG },
});

/** actorLoss as the per-op kernels (large batches or vocabularies): the composition actor_loss.wgsl fuses. */
function perOp(be: GpuOpsHost, a: ActorLossArgs): ActorLossResult {
  const { logits, start, tokens, temperature, oldLogprobs, advantages, actionMask, params } = a;
  const { nn } = be;
  const S = logits.shape[1];
  const A = tokens.shape[1];
  const normScale = params.normScale ?? 'per_seq';
  const scored = nn.sliceSeq(logits, start, A); // (B, A, V)
  const { logprobs: logp, entropy: tokenEntropy } = logprobs(be, { logits: scored, tokens, temperature });
  const { stats: policy, gradLogprobs } = policyLoss(be, { oldLogprobs, logprobs: logp, advantages, actionMask, params, isWeights: a.isWeights });
  const ent = aggregate(be, { x: tokenEntropy, actionMask, agg: params.agg, normScale });
  let gradEntropy: Tensor | null = null;
  if (params.entropyCoef > 0) {
    nn.scale(ent.weights, -params.entropyCoef); // loss −c·Σw·H  →  ∂loss/∂H = −c·w
    gradEntropy = ent.weights;
  }
  let klLoss: Tensor;
  if (params.kl) {
    const klArgs = { logprobs: logp, refLogprobs: a.refLogprobs!, estimator: params.kl.estimator };
    const klTok = kl(be, klArgs);
    const agg = aggregate(be, { x: klTok, actionMask, agg: params.agg, normScale });
    klLoss = agg.value;
    const dKl = klGrad(be, klArgs);
    nn.scale(dKl, params.kl.coef);
    const term = nn.mul(agg.weights, dKl); // w⊙(c·klGrad): 0 on masked tokens
    nn.axpy(1, term, gradLogprobs);
    be.dispose(klTok, agg.weights, dKl, term);
  } else {
    klLoss = be.empty([1]);
    nn.fill(klLoss, 0);
  }
  const gScored = logprobsBackward(be, { logits: scored, tokens, temperature, gradLogprobs, gradEntropy });
  const gradLogits = nn.sliceSeqBackward(gScored, S, start);
  be.dispose(scored, tokenEntropy, gradLogprobs, ent.weights, gScored);
  return { gradLogits, logprobs: logp, policy, entropy: ent.value, klLoss };
}

/**
 * loss = policy (as policyLoss) − entropyCoef·agg(H) + params.kl.coef·agg(KL(logp‖ref)), agg the
 * loss aggregation, and ∂loss/∂logits.
 */
export const actorLoss: Op<ActorLossArgs, ActorLossResult> = defineOp({
  name: 'actorLoss',
  kernels: [PACK_INPUTS, ACTOR_LOSS],
  check({ logits, start, tokens, temperature, oldLogprobs, advantages, actionMask, params, isWeights, refLogprobs }) {
    validatePolicyLossParams(params);
    if (!(Number.isFinite(params.entropyCoef) && params.entropyCoef >= 0)) throw new Error(`entropyCoef must be a finite number ≥ 0, got ${params.entropyCoef}`);
    if (params.kl && !Number.isFinite(params.kl.coef)) throw new Error(`kl.coef must be finite, got ${params.kl.coef}`);
    if (logits.shape.length !== 3 || logits.shape[2] < 1) throw new Error(`logits: expected shape (B, S, V) with V ≥ 1, got [${logits.shape.join(', ')}]`);
    const [B, A] = expectBA(['tokens', tokens], ['old_logprobs', oldLogprobs], ['advantages', advantages], ['action_mask', actionMask]);
    expectDType('tokens', tokens, 'i32');
    const [LB, S] = logits.shape;
    if (LB !== B) throw new Error(`logits: ${LB} sequences, tokens ${B}`);
    if (!Number.isInteger(start) || start < 0 || start + A > S) throw new Error(`actorLoss: action rows [${start}, ${start + A}) outside the ${S} logits rows`);
    if (!(Number.isFinite(temperature) && temperature > 0)) throw new Error(`temperature must be a finite number > 0, got ${temperature}`);
    if (isWeights) expectShape('is_weights', isWeights, [B, A]);
    if (params.kl && !refLogprobs) throw new Error('actorLoss: a KL loss needs ref_logprobs');
    if (refLogprobs) expectShape('ref_logprobs', refLogprobs, [B, A]);
  },
  cpu({ logits, start, tokens, temperature, oldLogprobs, advantages, actionMask, params, isWeights, refLogprobs }) {
    const [B, S, V] = logits.shape;
    const A = tokens.shape[1];
    const r = actorLossRef(
      cpu(logits).data,
      cpu(tokens).data,
      cpu(oldLogprobs).data,
      cpu(advantages).data,
      cpu(actionMask).data,
      { B, S, A, V, start, temperature },
      params,
      isWeights ? cpu(isWeights).data : null,
      refLogprobs ? cpu(refLogprobs).data : null,
    );
    return {
      gradLogits: new CpuTensor(r.gradLogits, [B, S, V], 'f32'),
      logprobs: new CpuTensor(r.logprobs, [B, A], 'f32'),
      policy: new CpuTensor(r.policy, [4], 'f32'),
      entropy: new CpuTensor(Float64Array.of(r.entropy), [1], 'f32'),
      klLoss: new CpuTensor(Float64Array.of(r.klLoss), [1], 'f32'),
    };
  },
  webgpu(args, be) {
    const { logits, start, tokens, temperature, oldLogprobs, advantages, actionMask, params, isWeights, refLogprobs } = args;
    const [B, S, V] = logits.shape;
    const A = tokens.shape[1];
    // clip_cov / kl_cov choose tokens from every row's new log-prob first: the per-op path.
    if (B > ACTOR_LOSS_WG || V > LOGPROBS_ROWS_MAX_V || COV_LOSS_MODES.includes(params.lossMode ?? 'vanilla')) return perOp(be, args);
    const klTerm = params.kl;
    const packed = be.empty([B, A, 5]); // [old, adv, mask, w_is, ref] per token
    const uk = { n: B * A, has_is: isWeights ? 1 : 0, has_ref: klTerm ? 1 : 0 };
    // Absent inputs bind a tensor that is not read (read-only aliasing is allowed).
    be.rt.dispatch(
      PACK_INPUTS,
      [gpu(oldLogprobs), gpu(advantages), gpu(actionMask), gpu(isWeights ?? actionMask), gpu((klTerm ? refLogprobs : null) ?? oldLogprobs), gpu(packed)],
      uk,
      elementGrid(B * A, 64),
    );
    const gradLogits = be.empty([B, S, V]);
    const logprobs = be.empty([B, A]);
    const policy = be.empty([4]);
    const entropy = be.empty([1]);
    const klLoss = be.empty([1]);
    const mode = params.lossMode ?? 'vanilla';
    const u = {
      B,
      S,
      A,
      V,
      start,
      temperature,
      mode: LOSS_MODE_CODE[mode],
      agg_pol: aggCode(policyAgg(params), params.normScale),
      agg: aggCode(params.agg, params.normScale),
      clip_low: params.clipLow,
      clip_high: params.clipHigh,
      clip_c: params.clipC ?? 0,
      has_dual: params.clipC === null ? 0 : 1,
      ent_coef: params.entropyCoef,
      has_kl: klTerm ? 1 : 0,
      kl_coef: klTerm ? klTerm.coef : 0,
      kl_est: klTerm ? KL_ESTIMATOR_CODE[klTerm.estimator] : 0,
      tau_pos: params.sapoTauPos ?? SAPO_TAU_POS_DEFAULT,
      tau_neg: params.sapoTauNeg ?? SAPO_TAU_NEG_DEFAULT,
    };
    be.rt.dispatch(ACTOR_LOSS, [gpu(logits), gpu(tokens), gpu(packed), gpu(gradLogits), gpu(logprobs), gpu(policy), gpu(entropy), gpu(klLoss)], u, [1]);
    be.dispose(packed);
    return { gradLogits, logprobs, policy, entropy, klLoss };
  },
});
