// Token + position embeddings and their backward. Math: shaders/embedding.wgsl's header; float64
// reference: src/reference/nn/embedding.ts.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { addInto, cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { embeddingBackwardRef, embeddingRef } from '../reference/nn/embedding.ts';
import { sliceSeqRef } from '../reference/nn/slice.ts';
import { defineOp, type Op } from './op.ts';
import { checkSeq, checkSlice, seqDims } from './shapes.ts';

export interface EmbeddingArgs {
  tokens: Tensor; // (B, S) i32, flattened to R = B·S rows
  positions: Tensor; // (B, S) i32, clamped to [0, P − 1] (padding rows get position 0 by convention)
  wte: Tensor; // (V, D) f32
  wpe: Tensor; // (P, D) f32
}

export interface EmbeddingWindowArgs extends EmbeddingArgs {
  start: number; // the first column of tokens / positions
  len: number; // columns [start, start + len)
}

export interface EmbeddingBackwardArgs {
  gradOut: Tensor; // (R, D) f32
  tokens: Tensor; // (B, S) i32
  positions: Tensor; // (B, S) i32
  gradWte: Tensor; // (V, D) f32: += ∂/∂wte
  gradWpe: Tensor; // (P, D) f32: += ∂/∂wpe
}

const EMB_WG = 64;
const EMB_UNIFORM = uniformLayout('Params', { R: 'u32', D: 'u32', V: 'u32', P: 'u32', S: 'u32', start: 'u32', L: 'u32' });
const EMB_FORWARD = kernel({ shader: 'embedding', entry: 'embedding_forward', uniform: EMB_UNIFORM, storage: ['read', 'read', 'read', 'read', 'rw'], constants: { WG: EMB_WG } });
const EMB_BACKWARD = kernel({ shader: 'embedding', entry: 'embedding_backward', uniform: EMB_UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG: EMB_WG } });

function checkIds(op: string, { tokens, positions }: EmbeddingArgs): void {
  expectDType(`${op} tokens`, tokens, 'i32');
  expectDType(`${op} positions`, positions, 'i32');
  expectShape(`${op} positions`, positions, tokens.shape);
}

/** out[r,:] = wte[tokens[r],:] + wpe[positions[r],:] for every row r → (R, D) f32. */
export const embedding: Op<EmbeddingArgs, Tensor> = defineOp({
  name: 'embedding',
  kernels: [EMB_FORWARD],
  check(args) {
    checkIds('embedding', args);
    expectShape('embedding wpe', args.wpe, [args.wpe.shape[0], args.wte.shape[1]]);
  },
  cpu({ tokens, positions, wte, wpe }) {
    const [V, D] = wte.shape;
    const out = embeddingRef(cpu(tokens).data, cpu(positions).data, cpu(wte).data, cpu(wpe).data, V, wpe.shape[0], D);
    return new CpuTensor(out, [tokens.size, D], 'f32');
  },
  webgpu({ tokens, positions, wte, wpe }, be) {
    const [V, D] = wte.shape;
    const P = wpe.shape[0];
    const R = tokens.size;
    const out = be.empty([R, D]);
    const u = { R, D, V, P, S: R, start: 0, L: R };
    be.rt.dispatch(EMB_FORWARD, [gpu(tokens), gpu(positions), gpu(wte), gpu(wpe), gpu(out)], u, elementGrid(R * D, EMB_WG));
    return out;
  },
});

/**
 * embedding of the columns [start, start + len) of tokens / positions (B, S) → (B·len, D) f32: the
 * rollout's newest column in one dispatch (= embedding of sliceSeq(tokens), without the slice).
 */
export const embeddingWindow: Op<EmbeddingWindowArgs, Tensor> = defineOp({
  name: 'embeddingWindow',
  kernels: [EMB_FORWARD],
  check(args) {
    checkIds('embeddingWindow', args);
    const { S } = checkSeq('embeddingWindow tokens', args.tokens);
    checkSlice('embeddingWindow', S, args.start, args.len);
    expectShape('embeddingWindow wpe', args.wpe, [args.wpe.shape[0], args.wte.shape[1]]);
  },
  cpu({ tokens, positions, start, len, wte, wpe }) {
    const { B, S } = seqDims(tokens);
    const [V, D] = wte.shape;
    const P = wpe.shape[0];
    const tok = sliceSeqRef(cpu(tokens).data, B, S, 1, start, len);
    const pos = sliceSeqRef(cpu(positions).data, B, S, 1, start, len);
    return new CpuTensor(embeddingRef(tok, pos, cpu(wte).data, cpu(wpe).data, V, P, D), [B * len, D], 'f32');
  },
  webgpu({ tokens, positions, start, len, wte, wpe }, be) {
    const { B, S } = seqDims(tokens);
    const [V, D] = wte.shape;
    const P = wpe.shape[0];
    const R = B * len;
    const out = be.empty([R, D]);
    const u = { R, D, V, P, S, start, L: len };
    be.rt.dispatch(EMB_FORWARD, [gpu(tokens), gpu(positions), gpu(wte), gpu(wpe), gpu(out)], u, elementGrid(R * D, EMB_WG));
    return out;
  },
});

/** Accumulates into gradWte and gradWpe; deterministic (no float atomics). */
export const embeddingBackward: Op<EmbeddingBackwardArgs, void> = defineOp({
  name: 'embeddingBackward',
  kernels: [EMB_BACKWARD],
  check({ gradOut, tokens, positions, gradWte, gradWpe }) {
    expectDType('embeddingBackward tokens', tokens, 'i32');
    expectDType('embeddingBackward positions', positions, 'i32');
    expectShape('embeddingBackward positions', positions, tokens.shape);
    const D = gradWte.shape[1];
    expectShape('embeddingBackward gradWpe', gradWpe, [gradWpe.shape[0], D]);
    expectShape('embeddingBackward gradOut', gradOut, [tokens.size, D]);
  },
  cpu({ gradOut, tokens, positions, gradWte, gradWpe }) {
    const [V, D] = gradWte.shape;
    const P = gradWpe.shape[0];
    const g = embeddingBackwardRef(cpu(gradOut).data, cpu(tokens).data, cpu(positions).data, V, P, D);
    addInto(gradWte, g.gradWte);
    addInto(gradWpe, g.gradWpe);
  },
  webgpu({ gradOut, tokens, positions, gradWte, gradWpe }, be) {
    const [V, D] = gradWte.shape;
    const P = gradWpe.shape[0];
    const R = tokens.size;
    const u = { R, D, V, P, S: R, start: 0, L: R };
    // One thread per 8 columns of a table row (shaders/embedding.wgsl).
    be.rt.dispatch(EMB_BACKWARD, [gpu(tokens), gpu(positions), gpu(gradOut), gpu(gradWte), gpu(gradWpe)], u, elementGrid((V + P) * Math.ceil(D / 8), EMB_WG));
  },
});
