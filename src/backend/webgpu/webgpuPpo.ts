// PPO ops on WebGPU: each records its kernel(s) into the shared encoder and returns new tensors.
import { groups } from '../../gpu/runtime.ts';
import { uniformLayout } from '../../gpu/uniforms.ts';
import { kernel } from '../../gpu/pipelines.ts';
import { BASELINE_ESTIMATORS, checkBaselines, compactGroups, klSummedIntoScore, WHITENED_GROUP_ESTIMATORS } from '../../reference/groupAdvantages.ts';
import { aggCode, GROUP_ESTIMATOR_CODE, KL_ESTIMATOR_CODE, LOSS_MODE_CODE, ROLLOUT_IS_LEVEL_CODE, ROLLOUT_RS_CODE } from '../../reference/kernelCodes.ts';
import type { RolloutCorrectionParams } from '../../reference/rolloutCorrection.ts';
import { COV_DEFAULTS, COV_LOSS_MODES, policyAgg, SAPO_TAU_NEG_DEFAULT, SAPO_TAU_POS_DEFAULT } from '../../reference/policyLoss.ts';
import type { ActorLossParams, KlEstimator, LossAgg, NormScale, PolicyLossParams, PpoOps, ValueLossParams } from '../ppoOps.ts';
import type { Tensor } from '../tensor.ts';
import { gpu, GpuTensor, gpuTensor } from './gpuTensor.ts';
import type { GpuOpsHost } from '../backend.ts';
import { elementGrid, WebGpuNnOps } from './webgpuNn.ts';

const WG = 64;

// Uniform structs, in each shader's field order (tests/unit/wgsl_params.test.ts checks them by name).
const KL_UNIFORM = uniformLayout('Params', { n: 'u32', estimator: 'u32' });
const REWARDS_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', beta: 'f32', estimator: 'u32' });
const WHITEN_UNIFORM = uniformLayout('Params', { n: 'u32', shift_mean: 'u32' });
const GROUP_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', gamma: 'f32', estimator: 'u32' });
const TIS_UNIFORM = uniformLayout('Params', { n: 'u32', cap: 'f32' });
const RC_UNIFORM = uniformLayout('RcParams', {
  B: 'u32',
  A: 'u32',
  is_level: 'u32',
  is_upper: 'f32',
  is_lower: 'f32',
  has_is_lower: 'u32',
  tis_lower: 'f32',
  rs_count: 'u32',
  rs0: 'u32',
  rs1: 'u32',
  rs2: 'u32',
  rs3: 'u32',
  lo0: 'f32',
  lo1: 'f32',
  lo2: 'f32',
  lo3: 'f32',
  hi0: 'f32',
  hi1: 'f32',
  hi2: 'f32',
  hi3: 'f32',
});
const LOGPROBS_UNIFORM = uniformLayout('Params', { A: 'u32', V: 'u32', temperature: 'f32', has_grad_entropy: 'u32', rows: 'u32' });
const AGG_ROWS_UNIFORM = uniformLayout('RowParams', { B: 'u32', A: 'u32' });
const AGG_FINAL_UNIFORM = uniformLayout('FinalParams', { B: 'u32', A: 'u32', K: 'u32', agg: 'u32', scale_in_place: 'u32' });
const POLICY_UNIFORM = uniformLayout('Params', {
  B: 'u32',
  A: 'u32',
  clip_low: 'f32',
  clip_high: 'f32',
  clip_c: 'f32',
  has_dual: 'u32',
  mode: 'u32',
  has_is: 'u32',
  tau_pos: 'f32',
  tau_neg: 'f32',
  ppo_kl_coef: 'f32',
});
const COV_SELECT_UNIFORM = uniformLayout('Params', {
  B: 'u32',
  A: 'u32',
  mode: 'u32',
  clip_low: 'f32',
  clip_high: 'f32',
  ratio: 'f32',
  lb: 'f32',
  ub: 'f32',
  seed: 'u32',
});
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
const VALUE_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', clip: 'f32', has_clip: 'u32' });

const KL_FORWARD = kernel({ shader: 'kl', entry: 'kl_forward', uniform: KL_UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });
const KL_BACKWARD = kernel({ ...KL_FORWARD, entry: 'kl_backward' });

// Advantage side (shaders/rewards.wgsl, gae.wgsl, whiten.wgsl, group_advantages.wgsl).
// whiten runs as ONE workgroup with a tree reduction, so its size must be a power of two ≤ 256.
const WG_WHITEN = 256;
const SHAPE_REWARDS = kernel({ shader: 'rewards', entry: 'shape_rewards', uniform: REWARDS_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw', 'rw'], constants: { WG } });
const WHITEN = kernel({ shader: 'whiten', entry: 'whiten', uniform: WHITEN_UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG: WG_WHITEN } });
// group_scores also reads the baselines (ReMax) and the action mask (OPO's lengths); mask_advantages the baselines.
const GROUP_SCORES = kernel({ shader: 'group_advantages', entry: 'group_scores', uniform: GROUP_UNIFORM, storage: ['read', 'read', 'rw', 'read', 'read'], constants: { WG } });
const DISCOUNTED_RETURNS = kernel({ ...GROUP_SCORES, entry: 'discounted_returns', storage: ['read', 'read', 'rw'] });
const MASK_ADVANTAGES = kernel({ ...GROUP_SCORES, entry: 'mask_advantages', storage: ['read', 'read', 'rw', 'read'] });
const TIS_WEIGHTS = kernel({ shader: 'tis', entry: 'tis_weights', uniform: TIS_UNIFORM, storage: ['read', 'read', 'read', 'rw'], constants: { WG } });
// One workgroup per row with tree reductions: WG a power of two.
const ROLLOUT_CORRECTION = kernel({ shader: 'tis', entry: 'rollout_correction', uniform: RC_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG } });

// Loss side: row kernels write (B, 5) partials that agg_finalize reduces (see shaders/aggregate.wgsl).
const WG_FINAL = 256;
const ROW_STRIDE = 5;
const LOGPROBS_FORWARD = kernel({ shader: 'logprobs', entry: 'logprobs_forward', uniform: LOGPROBS_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG } });
const LOGPROBS_BACKWARD = kernel({ shader: 'logprobs', entry: 'logprobs_backward', uniform: LOGPROBS_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG } });
// Vocabularies up to this size take one thread per row (no barriers: cheaper on CPU adapters and
// plenty of threads on GPUs at the playground's sizes); larger ones a workgroup per row.
const LOGPROBS_ROWS_MAX_V = 256;
const LOGPROBS_ROWS_FORWARD = kernel({ ...LOGPROBS_FORWARD, entry: 'rows_forward' });
const LOGPROBS_ROWS_BACKWARD = kernel({ ...LOGPROBS_BACKWARD, entry: 'rows_backward' });
const AGG_ROWS = kernel({ shader: 'aggregate', entry: 'agg_rows', uniform: AGG_ROWS_UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });
const AGG_FINALIZE = kernel({ shader: 'aggregate', entry: 'agg_finalize', uniform: AGG_FINAL_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG_FINAL } });
const POLICY_ROWS = kernel({
  shader: 'policy_loss',
  entry: 'policy_rows',
  uniform: POLICY_UNIFORM,
  storage: ['read', 'read', 'read', 'read', 'read', 'rw', 'rw', 'read'],
  constants: { WG },
});
// clip_cov / kl_cov's batch-wide token choice (shaders/cov_select.wgsl): one workgroup.
const COV_SELECT = kernel({ shader: 'cov_select', entry: 'cov_select', uniform: COV_SELECT_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG: 256 } });
/** cov_select bisects the token index over 20 bits. */
const COV_SELECT_MAX_TOKENS = 2 ** 20;
// The actor's loss in one pass over the logits (shaders/actor_loss.wgsl): one workgroup, a thread per sequence.
const ACTOR_LOSS_WG = 256; // the most sequences it takes; more (or V > LOGPROBS_ROWS_MAX_V) compose the per-op kernels
const PACK_INPUTS = kernel({ shader: 'actor_loss', entry: 'pack_inputs', uniform: PACK_UNIFORM, storage: ['read', 'read', 'read', 'read', 'read', 'rw'] });
const ACTOR_LOSS = kernel({
  shader: 'actor_loss',
  entry: 'actor_loss',
  uniform: ACTOR_LOSS_UNIFORM,
  storage: ['read', 'read', 'read', 'rw', 'rw', 'rw', 'rw', 'rw'],
  constants: { WG: ACTOR_LOSS_WG },
});
const VALUE_ROWS = kernel({ shader: 'value_loss', entry: 'value_rows', uniform: VALUE_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw', 'rw'], constants: { WG } });

export class WebGpuPpoOps implements PpoOps {
  /** Element-wise and slice ops for actorLoss's per-op path. */
  private readonly nn: WebGpuNnOps;

  constructor(private readonly be: GpuOpsHost) {
    this.nn = new WebGpuNnOps(be);
  }

  private klKernel(spec: typeof KL_FORWARD, logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    const out = this.be.empty(logprobs.shape);
    const u = { n: logprobs.size, estimator: KL_ESTIMATOR_CODE[estimator] };
    this.be.rt.dispatch(spec, [gpu(logprobs), gpu(refLogprobs), gpu(out)], u, [groups(logprobs.size, WG)]);
    return out;
  }

  kl(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    return this.klKernel(KL_FORWARD, logprobs, refLogprobs, estimator);
  }
  klGrad(logprobs: Tensor, refLogprobs: Tensor, estimator: KlEstimator): Tensor {
    return this.klKernel(KL_BACKWARD, logprobs, refLogprobs, estimator);
  }
  logprobs(logits: Tensor, tokens: Tensor, temperature: number): { logprobs: Tensor; entropy: Tensor } {
    const [B, A, V] = logits.shape;
    const logprobs = this.be.empty([B, A]);
    const entropy = this.be.empty([B, A]);
    const u = { A, V, temperature, has_grad_entropy: 0, rows: B * A };
    const bufs = [gpu(logits), gpu(tokens), gpu(logprobs), gpu(entropy)];
    if (V <= LOGPROBS_ROWS_MAX_V) this.be.rt.dispatch(LOGPROBS_ROWS_FORWARD, bufs, u, elementGrid(B * A, WG));
    else this.be.rt.dispatch(LOGPROBS_FORWARD, bufs, u, [A, B]);
    return { logprobs, entropy };
  }
  logprobsBackward(logits: Tensor, tokens: Tensor, temperature: number, gradLogprobs: Tensor, gradEntropy: Tensor | null): Tensor {
    const [B, A, V] = logits.shape;
    const out = this.be.empty([B, A, V]);
    const u = { A, V, temperature, has_grad_entropy: gradEntropy ? 1 : 0, rows: B * A };
    // Without an entropy gradient its binding gets gradLogprobs (read-only aliasing is allowed; not read).
    const ge = gpu(gradEntropy ?? gradLogprobs);
    const bufs = [gpu(logits), gpu(tokens), gpu(gradLogprobs), ge, gpu(out)];
    if (V <= LOGPROBS_ROWS_MAX_V) this.be.rt.dispatch(LOGPROBS_ROWS_BACKWARD, bufs, u, elementGrid(B * A, WG));
    else this.be.rt.dispatch(LOGPROBS_BACKWARD, bufs, u, [A, B]);
    return out;
  }
  // ---- advantage side: shapeRewards, gae, whiten, groupAdvantages ----
  shapeRewards(scores: Tensor, logprobs: Tensor, refLogprobs: Tensor, actionMask: Tensor, beta: number, estimator: KlEstimator) {
    const [B, A] = logprobs.shape;
    const rewards = this.be.empty([B, A]);
    const kl = this.be.empty([B, A]);
    const u = { B, A, beta, estimator: KL_ESTIMATOR_CODE[estimator] };
    const bufs = [gpu(scores), gpu(logprobs), gpu(refLogprobs), gpu(actionMask), gpu(rewards), gpu(kl)];
    this.be.rt.dispatch(SHAPE_REWARDS, bufs, u, [groups(B * A, WG)]);
    return { rewards, kl };
  }
  whiten(x: Tensor, actionMask: Tensor, shiftMean: boolean): Tensor {
    const out = this.be.empty(x.shape);
    const u = { n: x.size, shift_mean: shiftMean ? 1 : 0 };
    this.be.rt.dispatch(WHITEN, [gpu(x), gpu(actionMask), gpu(out)], u, [x.size > 0 ? 1 : 0]);
    return out;
  }
  groupAdvantages(args: Parameters<PpoOps['groupAdvantages']>[0]) {
    const { estimator, scores, logprobs, refLogprobs, actionMask } = args;
    const [B, A] = logprobs.shape;
    // Validation (a group of one sample) throws here, before anything is recorded.
    const compact = compactGroups(args.group, B, estimator);
    checkBaselines(estimator, args.baselines ? { length: args.baselines.size } : null, B);
    // Without a baseline (every estimator but remax) its binding gets the scores: read-only aliasing, not read.
    const baselines = BASELINE_ESTIMATORS.has(estimator) && args.baselines ? args.baselines : scores;
    const groupIndex = this.be.tensor(compact.index, [B], 'i32');
    const transformed = this.be.empty([B]);
    const ug = { B, A, gamma: args.gamma, estimator: GROUP_ESTIMATOR_CODE[estimator] };
    // verl's order: the score of each response is Σ_t of its shaped token rewards (score − β·ΣKL),
    // read off an undiscounted returns scan at t = 0; only this order pays for the extra dispatches.
    const summed = klSummedIntoScore(estimator, args.klOrder, args.beta);
    const seqScores = summed ? this.sequenceScores(scores, logprobs, refLogprobs, actionMask, args.beta, args.klEstimator) : scores;
    this.be.rt.dispatch(GROUP_SCORES, [gpu(seqScores), gpu(groupIndex), gpu(transformed), gpu(baselines), gpu(actionMask)], ug, [groups(B, WG)]);
    if (seqScores !== scores) this.be.dispose(seqScores);
    const { rewards, kl } = this.shapeRewards(transformed, logprobs, refLogprobs, actionMask, summed ? 0 : args.beta, args.klEstimator);
    const returns = this.be.empty([B, A]);
    this.be.rt.dispatch(DISCOUNTED_RETURNS, [gpu(rewards), gpu(actionMask), gpu(returns)], ug, [groups(B, WG)]);
    const unmasked = WHITENED_GROUP_ESTIMATORS.has(estimator) ? this.whiten(returns, actionMask, true) : returns;
    // verl multiplies every outcome estimator's advantages by the response mask: 0 at padding.
    const advantages = this.be.empty([B, A]);
    this.be.rt.dispatch(MASK_ADVANTAGES, [gpu(unmasked), gpu(actionMask), gpu(advantages), gpu(baselines)], ug, [groups(B * A, WG)]);
    // Safe to recycle at once: later users of these buffers are recorded (and so run) after these reads.
    this.be.dispose(groupIndex, transformed, rewards, kl);
    if (unmasked !== returns) this.be.dispose(unmasked);
    return { advantages, returns };
  }
  /** Σ_t of the shaped token rewards per row (B): score − β·Σ_t mask·KL_t, with the kernels that exist. */
  private sequenceScores(scores: Tensor, logprobs: Tensor, refLogprobs: Tensor, actionMask: Tensor, beta: number, klEstimator: KlEstimator): Tensor {
    const [B, A] = logprobs.shape;
    const { rewards, kl } = this.shapeRewards(scores, logprobs, refLogprobs, actionMask, beta, klEstimator);
    const sums = this.be.empty([B, A]);
    // γ = 1: the returns at t = 0 are the row sums (masked positions carry the sum through).
    this.be.rt.dispatch(DISCOUNTED_RETURNS, [gpu(rewards), gpu(actionMask), gpu(sums)], { B, A, gamma: 1, estimator: 0 }, [groups(B, WG)]);
    // Column 0 of the (B, A) sums: a (B·A, 1) handle on the same buffer, gathered at rows b·A.
    const g = gpuTensor(sums);
    const cells = new GpuTensor(g.buffer, [B * A, 1], 'f32', g.offset, true);
    const firstColumn = this.be.tensor(
      Int32Array.from({ length: B }, (_, b) => b * A),
      [B],
      'i32',
    );
    const out = this.nn.gatherRows(cells, firstColumn); // (B, 1): GROUP_SCORES reads it as (B)
    // Safe to recycle at once: later users of these buffers are recorded (and so run) after these reads.
    this.be.dispose(rewards, kl, sums, firstColumn);
    return out;
  }
  // ---- end advantage side ----
  /** agg_finalize over row partials: stats (K) and `weighted` (B,A) = weights or grad·weights. */
  private finalize(rows: Tensor, mask: Tensor, B: number, A: number, K: number, agg: number, weighted: Tensor, scaleInPlace: boolean): Tensor {
    const stats = this.be.empty([K]);
    const u = { B, A, K, agg, scale_in_place: scaleInPlace ? 1 : 0 };
    this.be.rt.dispatch(AGG_FINALIZE, [gpu(rows), gpu(mask), gpu(stats), gpu(weighted)], u, [1]);
    // Safe to recycle at once: later users of the buffer are recorded (and so run) after this read.
    this.be.dispose(rows);
    return stats;
  }

  policyLoss(
    oldLogprobs: Tensor,
    logprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: PolicyLossParams,
    isWeights: Tensor | null = null,
  ): { stats: Tensor; gradLogprobs: Tensor } {
    const [B, A] = logprobs.shape;
    const mode = params.lossMode ?? 'vanilla';
    const gradLogprobs = this.be.empty([B, A]);
    const rows = this.be.empty([B, ROW_STRIDE]);
    const u = {
      B,
      A,
      clip_low: params.clipLow,
      clip_high: params.clipHigh,
      clip_c: params.clipC ?? 0,
      has_dual: params.clipC === null ? 0 : 1,
      mode: LOSS_MODE_CODE[mode],
      has_is: isWeights ? 1 : 0,
      tau_pos: params.sapoTauPos ?? SAPO_TAU_POS_DEFAULT,
      tau_neg: params.sapoTauNeg ?? SAPO_TAU_NEG_DEFAULT,
      ppo_kl_coef: params.ppoKlCoef ?? COV_DEFAULTS.ppoKlCoef,
    };
    // Without IS weights their binding gets the mask (read-only aliasing is allowed; not read);
    // likewise the selection mask outside clip_cov / kl_cov.
    const is = gpu(isWeights ?? actionMask);
    const sel = COV_LOSS_MODES.includes(mode) ? this.covSelect(oldLogprobs, logprobs, advantages, actionMask, params) : null;
    this.be.rt.dispatch(POLICY_ROWS, [gpu(oldLogprobs), gpu(logprobs), gpu(advantages), gpu(actionMask), is, gpu(gradLogprobs), gpu(rows), gpu(sel ?? actionMask)], u, [B]);
    if (sel) this.be.dispose(sel);
    // GSPO and SAPO aggregate seq-mean-token-mean, GMPO over all rows, whatever params.agg says (as verl does).
    const agg = aggCode(policyAgg(params), params.normScale);
    const stats = this.finalize(rows, actionMask, B, A, 4, agg, gradLogprobs, true);
    return { stats, gradLogprobs };
  }
  /** (B, A) 1 where clip_cov / kl_cov act (shaders/cov_select.wgsl; src/reference/policyLoss.ts covSelectRef). */
  covSelect(oldLogprobs: Tensor, logprobs: Tensor, advantages: Tensor, actionMask: Tensor, params: PolicyLossParams): Tensor {
    const [B, A] = logprobs.shape;
    if (B * A >= COV_SELECT_MAX_TOKENS) throw new Error(`covSelect: ${B}×${A} tokens, the kernel takes fewer than ${COV_SELECT_MAX_TOKENS}`);
    const mode = params.lossMode ?? 'vanilla';
    const sel = this.be.empty([B, A]);
    const clip = mode === 'clip_cov';
    const u = {
      B,
      A,
      mode: LOSS_MODE_CODE[mode],
      clip_low: params.clipLow,
      clip_high: params.clipHigh,
      ratio: clip ? (params.clipCovRatio ?? COV_DEFAULTS.clipCovRatio) : (params.klCovRatio ?? COV_DEFAULTS.klCovRatio),
      lb: params.clipCovLb ?? COV_DEFAULTS.clipCovLb,
      ub: params.clipCovUb ?? COV_DEFAULTS.clipCovUb,
      seed: (params.covSeed ?? 0) >>> 0,
    };
    this.be.rt.dispatch(COV_SELECT, [gpu(oldLogprobs), gpu(logprobs), gpu(advantages), gpu(actionMask), gpu(sel)], u, [1]);
    return sel;
  }
  tisWeights(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, cap: number): Tensor {
    const [B, A] = oldLogprobs.shape;
    const out = this.be.empty([B, A]);
    const u = { n: B * A, cap };
    this.be.rt.dispatch(TIS_WEIGHTS, [gpu(oldLogprobs), gpu(rolloutLogprobs), gpu(actionMask), gpu(out)], u, [groups(B * A, WG)]);
    return out;
  }
  rolloutCorrection(oldLogprobs: Tensor, rolloutLogprobs: Tensor, actionMask: Tensor, params: RolloutCorrectionParams): { weights: Tensor | null; keep: Tensor } {
    const [B, A] = oldLogprobs.shape;
    const keep = this.be.empty([B, A]);
    const weights = params.isLevel === null ? null : this.be.empty([B, A]);
    const rs = (j: number) => params.rs[j];
    const code = (j: number) => (rs(j) ? ROLLOUT_RS_CODE[rs(j).option] : 0);
    // k1 bounds go to the kernel as logs (verl compares −lr' with log(lower), log(upper)), taken in float64.
    const lo = (j: number) => (rs(j) && rs(j).lower !== null ? Math.log(rs(j).lower as number) : 0);
    const hi = (j: number) => (rs(j) ? (rs(j).lower !== null ? Math.log(rs(j).upper) : rs(j).upper) : 0);
    const u = {
      B,
      A,
      is_level: ROLLOUT_IS_LEVEL_CODE[params.isLevel ?? 'off'],
      is_upper: params.isUpper,
      is_lower: params.isLower ?? 0,
      has_is_lower: params.isLower === null ? 0 : 1,
      tis_lower: params.tisLower ?? 0,
      rs_count: params.rs.length,
      rs0: code(0),
      rs1: code(1),
      rs2: code(2),
      rs3: code(3),
      lo0: lo(0),
      lo1: lo(1),
      lo2: lo(2),
      lo3: lo(3),
      hi0: hi(0),
      hi1: hi(1),
      hi2: hi(2),
      hi3: hi(3),
    };
    // Without IS the weights binding gets a 1-element buffer the kernel never writes (two rw bindings may not alias).
    const w = weights ?? this.be.empty([1]);
    this.be.rt.dispatch(ROLLOUT_CORRECTION, [gpu(oldLogprobs), gpu(rolloutLogprobs), gpu(actionMask), gpu(w), gpu(keep)], u, [B]);
    return { weights, keep };
  }

  valueLoss(values: Tensor, oldValues: Tensor, returns: Tensor, actionMask: Tensor, params: ValueLossParams): { stats: Tensor; gradValues: Tensor } {
    const [B, A] = values.shape;
    const gradValues = this.be.empty([B, A]);
    const rows = this.be.empty([B, ROW_STRIDE]);
    const u = { B, A, clip: params.clip ?? 0, has_clip: params.clip === null ? 0 : 1 };
    this.be.rt.dispatch(VALUE_ROWS, [gpu(values), gpu(oldValues), gpu(returns), gpu(actionMask), gpu(gradValues), gpu(rows)], u, [B]);
    const stats = this.finalize(rows, actionMask, B, A, 2, aggCode(params.agg, params.normScale), gradValues, true);
    return { stats, gradValues };
  }
  aggregate(x: Tensor, actionMask: Tensor, agg: LossAgg, normScale: NormScale = 'per_seq'): { value: Tensor; weights: Tensor } {
    const [B, A] = x.shape;
    const rows = this.be.empty([B, ROW_STRIDE]);
    this.be.rt.dispatch(AGG_ROWS, [gpu(x), gpu(actionMask), gpu(rows)], { B, A }, [B]);
    const weights = this.be.empty([B, A]);
    const value = this.finalize(rows, actionMask, B, A, 1, aggCode(agg, normScale), weights, false);
    return { value, weights };
  }

  actorLoss(
    logits: Tensor,
    start: number,
    tokens: Tensor,
    temperature: number,
    oldLogprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: ActorLossParams,
    isWeights: Tensor | null,
    refLogprobs: Tensor | null,
  ) {
    const [B, S, V] = logits.shape;
    const A = tokens.shape[1];
    // clip_cov / kl_cov choose tokens from every row's new log-prob first: the per-op path.
    if (B > ACTOR_LOSS_WG || V > LOGPROBS_ROWS_MAX_V || COV_LOSS_MODES.includes(params.lossMode ?? 'vanilla'))
      return this.actorLossPerOp(logits, start, tokens, temperature, oldLogprobs, advantages, actionMask, params, isWeights, refLogprobs);
    const kl = params.kl;
    const packed = this.be.empty([B, A, 5]); // [old, adv, mask, w_is, ref] per token
    const uk = { n: B * A, has_is: isWeights ? 1 : 0, has_ref: kl ? 1 : 0 };
    // Absent inputs bind a tensor that is not read (read-only aliasing is allowed).
    this.be.rt.dispatch(
      PACK_INPUTS,
      [gpu(oldLogprobs), gpu(advantages), gpu(actionMask), gpu(isWeights ?? actionMask), gpu((kl ? refLogprobs : null) ?? oldLogprobs), gpu(packed)],
      uk,
      elementGrid(B * A, 64),
    );
    const gradLogits = this.be.empty([B, S, V]);
    const logprobs = this.be.empty([B, A]);
    const policy = this.be.empty([4]);
    const entropy = this.be.empty([1]);
    const klLoss = this.be.empty([1]);
    const mode = params.lossMode ?? 'vanilla';
    const aggPol = aggCode(policyAgg(params), params.normScale);
    const u = {
      B,
      S,
      A,
      V,
      start,
      temperature,
      mode: LOSS_MODE_CODE[mode],
      agg_pol: aggPol,
      agg: aggCode(params.agg, params.normScale),
      clip_low: params.clipLow,
      clip_high: params.clipHigh,
      clip_c: params.clipC ?? 0,
      has_dual: params.clipC === null ? 0 : 1,
      ent_coef: params.entropyCoef,
      has_kl: kl ? 1 : 0,
      kl_coef: kl ? kl.coef : 0,
      kl_est: kl ? KL_ESTIMATOR_CODE[kl.estimator] : 0,
      tau_pos: params.sapoTauPos ?? SAPO_TAU_POS_DEFAULT,
      tau_neg: params.sapoTauNeg ?? SAPO_TAU_NEG_DEFAULT,
    };
    this.be.rt.dispatch(ACTOR_LOSS, [gpu(logits), gpu(tokens), gpu(packed), gpu(gradLogits), gpu(logprobs), gpu(policy), gpu(entropy), gpu(klLoss)], u, [1]);
    this.be.dispose(packed);
    return { gradLogits, logprobs, policy, entropy, klLoss };
  }

  /** actorLoss as the per-op kernels (large batches or vocabularies): the composition actor_loss.wgsl fuses. */
  private actorLossPerOp(
    logits: Tensor,
    start: number,
    tokens: Tensor,
    temperature: number,
    oldLogprobs: Tensor,
    advantages: Tensor,
    actionMask: Tensor,
    params: ActorLossParams,
    isWeights: Tensor | null,
    refLogprobs: Tensor | null,
  ) {
    const { nn } = this;
    const S = logits.shape[1];
    const A = tokens.shape[1];
    const normScale = params.normScale ?? 'per_seq';
    const scored = nn.sliceSeq(logits, start, A); // (B, A, V)
    const { logprobs, entropy: tokenEntropy } = this.logprobs(scored, tokens, temperature);
    const { stats: policy, gradLogprobs } = this.policyLoss(oldLogprobs, logprobs, advantages, actionMask, params, isWeights);
    const ent = this.aggregate(tokenEntropy, actionMask, params.agg, normScale);
    let gradEntropy: Tensor | null = null;
    if (params.entropyCoef > 0) {
      nn.scale(ent.weights, -params.entropyCoef); // loss −c·Σw·H  →  ∂loss/∂H = −c·w
      gradEntropy = ent.weights;
    }
    let klLoss: Tensor;
    if (params.kl) {
      const klTok = this.kl(logprobs, refLogprobs!, params.kl.estimator);
      const agg = this.aggregate(klTok, actionMask, params.agg, normScale);
      klLoss = agg.value;
      const dKl = this.klGrad(logprobs, refLogprobs!, params.kl.estimator);
      nn.scale(dKl, params.kl.coef);
      const term = nn.mul(agg.weights, dKl); // w⊙(c·klGrad): 0 on masked tokens
      nn.axpy(1, term, gradLogprobs);
      this.be.dispose(klTok, agg.weights, dKl, term);
    } else {
      klLoss = this.be.empty([1]);
      nn.fill(klLoss, 0);
    }
    const gScored = this.logprobsBackward(scored, tokens, temperature, gradLogprobs, gradEntropy);
    const gradLogits = nn.sliceSeqBackward(gScored, S, start);
    this.be.dispose(scored, tokenEntropy, gradLogprobs, ent.weights, gScored);
    return { gradLogits, logprobs, policy, entropy: ent.value, klLoss };
  }
}
