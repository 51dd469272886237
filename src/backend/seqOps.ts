// Sequence ops of the transformer: causal multi-head attention (full and KV-cached) and
// sampling. Shapes: B sequences, S positions, D = H·Dh model width.
import type { Tensor } from './tensor.ts';
import type { SampleParams } from '../reference/seq/sample.ts';
export type { SampleParams } from '../reference/seq/sample.ts';

export { kvStride, type BlockOffsets, type DecodeModel } from '../reference/seq/decode.ts';
import type { DecodeModel } from '../reference/seq/decode.ts';

export interface SeqOps {
  /**
   * Causal self-attention over full sequences. qkv (B·S, 3D) holds q | k | v per row;
   * attnMask (B,S) (1 = real token). Query i attends to keys j ≤ i with attnMask[b,j] = 1,
   * scaled by 1/√Dh; a query with no visible key outputs zeros. Returns out (B·S, D) and the
   * attention probabilities (B,H,S,S) kept for the backward pass.
   */
  attention(qkv: Tensor, attnMask: Tensor, nHead: number): { out: Tensor; probs: Tensor };
  /**
   * gradQkv (B·S, 3D) from gradOut (B·S, D), the probabilities and the output `out` (B·S, D) of
   * the forward pass on the same qkv and mask (the softmax backward's row sums are dO·out).
   */
  attentionBackward(gradOut: Tensor, qkv: Tensor, probs: Tensor, out: Tensor, nHead: number): Tensor;

  /**
   * KV-cached attention for L new positions [start, start+L) of each sequence: writes their k, v
   * into kCache/vCache (B, Smax, D) and attends from their q to cached keys j ≤ position under
   * attnMask (B, Smax). qkv (B·L, 3D) → out (B·L, D). Prefill: start 0, L = prompt length;
   * decode: L = 1. Matches `attention` on the same inputs (tested).
   */
  attentionCached(qkv: Tensor, kCache: Tensor, vCache: Tensor, attnMask: Tensor, start: number, nHead: number): Tensor;

  /**
   * One sampling step for every row: logits (B,V) are for position `pos`. Where finished[b] = 0,
   * draws a token (temperature, top-k, top-p) and writes sequences[b,pos] = token,
   * attnMask[b,pos] = 1, positions[b,pos] = positions[b,pos−1] + 1, and finished[b] = 1 if the token
   * is EOS; where finished[b] = 1 writes PAD, 0, 0. All on the GPU: no readback per token.
   * sequences (B,S) i32, attnMask (B,S) f32, positions (B,S) i32, finished (B) i32, all in place.
   * logprobs (B,S) f32, when given, receives at [b,pos] the log-probability of the drawn token
   * under the distribution actually sampled from (after temperature, top-k, top-p renormalisation),
   * and 0 where the row had already finished.
   */
  sampleStep(logits: Tensor, sequences: Tensor, attnMask: Tensor, positions: Tensor, finished: Tensor, pos: number, params: SampleParams, logprobs?: Tensor | null): void;

  /**
   * One KV-cached decode position through a whole lm model (generate's per-token chain before
   * sampling, one dispatch on WebGPU): embeds column `pos` of sequences/positions (B, Smax) i32,
   * runs every block — writing that position's k and v into the caches and attending under
   * attnMask (B, Smax) to keys j ≤ pos — then ln_f and the tied head. params: the flat parameter
   * tensor; kv (2·nLayer·kvStride(B, Smax, D)) f32 holds layer l's k cache (B, Smax, D) at
   * 2l·stride and its v cache at (2l+1)·stride. Returns logits (B, V).
   */
  decodeStep(params: Tensor, model: DecodeModel, kv: Tensor, sequences: Tensor, positions: Tensor, attnMask: Tensor, pos: number): Tensor;
}

/** The sizes that fix a model's decode kernels: model width, heads, cache length (prompt + response). */
export interface DecodeShape {
  dModel: number;
  nHead: number;
  seqLen: number;
}
