// The one place op arguments are checked. Both backends put their op families behind `checked()`
// (as tfjs-core's ops check before any kernel runs), so a bad shape, dtype or parameter fails the
// same way, with the same message naming the argument, on the CPU reference and on WebGPU, and
// before anything is recorded; the backends themselves only compute. Every op of PpoOps, NnOps and
// SeqOps has an entry (the tables are complete by type: a new op does not compile without one).
import type { NnOps } from './nnOps.ts';
import { kvStride, type BlockOffsets, type SeqOps } from './seqOps.ts';
import { expectDType, expectShape, type Tensor } from './tensor.ts';
import { ATTN_MAX_DH, ATTN_MAX_S, SAMPLE_MAX_V } from './shapes.ts';

/** A check per op: throws on bad arguments, returns nothing; null where the types say it all. */
export type OpChecks<T> = { [K in keyof T]: T[K] extends (...args: infer P) => unknown ? ((...args: P) => void) | null : never };

/** `inner`'s ops, each running its check first and handing its result to `track` (Backend.scope). */
export function checked<T extends object>(inner: T, checks: OpChecks<T>, track: <R>(result: R) => R = (r) => r): T {
  const out: Record<string, unknown> = {};
  const ops = inner as Record<string, unknown>;
  for (const name of Object.keys(checks)) {
    const op = ops[name];
    if (typeof op !== 'function') throw new Error(`checked: ${name} is not an op of ${inner.constructor.name}`);
    const run = op.bind(inner) as (...a: unknown[]) => unknown;
    const check = (checks as Record<string, ((...a: unknown[]) => void) | null>)[name];
    out[name] = check
      ? (...a: unknown[]) => {
          check(...a);
          return track(run(...a));
        }
      : (...a: unknown[]) => track(run(...a));
  }
  return out as T;
}

/** Backend.reshape keeps the element count. */
export function checkReshape(t: Tensor, shape: readonly number[]): void {
  const n = shape.reduce((a, b) => a * b, 1);
  if (n !== t.size) throw new Error(`reshape: [${t.shape.join(', ')}] → [${shape.join(', ')}] changes the size`);
}

function expectSize(name: string, t: Tensor, size: number): void {
  if (t.size !== size) throw new Error(`${name}: expected ${size} elements, got ${t.size}`);
}

/** A row gather of x by index: the kernels move 32-bit words, so f32 and i32 work (a dtype of another width would not). */
function checkGather(name: string, x: Tensor, index: Tensor): void {
  expectDType(`${name.split(' ')[0]} index`, index, 'i32');
  if (x.dtype !== 'f32' && x.dtype !== 'i32') throw new Error(`${name}: expected dtype f32 or i32, got ${String(x.dtype)}`);
  if (x.shape.length < 1) throw new Error(`${name}: expected at least 1 dimension`);
}

// ---- dense-layer ops ----

function expectRank1Plus(name: string, t: Tensor): void {
  if (t.shape.length < 1) throw new Error(`${name}: expected at least 1 dimension`);
}

/** a (…,K), b (K,N) or (N,K) when transB, bias (N) → the output shape (…,N). */
function checkMatmul(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): number[] {
  expectRank1Plus('matmul a', a);
  const K = a.shape[a.shape.length - 1];
  if (b.shape.length !== 2) throw new Error(`matmul b: expected 2 dimensions, got [${b.shape.join(', ')}]`);
  const N = transB ? b.shape[0] : b.shape[1];
  expectShape('matmul b', b, transB ? [N, K] : [K, N]);
  if (bias) expectShape('matmul bias', bias, [N]);
  return [...a.shape.slice(0, -1), N];
}

/** x (B,S,D) or (B,S). */
function checkSeq(name: string, x: Tensor): { B: number; S: number } {
  if (x.shape.length !== 2 && x.shape.length !== 3) throw new Error(`${name}: expected (B,S) or (B,S,D), got [${x.shape.join(', ')}]`);
  return { B: x.shape[0], S: x.shape[1] };
}

function checkSlice(name: string, S: number, start: number, len: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(len) || start < 0 || len < 0 || start + len > S) {
    throw new Error(`${name}: slice [${start}, ${start + len}) outside a sequence of ${S}`);
  }
}

function checkLayerNormParams(op: string, x: Tensor, gamma: Tensor): number {
  expectRank1Plus(`${op} x`, x);
  const D = x.shape[x.shape.length - 1];
  expectShape(`${op} gamma`, gamma, [D]);
  return D;
}

export const NN_CHECKS: OpChecks<NnOps> = {
  matmul: (a, b, bias, transB) => void checkMatmul(a, b, bias, transB),
  matmulGelu: (a, b, bias, transB) => void checkMatmul(a, b, bias, transB),
  matmulResidual: (a, b, bias, transB, residual) => expectShape('matmulResidual residual', residual, checkMatmul(a, b, bias, transB)),
  matmulBackward(gradOut, a, b, transB, gradB, gradBias) {
    const outShape = checkMatmul(a, b, null, transB);
    expectShape('matmulBackward gradOut', gradOut, outShape);
    if (gradB) expectShape('matmulBackward gradB', gradB, b.shape);
    if (gradBias) expectShape('matmulBackward gradBias', gradBias, [outShape[outShape.length - 1]]);
  },
  layerNorm(x, gamma, beta) {
    const D = checkLayerNormParams('layerNorm', x, gamma);
    expectShape('layerNorm beta', beta, [D]);
  },
  layerNormBackward(gradY, x, gamma, mean, rstd, gradGamma, gradBeta, into) {
    expectRank1Plus('layerNormBackward x', x);
    const D = x.shape[x.shape.length - 1];
    const M = D === 0 ? 0 : x.size / D;
    expectShape('layerNormBackward gradY', gradY, x.shape);
    expectShape('layerNormBackward gamma', gamma, [D]);
    expectShape('layerNormBackward mean', mean, [M]);
    expectShape('layerNormBackward rstd', rstd, [M]);
    expectShape('layerNormBackward gradGamma', gradGamma, [D]);
    expectShape('layerNormBackward gradBeta', gradBeta, [D]);
    if (into) {
      expectShape('layerNormBackward into', into, x.shape);
      expectDType('layerNormBackward into', into, 'f32');
    }
  },
  gelu: null,
  geluBackward: (gradY, x) => expectShape('geluBackward gradY', gradY, x.shape),
  add: (a, b) => expectShape('add b', b, a.shape),
  mul(a, b) {
    expectDType('mul a', a, 'f32');
    expectDType('mul b', b, 'f32');
    expectShape('mul b', b, a.shape);
  },
  axpy: (_alpha, x, y) => expectSize('axpy y', y, x.size),
  scale: null,
  fill: null,
  embedding(tokens, positions, wte, wpe) {
    expectDType('embedding tokens', tokens, 'i32');
    expectDType('embedding positions', positions, 'i32');
    expectShape('embedding positions', positions, tokens.shape);
    expectShape('embedding wpe', wpe, [wpe.shape[0], wte.shape[1]]);
  },
  embeddingWindow(tokens, positions, start, len, wte, wpe) {
    expectDType('embeddingWindow tokens', tokens, 'i32');
    expectDType('embeddingWindow positions', positions, 'i32');
    expectShape('embeddingWindow positions', positions, tokens.shape);
    const { S } = checkSeq('embeddingWindow tokens', tokens);
    checkSlice('embeddingWindow', S, start, len);
    expectShape('embeddingWindow wpe', wpe, [wpe.shape[0], wte.shape[1]]);
  },
  embeddingBackward(gradOut, tokens, positions, gradWte, gradWpe) {
    expectDType('embeddingBackward tokens', tokens, 'i32');
    expectDType('embeddingBackward positions', positions, 'i32');
    expectShape('embeddingBackward positions', positions, tokens.shape);
    const D = gradWte.shape[1];
    expectShape('embeddingBackward gradWpe', gradWpe, [gradWpe.shape[0], D]);
    expectShape('embeddingBackward gradOut', gradOut, [tokens.size, D]);
  },
  sliceSeq(x, start, len) {
    const { S } = checkSeq('sliceSeq x', x);
    checkSlice('sliceSeq', S, start, len);
  },
  sliceSeqBackward(grad, seqLen, start) {
    const { S: len } = checkSeq('sliceSeqBackward grad', grad);
    checkSlice('sliceSeqBackward', seqLen, start, len);
  },
  gatherRows(x, index) {
    checkGather('gatherRows', x, index);
  },
  gatherRowsMany(xs, index) {
    if (xs.length === 0) throw new Error('gatherRowsMany xs: expected at least one tensor');
    xs.forEach((x, k) => {
      checkGather(`gatherRowsMany xs[${k}]`, x, index);
      if (x.shape[0] !== xs[0].shape[0]) throw new Error(`gatherRowsMany xs[${k}]: expected ${xs[0].shape[0]} rows like xs[0], got ${x.shape[0]}`);
    });
  },
  gradNorm: null,
  adamw(params, grads, m, v, decayMask, gradNorm, hp) {
    for (const [name, t] of [
      ['grads', grads],
      ['m', m],
      ['v', v],
      ['decayMask', decayMask],
    ] as const)
      expectSize(`adamw ${name}`, t, params.size);
    if (gradNorm) expectSize('adamw gradNorm', gradNorm, 1);
    if (!(hp.step >= 1)) throw new Error(`adamw: step must be ≥ 1 (1-based), got ${hp.step}`);
  },
};

// ---- sequence ops: B sequences, S positions, D = H·Dh model width ----

function checkHeadWidth(D: number, nHead: number): void {
  if (!Number.isInteger(nHead) || nHead < 1 || D % nHead !== 0) throw new Error(`attention: width ${D} is not divisible by ${nHead} heads`);
  const Dh = D / nHead;
  if (Dh > ATTN_MAX_DH) throw new Error(`attention: head width ${Dh} exceeds ${ATTN_MAX_DH}`);
}

export const SEQ_CHECKS: OpChecks<SeqOps> = {
  decodeStep(params, m, kv, sequences, positions, attnMask, pos) {
    if (sequences.shape.length !== 2) throw new Error(`decodeStep sequences: expected (B, Smax), got [${sequences.shape.join(', ')}]`);
    const [B, Smax] = sequences.shape;
    expectDType('decodeStep sequences', sequences, 'i32');
    expectDType('decodeStep positions', positions, 'i32');
    expectShape('decodeStep positions', positions, [B, Smax]);
    expectShape('decodeStep attnMask', attnMask, [B, Smax]);
    const D = m.dModel;
    const H = m.nHead;
    if (!(D >= 1 && D <= 256) || D % H !== 0 || D / H > 64) throw new Error(`decodeStep: dModel ${D} with ${H} heads: need dModel ≤ 256 divisible by nHead, head width ≤ 64`);
    if (Smax > ATTN_MAX_S || H * Smax > 1024) throw new Error(`decodeStep: ${H} heads × cache length ${Smax} exceeds the kernel's 1024 scores (Smax ≤ ${ATTN_MAX_S})`);
    if (!Number.isInteger(pos) || pos < 0 || pos >= Smax) throw new Error(`decodeStep: pos ${pos} outside [0, ${Smax})`);
    if (m.blocks.length !== m.nLayer) throw new Error(`decodeStep: ${m.blocks.length} block offsets for ${m.nLayer} layers`);
    const stride = kvStride(B, Smax, D);
    expectShape('decodeStep kv', kv, [2 * m.nLayer * stride]);
    const V = m.vocabSize;
    const spans: [string, number, number][] = [
      ['wte', m.wte, V * D],
      ['wpe', m.wpe, m.maxPos * D],
      ['ln_f.weight', m.lnfG, D],
      ['ln_f.bias', m.lnfB, D],
    ];
    m.blocks.forEach((o, l) => {
      const sizes: Record<keyof BlockOffsets, number> = {
        ln1G: D,
        ln1B: D,
        attnW: 3 * D * D,
        attnB: 3 * D,
        projW: D * D,
        projB: D,
        ln2G: D,
        ln2B: D,
        fcW: 4 * D * D,
        fcB: 4 * D,
        mlpW: 4 * D * D,
        mlpB: D,
      };
      for (const k of Object.keys(sizes) as (keyof BlockOffsets)[]) spans.push([`block ${l} ${k}`, o[k], sizes[k]]);
    });
    for (const [name, off, n] of spans) {
      if (!Number.isInteger(off) || off < 0 || off + n > params.size) throw new Error(`decodeStep: ${name} [${off}, ${off + n}) outside the ${params.size} parameters`);
    }
  },
  attention(qkv, attnMask, nHead) {
    if (attnMask.shape.length !== 2) throw new Error(`attnMask: expected (B, S), got [${attnMask.shape.join(', ')}]`);
    const [B, S] = attnMask.shape;
    if (S > ATTN_MAX_S) throw new Error(`attention: sequence length ${S} exceeds ${ATTN_MAX_S}`);
    if (qkv.shape.length !== 2 || qkv.shape[1] % 3 !== 0) throw new Error(`qkv: expected (B·S, 3D), got [${qkv.shape.join(', ')}]`);
    const D = qkv.shape[1] / 3;
    expectShape('qkv', qkv, [B * S, 3 * D]);
    checkHeadWidth(D, nHead);
  },
  attentionBackward(gradOut, qkv, probs, out, nHead) {
    const [B, , S] = probs.shape;
    const D = qkv.shape[1] / 3;
    expectShape('probs', probs, [B, nHead, S, S]);
    expectShape('qkv', qkv, [B * S, 3 * D]);
    expectShape('gradOut', gradOut, [B * S, D]);
    expectShape('out', out, [B * S, D]);
  },
  attentionCached(qkv, kCache, vCache, attnMask, start, nHead) {
    if (kCache.shape.length !== 3) throw new Error(`kCache: expected (B, Smax, D), got [${kCache.shape.join(', ')}]`);
    const [B, Smax, D] = kCache.shape;
    if (Smax > ATTN_MAX_S) throw new Error(`attentionCached: cache length ${Smax} exceeds ${ATTN_MAX_S}`);
    expectShape('vCache', vCache, [B, Smax, D]);
    expectShape('attnMask', attnMask, [B, Smax]);
    if (qkv.shape.length !== 2 || qkv.shape[1] !== 3 * D || qkv.shape[0] % Math.max(B, 1) !== 0) {
      throw new Error(`qkv: expected (B·L, ${3 * D}), got [${qkv.shape.join(', ')}]`);
    }
    const L = B > 0 ? qkv.shape[0] / B : 0;
    if (!Number.isInteger(start) || start < 0 || start + L > Smax) throw new Error(`attentionCached: positions [${start}, ${start + L}) outside the cache of ${Smax}`);
    checkHeadWidth(D, nHead);
  },
  sampleStep(logits, sequences, attnMask, positions, finished, pos, params, logprobs) {
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
};
