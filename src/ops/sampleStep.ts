// One sampling step for every row of a batch, all on the device (no readback per token).
// Math: shaders/sample.wgsl's header; float64 reference: src/reference/seq/sample.ts.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { sampleStepRef, type SampleParams } from '../reference/seq/sample.ts';
import { defineOp, type Op } from './op.ts';

export interface SampleStepArgs {
  logits: Tensor; // (B, V) f32, for position `pos`
  sequences: Tensor; // (B, S) i32, in place
  attnMask: Tensor; // (B, S) f32, in place
  positions: Tensor; // (B, S) i32, in place
  finished: Tensor; // (B) i32, in place
  pos: number;
  params: SampleParams;
  /**
   * (B, S) f32: receives at [b, pos] the log-probability of the drawn token under the distribution
   * actually sampled from (after temperature, top-k, top-p renormalisation); 0 where the row had
   * already finished.
   */
  logprobs?: Tensor | null;
}

/** The largest vocabulary the sampling kernel takes. */
export const SAMPLE_MAX_V = 1024;

const WG = 64;
const SAMPLE_UNIFORM = uniformLayout('Params', {
  B: 'u32',
  V: 'u32',
  S: 'u32',
  pos: 'u32',
  top_k: 'u32',
  top_p: 'f32',
  temperature: 'f32',
  seed: 'u32',
  eos: 'i32',
  pad: 'i32',
  has_logprobs: 'u32',
});
/** One token step of every row: rank the vocabulary, then draw (one workgroup per row). */
const SAMPLE_STEP = kernel({ shader: 'sample', entry: 'sample_step', uniform: SAMPLE_UNIFORM, storage: ['read', 'rw', 'rw', 'rw', 'rw', 'rw', 'rw'], constants: { WG } });

/**
 * Where finished[b] = 0, draws a token (temperature, top-k, top-p) and writes
 * sequences[b,pos] = token, attnMask[b,pos] = 1, positions[b,pos] = positions[b,pos−1] + 1, and
 * finished[b] = 1 if the token is EOS; where finished[b] = 1 writes PAD, 0, 0.
 */
export const sampleStep: Op<SampleStepArgs, void> = defineOp({
  name: 'sampleStep',
  kernels: [SAMPLE_STEP],
  check({ logits, sequences, attnMask, positions, finished, pos, params, logprobs }) {
    if (logits.shape.length !== 2) throw new Error(`logits: expected (B, V), got [${logits.shape.join(', ')}]`);
    const [B, V] = logits.shape;
    if (V > SAMPLE_MAX_V) throw new Error(`sampleStep: vocabulary ${V} exceeds ${SAMPLE_MAX_V}`);
    if (sequences.shape.length !== 2) throw new Error(`sequences: expected (B, S), got [${sequences.shape.join(', ')}]`);
    const S = sequences.shape[1];
    expectShape('sequences', sequences, [B, S]);
    expectShape('attnMask', attnMask, [B, S]);
    expectShape('positions', positions, [B, S]);
    expectShape('finished', finished, [B]);
    expectDType('sequences', sequences, 'i32');
    expectDType('attnMask', attnMask, 'f32');
    expectDType('positions', positions, 'i32');
    expectDType('finished', finished, 'i32');
    if (!Number.isInteger(pos) || pos < 0 || pos >= S) throw new Error(`sampleStep: position ${pos} outside [0, ${S})`);
    if (!(params.temperature > 0)) throw new Error(`sampleStep: temperature must be > 0, got ${params.temperature}`);
    if (!(params.topP > 0)) throw new Error(`sampleStep: topP must be > 0, got ${params.topP}`);
    if (!Number.isInteger(params.topK) || params.topK < 0) throw new Error(`sampleStep: topK must be a non-negative integer, got ${params.topK}`);
    if (logprobs) expectShape('logprobs', logprobs, [B, S]);
  },
  cpu({ logits, sequences, attnMask, positions, finished, pos, params, logprobs }) {
    const [B, V] = logits.shape;
    const dims = { B, V, S: sequences.shape[1] };
    sampleStepRef(cpu(logits).data, cpu(sequences).data, cpu(attnMask).data, cpu(positions).data, cpu(finished).data, dims, pos, params, logprobs ? cpu(logprobs).data : null);
  },
  webgpu({ logits, sequences, attnMask, positions, finished, pos, params, logprobs }, be) {
    const [B, V] = logits.shape;
    const S = sequences.shape[1];
    const stats = be.empty([B, 3 * V]); // (B, 3V) f32 [weight | mass before | rank → kept weight]
    const u = {
      B,
      V,
      S,
      pos,
      top_k: params.topK,
      top_p: params.topP,
      temperature: params.temperature,
      seed: params.seed,
      eos: params.eosId,
      pad: params.padId,
      has_logprobs: logprobs ? 1 : 0,
    };
    // Without a logprobs tensor the kernel writes nothing there; a one-element scratch fills the binding.
    const lp = logprobs ?? be.empty([1]);
    const bufs = [gpu(logits), gpu(finished), gpu(stats), gpu(sequences), gpu(attnMask), gpu(positions), gpu(lp)];
    if (B > 65535) throw new Error(`sampleStep: ${B} rows exceed one workgroup per row (at most 65535)`);
    be.rt.dispatch(SAMPLE_STEP, bufs, u, [B]);
    be.dispose(stats, lp === logprobs ? null : lp);
  },
});
