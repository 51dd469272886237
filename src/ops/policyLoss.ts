// The PPO policy loss of every loss mode (vanilla clip with asymmetric and dual clip, GSPO, CISPO,
// SAPO, GPG, GMPO, Clip-Cov, KL-Cov) and its gradient wrt the log-probs. Math:
// shaders/policy_loss.wgsl's header; float64 reference: src/reference/policyLoss.ts.
import type { Tensor } from '../backend/tensor.ts';
import { expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { LOSS_AGGS, NORM_SCALES } from '../reference/aggregate.ts';
import { aggCode, LOSS_MODE_CODE } from '../reference/kernelCodes.ts';
import {
  COV_DEFAULTS,
  COV_LOSS_MODES,
  LOSS_MODES,
  policyAgg,
  policyLossRef,
  SAPO_TAU_NEG_DEFAULT,
  SAPO_TAU_POS_DEFAULT,
  validatePolicyLossParams,
  type PolicyLossParams,
} from '../reference/policyLoss.ts';
import { AGG_FINALIZE, finalizeRows, ROW_STRIDE } from './aggregate.ts';
import { covSelect } from './covSelect.ts';
import { bt, choiceField, denseArray, InputError, maskTensor, nest, numberField, sameShape } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

/** Layout of the `stats` tensor returned by policyLoss (and actorLoss's `policy`). */
export const POLICY_STATS = { loss: 0, clipfrac: 1, clipfracLower: 2, ppoKl: 3 } as const;

export interface PolicyLossArgs {
  oldLogprobs: Tensor; // (B, A) f32
  logprobs: Tensor; // (B, A) f32
  advantages: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  params: PolicyLossParams;
  /**
   * (B, A) f32 stop-gradient per-token weights multiplied into the per-token loss before
   * aggregation (verl rollout_is_weights, e.g. tisWeights; GMPO multiplies each row's loss by their
   * geometric mean over the row, as verl); they do not enter the clip fractions or ppo_kl.
   */
  isWeights?: Tensor | null;
}

export interface PolicyLossResult {
  stats: Tensor; // (4) f32 as POLICY_STATS
  gradLogprobs: Tensor; // (B, A) f32, ∂loss/∂logprobs
}

const WG = 64;
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
const POLICY_ROWS = kernel({
  shader: 'policy_loss',
  entry: 'policy_rows',
  uniform: POLICY_UNIFORM,
  storage: ['read', 'read', 'read', 'read', 'read', 'rw', 'rw', 'read'],
  constants: { WG },
});

/**
 * Policy loss of params.lossMode; Clip-Cov and KL-Cov choose their tokens over this whole (B, A)
 * (covSelect).
 */
export const policyLoss: Op<PolicyLossArgs, PolicyLossResult> = defineOp({
  name: 'policyLoss',
  kernels: [POLICY_ROWS, AGG_FINALIZE],
  check({ oldLogprobs, logprobs, advantages, actionMask, params, isWeights }) {
    validatePolicyLossParams(params);
    const [B, A] = expectBA(['logprobs', logprobs], ['old_logprobs', oldLogprobs], ['advantages', advantages], ['action_mask', actionMask]);
    if (isWeights) expectShape('is_weights', isWeights, [B, A]);
  },
  cpu({ oldLogprobs, logprobs, advantages, actionMask, params, isWeights }) {
    const [B, A] = logprobs.shape;
    const r = policyLossRef(cpu(oldLogprobs).data, cpu(logprobs).data, cpu(advantages).data, cpu(actionMask).data, B, A, params, isWeights ? cpu(isWeights).data : null);
    return { stats: new CpuTensor(r.stats, [4], 'f32'), gradLogprobs: new CpuTensor(r.gradLogprobs, [B, A], 'f32') };
  },
  webgpu(args, be) {
    const { oldLogprobs, logprobs, advantages, actionMask, params, isWeights } = args;
    const [B, A] = logprobs.shape;
    const mode = params.lossMode ?? 'vanilla';
    const gradLogprobs = be.empty([B, A]);
    const rows = be.empty([B, ROW_STRIDE]);
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
    const sel = COV_LOSS_MODES.includes(mode) ? covSelect(be, { oldLogprobs, logprobs, advantages, actionMask, params }) : null;
    be.rt.dispatch(POLICY_ROWS, [gpu(oldLogprobs), gpu(logprobs), gpu(advantages), gpu(actionMask), is, gpu(gradLogprobs), gpu(rows), gpu(sel ?? actionMask)], u, [B]);
    if (sel) be.dispose(sel);
    // GSPO and SAPO aggregate seq-mean-token-mean, GMPO over all rows, whatever params.agg says (as verl does).
    const agg = aggCode(policyAgg(params), params.normScale);
    const stats = finalizeRows(be, rows, actionMask, B, A, 4, agg, gradLogprobs, true);
    return { stats, gradLogprobs };
  },
  json: {
    name: 'policy_loss',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['old_logprobs', 'logprobs', 'advantages']);
      const actionMask = maskTensor(be, input, shape, 'old_logprobs');
      const clipC = numberField(input, 'clip_c', { optional: true });
      if (clipC !== null && clipC <= 1) throw new InputError(`field "clip_c": ${clipC} is out of range (the dual-clip constant must be > 1)`);
      let isWeights: Tensor | null = null;
      if ('is_weights' in input && input.is_weights !== null) {
        const w = denseArray(input, 'is_weights', 2);
        sameShape('is_weights', w, shape, 'old_logprobs');
        isWeights = be.tensor(w.data, w.shape);
      }
      const covSeed = numberField(input, 'cov_seed', { min: 0, max: 0xffffffff, optional: true });
      if (covSeed !== null && !Number.isInteger(covSeed)) throw new InputError(`field "cov_seed": ${covSeed} is not an integer (a u32 seed)`);
      const params: PolicyLossParams = {
        clipLow: numberField(input, 'clip_low', { min: 0, exclusiveMin: true })!,
        clipHigh: numberField(input, 'clip_high', { min: 0, exclusiveMin: true })!,
        clipC,
        agg: choiceField(input, 'agg', LOSS_AGGS, 'token-mean'),
        lossMode: choiceField(input, 'loss_mode', LOSS_MODES, 'vanilla'),
        normScale: choiceField(input, 'norm_scale', NORM_SCALES, 'per_seq'),
        // SAPO's gate temperatures (verl actor.tau_pos / tau_neg); read by loss_mode sapo only
        sapoTauPos: numberField(input, 'tau_pos', { min: 0, exclusiveMin: true, optional: true }) ?? SAPO_TAU_POS_DEFAULT,
        sapoTauNeg: numberField(input, 'tau_neg', { min: 0, exclusiveMin: true, optional: true }) ?? SAPO_TAU_NEG_DEFAULT,
        // Clip-Cov / KL-Cov (verl policy_loss.*, verl's defaults when absent); cov_seed ranks clip_cov's band
        clipCovRatio: numberField(input, 'clip_cov_ratio', { min: 0, exclusiveMin: true, optional: true }) ?? COV_DEFAULTS.clipCovRatio,
        clipCovLb: numberField(input, 'clip_cov_lb', { optional: true }) ?? COV_DEFAULTS.clipCovLb,
        clipCovUb: numberField(input, 'clip_cov_ub', { optional: true }) ?? COV_DEFAULTS.clipCovUb,
        klCovRatio: numberField(input, 'kl_cov_ratio', { min: 0, exclusiveMin: true, optional: true }) ?? COV_DEFAULTS.klCovRatio,
        ppoKlCoef: numberField(input, 'ppo_kl_coef', { min: 0, optional: true }) ?? COV_DEFAULTS.ppoKlCoef,
        covSeed: covSeed ?? 0,
      };
      const args = { oldLogprobs: tensors[0], logprobs: tensors[1], advantages: tensors[2], actionMask, params };
      const r = policyLoss(be, { ...args, isWeights });
      // clip_cov / kl_cov also return the tokens they acted on (1 = picked), so a check against
      // verl can inject clip_cov's choice where verl draws torch.randperm.
      const sel = COV_LOSS_MODES.includes(params.lossMode ?? 'vanilla') ? covSelect(be, args) : null;
      const [stats, grad, picked] = await be.readMany(sel ? [r.stats, r.gradLogprobs, sel] : [r.stats, r.gradLogprobs]);
      return {
        loss: stats[POLICY_STATS.loss],
        clipfrac: stats[POLICY_STATS.clipfrac],
        clipfrac_lower: stats[POLICY_STATS.clipfracLower],
        ppo_kl: stats[POLICY_STATS.ppoKl],
        grad_logprobs: nest(grad, shape),
        ...(picked ? { cov_selected: nest(picked, shape) } : {}),
      };
    },
  },
  bench: {
    label: 'policy_loss',
    run: (be, x) =>
      policyLoss(be, { oldLogprobs: x.old, logprobs: x.logp, advantages: x.adv, actionMask: x.mask, params: { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg: 'token-mean' } }),
  },
});
