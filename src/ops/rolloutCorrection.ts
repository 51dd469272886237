// verl's rollout correction: token or sequence IS weights with a TIS cap (OpenRLHF's lower bound,
// the IcePop band) and rejection sampling by token / sequence k1, k2, k3. Math: the
// rollout_correction entry of shaders/tis.wgsl; float64 reference: src/reference/rolloutCorrection.ts.
import type { Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { ROLLOUT_IS_LEVEL_CODE, ROLLOUT_RS_CODE } from '../reference/kernelCodes.ts';
import {
  parseRolloutIsThreshold,
  parseRolloutRs,
  ROLLOUT_IS_LEVELS,
  rolloutCorrectionRef,
  rolloutCorrMetricsRef,
  validateRolloutCorrectionParams,
  type RolloutCorrectionParams,
} from '../reference/rolloutCorrection.ts';
import { bt, choiceField, InputError, jsonOutputs, maskTensor, numberField } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';

export interface RolloutCorrectionArgs {
  oldLogprobs: Tensor; // (B, A) f32
  rolloutLogprobs: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  params: RolloutCorrectionParams;
}

export interface RolloutCorrectionResult {
  weights: Tensor | null; // (B, A) f32 IS weights; null when params.isLevel is null
  keep: Tensor; // (B, A) f32, the action mask with rejected tokens zeroed
}

const WG = 64;
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
// One workgroup per row with tree reductions: WG a power of two.
const ROLLOUT_CORRECTION = kernel({ shader: 'tis', entry: 'rollout_correction', uniform: RC_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG } });

export const rolloutCorrection: Op<RolloutCorrectionArgs, RolloutCorrectionResult> = defineOp({
  name: 'rolloutCorrection',
  kernels: [ROLLOUT_CORRECTION],
  check({ oldLogprobs, rolloutLogprobs, actionMask, params }) {
    validateRolloutCorrectionParams(params);
    expectBA(['old_logprobs', oldLogprobs], ['rollout_logprobs', rolloutLogprobs], ['action_mask', actionMask]);
  },
  cpu({ oldLogprobs, rolloutLogprobs, actionMask, params }) {
    const [B, A] = oldLogprobs.shape;
    const r = rolloutCorrectionRef(cpu(oldLogprobs).data, cpu(rolloutLogprobs).data, cpu(actionMask).data, B, A, params);
    return { weights: r.weights ? new CpuTensor(r.weights, [B, A], 'f32') : null, keep: new CpuTensor(r.keep, [B, A], 'f32') };
  },
  webgpu({ oldLogprobs, rolloutLogprobs, actionMask, params }, be) {
    const [B, A] = oldLogprobs.shape;
    const keep = be.empty([B, A]);
    const weights = params.isLevel === null ? null : be.empty([B, A]);
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
    const w = weights ?? be.empty([1]);
    be.rt.dispatch(ROLLOUT_CORRECTION, [gpu(oldLogprobs), gpu(rolloutLogprobs), gpu(actionMask), gpu(w), gpu(keep)], u, [B]);
    return { weights, keep };
  },
  json: {
    // verl's argument names (compute_rollout_correction_and_rejection_mask) plus OpenRLHF's TIS floor.
    name: 'rollout_correction',
    async run(be, input) {
      const { shape, tensors } = bt(be, input, ['old_logprobs', 'rollout_logprobs']);
      const m = maskTensor(be, input, shape, 'old_logprobs');
      const spec = (field: string, fallback: number | null): number | string | null => {
        const v = input[field];
        if (v === undefined || v === null) return fallback;
        if (typeof v !== 'number' && typeof v !== 'string') throw new InputError(`field "${field}": a number or a "lower_upper" string`);
        return v;
      };
      const level = input.rollout_is === undefined || input.rollout_is === null ? null : choiceField(input, 'rollout_is', ROLLOUT_IS_LEVELS);
      const rs = input.rollout_rs === undefined || input.rollout_rs === null ? null : input.rollout_rs;
      if (rs !== null && typeof rs !== 'string') throw new InputError('field "rollout_rs": comma-separated options such as "token_k1,seq_mean_k3"');
      let params: RolloutCorrectionParams;
      try {
        const is = parseRolloutIsThreshold(spec('rollout_is_threshold', 2) as number | string);
        const rsSpec = spec('rollout_rs_threshold', null);
        if (rs !== null && rsSpec === null) throw new Error('rollout_rs_threshold: needed with rollout_rs');
        params = {
          isLevel: level,
          isUpper: is.upper,
          isLower: is.lower,
          tisLower: numberField(input, 'tis_lower', { min: 0, optional: true }),
          rs: rs === null ? [] : parseRolloutRs(rs, rsSpec as number | string),
        };
      } catch (e) {
        throw new InputError((e as Error).message);
      }
      const r = rolloutCorrection(be, { oldLogprobs: tensors[0], rolloutLogprobs: tensors[1], actionMask: m, params });
      const host = await jsonOutputs(be, { response_mask: r.keep, ...(r.weights ? { rollout_is_weights: r.weights } : {}) });
      const [old, rollout, mk] = await be.readMany([tensors[0], tensors[1], m]);
      // verl's rollout_corr/ metrics (host float64, src/reference/rolloutCorrection.ts), next to the tensors.
      const metrics = mk.some((x) => x !== 0) ? rolloutCorrMetricsRef(old, rollout, mk, shape[0], shape[1], params) : {};
      return { ...host, ...metrics };
    },
  },
});
