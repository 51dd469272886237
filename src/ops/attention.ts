// Causal multi-head self-attention over full sequences and its backward. D = H·Dh model width.
// Math: shaders/attention.wgsl's and shaders/attention_backward.wgsl's headers; float64
// reference: src/reference/seq/attention.ts.
import { expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { attentionBackwardRef, attentionRef } from '../reference/seq/attention.ts';
import { defineOp, type Op } from './op.ts';

export interface AttentionArgs {
  qkv: Tensor; // (B·S, 3D) f32: q | k | v per row
  attnMask: Tensor; // (B, S) f32, 1 = a real token
  nHead: number; // H
}

export interface AttentionResult {
  out: Tensor; // (B·S, D) f32
  probs: Tensor; // (B, H, S, S) f32, kept for the backward
}

export interface AttentionBackwardArgs {
  gradOut: Tensor; // (B·S, D) f32
  qkv: Tensor; // (B·S, 3D) f32, the forward's input
  probs: Tensor; // (B, H, S, S) f32, the forward's probabilities
  out: Tensor; // (B·S, D) f32, the forward's output (the softmax backward's row sums are dO·out)
  nHead: number;
}

/** The largest sequence length and head width the attention kernels take. */
export const ATTN_MAX_S = 128;
export const ATTN_MAX_DH = 64;

// One thread per block of 4 queries (see the shader headers for why).
const WG = 64;
const ATTN_UNIFORM = uniformLayout('Params', { S: 'u32', H: 'u32', D: 'u32', scale: 'f32', total: 'u32' });
const ATTN_BACKWARD_UNIFORM = uniformLayout('Params', { S: 'u32', H: 'u32', D: 'u32', scale: 'f32', nq: 'u32', total: 'u32', region1: 'u32' });
const ATTN_FORWARD = kernel({ shader: 'attention', entry: 'attention_forward', uniform: ATTN_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG } });
const ATTN_BACKWARD = kernel({
  shader: 'attention_backward',
  entry: 'attention_backward',
  uniform: ATTN_BACKWARD_UNIFORM,
  storage: ['read', 'read', 'read', 'rw', 'rw', 'read'],
  constants: { WG },
});

/** D must split into nHead heads of at most ATTN_MAX_DH. */
export function checkHeadWidth(D: number, nHead: number): void {
  if (!Number.isInteger(nHead) || nHead < 1 || D % nHead !== 0) throw new Error(`attention: width ${D} is not divisible by ${nHead} heads`);
  const Dh = D / nHead;
  if (Dh > ATTN_MAX_DH) throw new Error(`attention: head width ${Dh} exceeds ${ATTN_MAX_DH}`);
}

/**
 * Query i attends to keys j ≤ i with attnMask[b,j] = 1, scaled by 1/√Dh; a query with no visible
 * key outputs zeros.
 */
export const attention: Op<AttentionArgs, AttentionResult> = defineOp({
  name: 'attention',
  kernels: [ATTN_FORWARD],
  check({ qkv, attnMask, nHead }) {
    if (attnMask.shape.length !== 2) throw new Error(`attnMask: expected (B, S), got [${attnMask.shape.join(', ')}]`);
    const [B, S] = attnMask.shape;
    if (S > ATTN_MAX_S) throw new Error(`attention: sequence length ${S} exceeds ${ATTN_MAX_S}`);
    if (qkv.shape.length !== 2 || qkv.shape[1] % 3 !== 0) throw new Error(`qkv: expected (B·S, 3D), got [${qkv.shape.join(', ')}]`);
    const D = qkv.shape[1] / 3;
    expectShape('qkv', qkv, [B * S, 3 * D]);
    checkHeadWidth(D, nHead);
  },
  cpu({ qkv, attnMask, nHead: H }) {
    const [B, S] = attnMask.shape;
    const D = qkv.shape[1] / 3;
    const { out, probs } = attentionRef(cpu(qkv).data, cpu(attnMask).data, { B, S, H, D });
    return { out: new CpuTensor(out, [B * S, D], 'f32'), probs: new CpuTensor(probs, [B, H, S, S], 'f32') };
  },
  webgpu({ qkv, attnMask, nHead: H }, be) {
    const [B, S] = attnMask.shape;
    const D = qkv.shape[1] / 3;
    const out = be.empty([B * S, D]);
    const probs = be.empty([B, H, S, S]);
    const threads = B * H * Math.ceil(S / 4); // one per block of 4 queries
    const u = { S, H, D, scale: 1 / Math.sqrt(D / H), total: threads };
    be.rt.dispatch(ATTN_FORWARD, [gpu(qkv), gpu(attnMask), gpu(out), gpu(probs)], u, elementGrid(threads, WG));
    return { out, probs };
  },
});

/** gradQkv (B·S, 3D) f32 from gradOut and the forward's probabilities and output on the same qkv and mask. */
export const attentionBackward: Op<AttentionBackwardArgs, Tensor> = defineOp({
  name: 'attentionBackward',
  kernels: [ATTN_BACKWARD],
  check({ gradOut, qkv, probs, out, nHead }) {
    const [B, , S] = probs.shape;
    const D = qkv.shape[1] / 3;
    expectShape('probs', probs, [B, nHead, S, S]);
    expectShape('qkv', qkv, [B * S, 3 * D]);
    expectShape('gradOut', gradOut, [B * S, D]);
    expectShape('out', out, [B * S, D]);
  },
  cpu({ gradOut, qkv, probs }) {
    // The float64 reference sums the softmax backward's row terms from P and dP itself (no need for out).
    // H = nHead (checked): read from probs (B,H,S,S).
    const [B, H, S] = probs.shape;
    const D = qkv.shape[1] / 3;
    const g = attentionBackwardRef(cpu(gradOut).data, cpu(qkv).data, cpu(probs).data, { B, S, H, D });
    return new CpuTensor(g, [B * S, 3 * D], 'f32');
  },
  webgpu({ gradOut, qkv, probs, out }, be) {
    // H = nHead (checked): read from probs (B,H,S,S).
    const [B, H, S] = probs.shape;
    const D = qkv.shape[1] / 3;
    const Dh = D / H;
    const gradQkv = be.empty([B * S, 3 * D]);
    const dscores = be.empty([2, B, H, S, S]); // f32 scratch: the query threads' dS, the key threads' dSᵀ
    const nq = B * H * Math.ceil(S / 4); // query threads, then as many key threads
    const u = { S, H, D, scale: 1 / Math.sqrt(Dh), nq, total: 2 * nq, region1: B * H * S * S };
    be.rt.dispatch(ATTN_BACKWARD, [gpu(gradOut), gpu(qkv), gpu(probs), gpu(dscores), gpu(gradQkv), gpu(out)], u, elementGrid(2 * nq, WG));
    // Later users of the pooled buffer are recorded after this dispatch, so they run after it.
    be.dispose(dscores);
    return gradQkv;
  },
});
