// The tokens clip_cov / kl_cov act on, chosen batch-wide by the covariance of (A − Ā) and
// (logp − mean logp) over the valid tokens. Math: shaders/cov_select.wgsl's header; float64
// reference: covSelectRef in src/reference/policyLoss.ts.
import type { Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { LOSS_MODE_CODE } from '../reference/kernelCodes.ts';
import { COV_DEFAULTS, covSelectRef, validatePolicyLossParams, type PolicyLossParams } from '../reference/policyLoss.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

export interface CovSelectArgs {
  oldLogprobs: Tensor; // (B, A) f32
  logprobs: Tensor; // (B, A) f32
  advantages: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  params: PolicyLossParams;
}

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
// One workgroup.
const COV_SELECT = kernel({ shader: 'cov_select', entry: 'cov_select', uniform: COV_SELECT_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG: 256 } });
/** cov_select bisects the token index over 20 bits. */
const COV_SELECT_MAX_TOKENS = 2 ** 20;

/**
 * 1 where clip_cov / kl_cov act, else 0 → (B, A) f32: kl_cov's top-k, clip_cov's seeded pick from
 * its band; all 0 for the other modes. policyLoss makes the same choice itself; this op shows it.
 */
export const covSelect: Op<CovSelectArgs, Tensor> = defineOp({
  name: 'covSelect',
  kernels: [COV_SELECT],
  check({ oldLogprobs, logprobs, advantages, actionMask, params }) {
    validatePolicyLossParams(params);
    expectBA(['logprobs', logprobs], ['old_logprobs', oldLogprobs], ['advantages', advantages], ['action_mask', actionMask]);
  },
  cpu({ oldLogprobs, logprobs, advantages, actionMask, params }) {
    const [B, A] = logprobs.shape;
    const sel = covSelectRef(cpu(oldLogprobs).data, cpu(logprobs).data, cpu(advantages).data, cpu(actionMask).data, B, A, params);
    return new CpuTensor(Float64Array.from(sel), [B, A], 'f32');
  },
  webgpu({ oldLogprobs, logprobs, advantages, actionMask, params }, be) {
    const [B, A] = logprobs.shape;
    if (B * A >= COV_SELECT_MAX_TOKENS) throw new Error(`covSelect: ${B}×${A} tokens, the kernel takes fewer than ${COV_SELECT_MAX_TOKENS}`);
    const mode = params.lossMode ?? 'vanilla';
    const sel = be.empty([B, A]);
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
    be.rt.dispatch(COV_SELECT, [gpu(oldLogprobs), gpu(logprobs), gpu(advantages), gpu(actionMask), gpu(sel)], u, [1]);
    return sel;
  },
});
