// Log-probabilities of the chosen tokens and the entropy per position, and their gradient wrt the
// logits. Math: shaders/logprobs.wgsl's header; float64 reference: src/reference/logprobs.ts.
import type { Tensor } from '../backend/tensor.ts';
import { expectDType, expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { logprobsBackwardRef, logprobsRef } from '../reference/logprobs.ts';
import { denseArray, InputError, jsonOutputs, numberField, sameShape } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';

export interface LogprobsArgs {
  logits: Tensor; // (B, A, V) f32
  tokens: Tensor; // (B, A) i32, the token each row scores
  temperature: number; // z = logits / T
}

export interface LogprobsResult {
  logprobs: Tensor; // (B, A) f32
  entropy: Tensor; // (B, A) f32
}

export interface LogprobsBackwardArgs extends LogprobsArgs {
  gradLogprobs: Tensor; // (B, A) f32
  gradEntropy?: Tensor | null; // (B, A) f32; none = 0
}

const WG = 64;
const LOGPROBS_UNIFORM = uniformLayout('Params', { A: 'u32', V: 'u32', temperature: 'f32', has_grad_entropy: 'u32', rows: 'u32' });
const LOGPROBS_FORWARD = kernel({ shader: 'logprobs', entry: 'logprobs_forward', uniform: LOGPROBS_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG } });
const LOGPROBS_BACKWARD = kernel({ shader: 'logprobs', entry: 'logprobs_backward', uniform: LOGPROBS_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG } });
/**
 * Vocabularies up to this size take one thread per row (no barriers: cheaper on CPU adapters and
 * plenty of threads on GPUs at the playground's sizes); larger ones a workgroup per row.
 */
export const LOGPROBS_ROWS_MAX_V = 256;
const LOGPROBS_ROWS_FORWARD = kernel({ ...LOGPROBS_FORWARD, entry: 'rows_forward' });
const LOGPROBS_ROWS_BACKWARD = kernel({ ...LOGPROBS_BACKWARD, entry: 'rows_backward' });

function checkLogprobsArgs({ logits, tokens, temperature }: LogprobsArgs): [number, number] {
  if (logits.shape.length !== 3 || logits.shape[2] < 1) throw new Error(`logits: expected shape (B, A, V) with V ≥ 1, got [${logits.shape.join(', ')}]`);
  const [B, A] = logits.shape;
  expectShape('tokens', tokens, [B, A]);
  expectDType('tokens', tokens, 'i32');
  if (!(Number.isFinite(temperature) && temperature > 0)) throw new Error(`temperature must be a finite number > 0, got ${temperature}`);
  return [B, A];
}

/**
 * z = logits / T; logprobs[b,a] = z[b,a,tokens[b,a]] − logsumexp(z[b,a,:]);
 * entropy[b,a] = logsumexp(z) − Σ_v softmax(z)_v · z_v.
 */
export const logprobs: Op<LogprobsArgs, LogprobsResult> = defineOp({
  name: 'logprobs',
  kernels: [LOGPROBS_FORWARD, LOGPROBS_ROWS_FORWARD],
  check: (args) => void checkLogprobsArgs(args),
  cpu({ logits, tokens, temperature }) {
    const [B, A, V] = logits.shape;
    const r = logprobsRef(cpu(logits).data, cpu(tokens).data, B, A, V, temperature);
    return { logprobs: new CpuTensor(r.logprobs, [B, A], 'f32'), entropy: new CpuTensor(r.entropy, [B, A], 'f32') };
  },
  webgpu({ logits, tokens, temperature }, be) {
    const [B, A, V] = logits.shape;
    const logprobs = be.empty([B, A]);
    const entropy = be.empty([B, A]);
    const u = { A, V, temperature, has_grad_entropy: 0, rows: B * A };
    const bufs = [gpu(logits), gpu(tokens), gpu(logprobs), gpu(entropy)];
    if (V <= LOGPROBS_ROWS_MAX_V) be.rt.dispatch(LOGPROBS_ROWS_FORWARD, bufs, u, elementGrid(B * A, WG));
    else be.rt.dispatch(LOGPROBS_FORWARD, bufs, u, [A, B]);
    return { logprobs, entropy };
  },
  json: {
    name: 'logprobs',
    async run(be, input) {
      const logits = denseArray(input, 'logits', 3);
      const tokens = denseArray(input, 'tokens', 2, { integer: true });
      const [B, T, V] = logits.shape;
      sameShape('tokens', tokens, [B, T], 'logits (first two dimensions)');
      tokens.data.forEach((t, i) => {
        if (t < 0 || t >= V) throw new InputError(`field "tokens": element ${i} is ${t}, outside the vocabulary [0, ${V - 1}]`);
      });
      const temperature = numberField(input, 'temperature', { min: 0, exclusiveMin: true })!;
      const r = logprobs(be, { logits: be.tensor(logits.data, logits.shape), tokens: be.tensor(tokens.data, tokens.shape, 'i32'), temperature });
      return jsonOutputs(be, { logprobs: r.logprobs, entropy: r.entropy });
    },
  },
  bench: { label: 'logprobs (fwd)', run: (be, x) => logprobs(be, { logits: x.logits, tokens: x.tokens, temperature: 0.9 }) },
});

/** Gradient wrt logits: (1/T)·[gLogp·(onehot − p) − gEnt·p·(z − Σ p z)] → (B, A, V) f32. */
export const logprobsBackward: Op<LogprobsBackwardArgs, Tensor> = defineOp({
  name: 'logprobsBackward',
  kernels: [LOGPROBS_BACKWARD, LOGPROBS_ROWS_BACKWARD],
  check(args) {
    const [B, A] = checkLogprobsArgs(args);
    expectShape('grad_logprobs', args.gradLogprobs, [B, A]);
    if (args.gradEntropy) expectShape('grad_entropy', args.gradEntropy, [B, A]);
  },
  cpu({ logits, tokens, temperature, gradLogprobs, gradEntropy }) {
    const [B, A, V] = logits.shape;
    const g = logprobsBackwardRef(cpu(logits).data, cpu(tokens).data, B, A, V, temperature, cpu(gradLogprobs).data, gradEntropy ? cpu(gradEntropy).data : null);
    return new CpuTensor(g, [B, A, V], 'f32');
  },
  webgpu({ logits, tokens, temperature, gradLogprobs, gradEntropy }, be) {
    const [B, A, V] = logits.shape;
    const out = be.empty([B, A, V]);
    const u = { A, V, temperature, has_grad_entropy: gradEntropy ? 1 : 0, rows: B * A };
    // Without an entropy gradient its binding gets gradLogprobs (read-only aliasing is allowed; not read).
    const ge = gpu(gradEntropy ?? gradLogprobs);
    const bufs = [gpu(logits), gpu(tokens), gpu(gradLogprobs), ge, gpu(out)];
    if (V <= LOGPROBS_ROWS_MAX_V) be.rt.dispatch(LOGPROBS_ROWS_BACKWARD, bufs, u, elementGrid(B * A, WG));
    else be.rt.dispatch(LOGPROBS_BACKWARD, bufs, u, [A, B]);
    return out;
  },
  bench: {
    label: 'logprobs (bwd)',
    run: (be, x) => logprobsBackward(be, { logits: x.logits, tokens: x.tokens, temperature: 0.9, gradLogprobs: x.adv, gradEntropy: x.values }),
  },
});
