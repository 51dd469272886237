// Per-token KL estimators and their gradients wrt logp. Math: shaders/kl.wgsl's header;
// float64 reference: src/reference/kl.ts.
import type { Tensor } from '../backend/tensor.ts';
import { expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import type { GpuOpsHost } from '../backend/backend.ts';
import { kernel, type KernelSpec } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout, type FieldsOf } from '../gpu/uniforms.ts';
import { KL_ESTIMATOR_CODE } from '../reference/kernelCodes.ts';
import { klGradRef, klRef, KL_ESTIMATORS, type KlEstimator } from '../reference/kl.ts';
import { bt, choiceField, jsonOutputs } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';

export interface KlArgs {
  logprobs: Tensor; // (…) f32
  refLogprobs: Tensor; // the shape of logprobs, f32
  estimator: KlEstimator;
}

const WG = 64;
const KL_UNIFORM = uniformLayout('Params', { n: 'u32', estimator: 'u32' });
const KL_FORWARD = kernel({ shader: 'kl', entry: 'kl_forward', uniform: KL_UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });
const KL_BACKWARD = kernel({ ...KL_FORWARD, entry: 'kl_backward' });

const check = ({ logprobs, refLogprobs }: KlArgs) => expectShape('ref_logprobs', refLogprobs, logprobs.shape);

function dispatch(spec: KernelSpec<FieldsOf<typeof KL_UNIFORM>>, { logprobs, refLogprobs, estimator }: KlArgs, be: GpuOpsHost): Tensor {
  const out = be.empty(logprobs.shape);
  const u = { n: logprobs.size, estimator: KL_ESTIMATOR_CODE[estimator] };
  be.rt.dispatch(spec, [gpu(logprobs), gpu(refLogprobs), gpu(out)], u, [groups(logprobs.size, WG)]);
  return out;
}

/** Per-token KL estimate on d = logp − ref (docs/algorithms.md, Numerical conventions), element-wise. */
export const kl: Op<KlArgs, Tensor> = defineOp({
  name: 'kl',
  kernels: [KL_FORWARD],
  check,
  cpu: ({ logprobs, refLogprobs, estimator }) => new CpuTensor(klRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32'),
  webgpu: (args, be) => dispatch(KL_FORWARD, args, be),
  json: {
    name: 'kl',
    async run(be, input) {
      const { tensors } = bt(be, input, ['logprobs', 'ref_logprobs']);
      const estimator = choiceField(input, 'estimator', KL_ESTIMATORS);
      const args = { logprobs: tensors[0], refLogprobs: tensors[1], estimator };
      return jsonOutputs(be, { kl: kl(be, args), kl_grad: klGrad(be, args) });
    },
  },
  bench: { label: 'kl k3', run: (be, x) => kl(be, { logprobs: x.logp, refLogprobs: x.ref, estimator: 'k3' }) },
  selftest: {
    label: `kl (${KL_ESTIMATORS.join(', ')})`,
    async run(be) {
      // Fixed inputs chosen to exercise every branch: equal values, both signs of d, and a d far
      // outside k3's ±20 clamp. All are exact in float32, so the only error is the kernel's arithmetic.
      const LOGP = [-0.5, -1.25, -2, -0.125, -3, -40];
      const REF_LOGP = [-0.5, -1, -2.75, -0.625, -1.5, -0.25];
      const n = LOGP.length;
      const lp = be.tensor(LOGP, [1, n]);
      const rf = be.tensor(REF_LOGP, [1, n]);
      const outs = KL_ESTIMATORS.map((estimator) => kl(be, { logprobs: lp, refLogprobs: rf, estimator }));
      const got = await be.readMany(outs);
      be.dispose(lp, rf, ...outs);
      return { values: got.flatMap((g) => Array.from(g)), reference: KL_ESTIMATORS.flatMap((est) => Array.from(klRef(LOGP, REF_LOGP, est))) };
    },
  },
});

/** ∂kl/∂logp per token for the estimator (0 where a clamp is active), element-wise. */
export const klGrad: Op<KlArgs, Tensor> = defineOp({
  name: 'klGrad',
  kernels: [KL_BACKWARD],
  check,
  cpu: ({ logprobs, refLogprobs, estimator }) => new CpuTensor(klGradRef(cpu(logprobs).data, cpu(refLogprobs).data, estimator), logprobs.shape, 'f32'),
  webgpu: (args, be) => dispatch(KL_BACKWARD, args, be),
});
