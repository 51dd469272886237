// float64 forward of a whole Hugging Face causal LM (Llama, Qwen2, Qwen3, GPT-2), built from the op
// references beside it: the CPU oracle of the model, of its kernels' composition and of
// `npm run logprobs`. One block, per transformers' modeling_<family>.py:
//   h   = x + o(attn(rope(qn(q(n1(x)))), rope(kn(k(n1(x)))), v(n1(x))))      n1 = input norm
//   out = h + mlp(n2(h))                                                      n2 = post-attention norm
//   mlp = down(silu(gate(·))·up(·))  (gated)   or   down(gelu_tanh(up(·)))  (GPT-2's c_fc, c_proj)
// qn/kn (Qwen3's q_norm/k_norm: RMSNorm over head_dim per head) and rope only where the family has them;
// GPT-2 adds learned position rows to the embedding instead of rope. Then the final norm and the head.
// Every linear here is nn.Linear-shaped: w (out, in), y = x·wᵀ + b. The loader transposes Conv1D
// weights and splits GPT-2's fused c_attn before they reach this file (src/model/hf/referenceWeights.ts).
import { geluValue } from '../nn/gelu.ts';
import { layerNormRef } from '../nn/layernorm.ts';
import { rmsNormRef } from '../nn/rmsnorm.ts';
import { ropeInvFreq, ropeRef, type Llama3Scaling } from '../nn/rope.ts';
import { siluValue } from '../nn/swiglu.ts';
import { gqaAttentionRef } from '../seq/gqa.ts';
import { logprobsRef } from '../logprobs.ts';

/** What the forward needs of a model's shape (src/model/hf/arch.ts HfArch is one). */
export interface RefArch {
  nLayer: number;
  dModel: number;
  nHead: number;
  nKvHead: number;
  headDim: number;
  dFf: number;
  vocab: number;
  maxPositions: number;
  norm: { kind: 'rms' | 'layer'; eps: number };
  positions: 'rope' | 'learned';
  rope: { theta: number; scaling: Llama3Scaling | null } | null;
  qkNorm: boolean;
  mlp: 'gated' | 'plain';
  act: 'silu' | 'gelu_tanh';
  attnScale: number;
}

/** y = x·wᵀ + b with w (out, in). */
export interface RefLinear {
  w: Float64Array;
  b: Float64Array | null;
  out: number;
  in: number;
}

/** RMSNorm (b null) or LayerNorm weights (D). */
export interface RefNorm {
  w: Float64Array;
  b: Float64Array | null;
}

export interface RefLayer {
  inputNorm: RefNorm;
  q: RefLinear;
  k: RefLinear;
  v: RefLinear;
  o: RefLinear;
  /** Qwen3: (headDim) each; null otherwise. */
  qNorm: Float64Array | null;
  kNorm: Float64Array | null;
  postNorm: RefNorm;
  /** Gated MLP only. */
  gate: RefLinear | null;
  up: RefLinear;
  down: RefLinear;
}

export interface RefWeights {
  embed: Float64Array; // (V, D)
  /** GPT-2's learned positions (P, D); null with rope. */
  positions: Float64Array | null;
  layers: RefLayer[];
  finalNorm: RefNorm;
  /** (V, D): lm_head, or the embedding itself when tied. */
  lmHead: Float64Array;
}

export function linearRef(x: ArrayLike<number>, M: number, l: RefLinear): Float64Array {
  const y = new Float64Array(M * l.out);
  for (let m = 0; m < M; m++) {
    for (let o = 0; o < l.out; o++) {
      let s = l.b ? l.b[o] : 0;
      const wo = o * l.in;
      const xm = m * l.in;
      for (let i = 0; i < l.in; i++) s += x[xm + i] * l.w[wo + i];
      y[m * l.out + o] = s;
    }
  }
  return y;
}

function norm(a: RefArch, x: ArrayLike<number>, M: number, D: number, n: RefNorm): Float64Array {
  if (a.norm.kind === 'rms') return rmsNormRef(x, n.w, M, D, a.norm.eps).y;
  return layerNormRef(x, n.w, n.b ?? new Float64Array(D), M, D, a.norm.eps).y;
}

function clampPosition(a: RefArch, p: number): number {
  if (!Number.isInteger(p) || p < 0 || p >= a.maxPositions) throw new Error(`position ${p} is outside [0, ${a.maxPositions}) (max_position_embeddings)`);
  return p;
}

export interface ForwardOut {
  /** (B, S, V) */
  logits: Float64Array;
  /** Final-norm hidden states (B, S, D): what the LM head (and a value head) reads. */
  hidden: Float64Array;
}

/** tokens, mask, positions (B, S) (left-padded rows) → logits (B, S, V); logits at t score token t + 1. */
export function hfForwardRef(a: RefArch, w: RefWeights, tokens: ArrayLike<number>, mask: ArrayLike<number>, positions: ArrayLike<number>, B: number, S: number): ForwardOut {
  const R = B * S;
  const D = a.dModel;
  if (tokens.length !== R || mask.length !== R || positions.length !== R) throw new Error(`tokens, mask and positions must each hold B·S = ${R} values`);
  let x = new Float64Array(R * D);
  for (let r = 0; r < R; r++) {
    const t = tokens[r];
    if (!Number.isInteger(t) || t < 0 || t >= a.vocab) throw new Error(`token id ${t} is outside [0, ${a.vocab})`);
    const p = clampPosition(a, positions[r]);
    for (let d = 0; d < D; d++) x[r * D + d] = w.embed[t * D + d] + (w.positions ? w.positions[p * D + d] : 0);
  }
  const invFreq = a.rope ? ropeInvFreq(a.headDim, a.rope.theta, a.rope.scaling) : null;
  const dims = { B, S, nHead: a.nHead, nKvHead: a.nKvHead, headDim: a.headDim, scale: a.attnScale };
  for (const L of w.layers) {
    const n1 = norm(a, x, R, D, L.inputNorm);
    let q = linearRef(n1, R, L.q);
    let k = linearRef(n1, R, L.k);
    const v = linearRef(n1, R, L.v);
    if (a.qkNorm) {
      q = rmsNormRef(q, L.qNorm!, R * a.nHead, a.headDim, a.norm.eps).y;
      k = rmsNormRef(k, L.kNorm!, R * a.nKvHead, a.headDim, a.norm.eps).y;
    }
    if (invFreq) {
      q = ropeRef(q, positions, invFreq, a.nHead);
      k = ropeRef(k, positions, invFreq, a.nKvHead);
    }
    const attn = gqaAttentionRef(q, k, v, mask, dims).out;
    const o = linearRef(attn, R, L.o);
    const h = new Float64Array(R * D);
    for (let i = 0; i < h.length; i++) h[i] = x[i] + o[i];
    const n2 = norm(a, h, R, D, L.postNorm);
    const up = linearRef(n2, R, L.up);
    let act: Float64Array;
    if (a.mlp === 'gated') {
      const gate = linearRef(n2, R, L.gate!);
      act = new Float64Array(up.length);
      for (let i = 0; i < act.length; i++) act[i] = siluValue(gate[i]) * up[i];
    } else {
      act = Float64Array.from(up, a.act === 'silu' ? siluValue : geluValue);
    }
    const down = linearRef(act, R, L.down);
    for (let i = 0; i < h.length; i++) h[i] += down[i];
    x = h;
  }
  const hidden = norm(a, x, R, D, w.finalNorm);
  const logits = linearRef(hidden, R, { w: w.lmHead, b: null, out: a.vocab, in: D });
  return { logits, hidden };
}

/**
 * log p(response[t] | prompt, response[<t]) at temperature T, one unpadded sequence prompt ‖ response
 * at positions 0.. (what `npm run logprobs` prints); also the entropy of each of those distributions.
 */
export function responseLogprobsRef(a: RefArch, w: RefWeights, promptIds: number[], responseIds: number[], T = 1): { logprobs: Float64Array; entropy: Float64Array } {
  if (promptIds.length === 0) throw new Error('the prompt must hold at least one token (the first response token is scored from it)');
  const ids = [...promptIds, ...responseIds];
  const S = ids.length;
  const { logits } = hfForwardRef(
    a,
    w,
    ids,
    new Float64Array(S).fill(1),
    Int32Array.from({ length: S }, (_, i) => i),
    1,
    S,
  );
  const A = responseIds.length;
  const P = promptIds.length;
  // rows P−1 … S−2 predict the response tokens
  const rows = logits.subarray((P - 1) * a.vocab, (P - 1 + A) * a.vocab);
  return logprobsRef(rows, responseIds, 1, A, a.vocab, T);
}
