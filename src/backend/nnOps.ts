// Dense-layer ops of the transformer and the optimiser.
// Conventions for every backward op:
//   * gradients wrt PARAMETERS are ACCUMULATED (+=) into caller-provided tensors (views of the
//     model's flat gradient buffer), so tied weights and micro-batches simply add up;
//   * gradients wrt ACTIVATIONS are returned as new tensors.
// Row-major everywhere; "(M,K)" means M rows of K contiguous floats.
import type { Tensor } from './tensor.ts';
import type { AdamWParams } from '../reference/nn/optim.ts';
export type { AdamWParams } from '../reference/nn/optim.ts';

export interface NnOps {
  /** y = a·b (+ bias): a (M,K), b (K,N) — or (N,K) when transB — bias (N) or null → (M,N). */
  matmul(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): Tensor;
  /**
   * pre = a·b (+ bias) and act = gelu(pre), both new tensors of matmul's shape, in one dispatch
   * (the MLP's c_fc and its GELU; backward still needs pre).
   */
  matmulGelu(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): { pre: Tensor; act: Tensor };
  /**
   * residual + (a·b + bias) → new tensor of matmul's shape: a dense layer with the transformer's
   * residual add fused (one dispatch instead of matmul + add, the same f32 sums in the same order).
   */
  matmulResidual(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean, residual: Tensor): Tensor;
  /**
   * Backward of matmul: returns gradA (M,K) (unless `needGradA` is false → null);
   * accumulates gradB (shape of b) and gradBias (N) when given.
   */
  matmulBackward(gradOut: Tensor, a: Tensor, b: Tensor, transB: boolean, gradB: Tensor | null, gradBias: Tensor | null, needGradA: boolean): Tensor | null;

  /** y = (x − mean)·rstd·gamma + beta per row, rstd = 1/sqrt(var + eps) (biased var). x (M,D). */
  layerNorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: number): { y: Tensor; mean: Tensor; rstd: Tensor };
  /**
   * Returns gradX (M,D); accumulates gradGamma, gradBeta (D). With `into` (the shape of x), gradX
   * is added into it in place and `into` is returned: the residual stream's gradient, fused
   * (the same values as a separate axpy(1, gradX, into)).
   */
  layerNormBackward(gradY: Tensor, x: Tensor, gamma: Tensor, mean: Tensor, rstd: Tensor, gradGamma: Tensor, gradBeta: Tensor, into?: Tensor | null): Tensor;

  /** GELU, tanh approximation (GPT-2): ½x(1 + tanh(√(2/π)(x + 0.044715x³))). */
  gelu(x: Tensor): Tensor;
  geluBackward(gradY: Tensor, x: Tensor): Tensor;

  /** Element-wise a + b (same shape) → new tensor (the residual connection). */
  add(a: Tensor, b: Tensor): Tensor;
  /** Element-wise a·b (same shape, f32) → new tensor owned by the caller (e.g. weights ⊙ a per-token gradient). */
  mul(a: Tensor, b: Tensor): Tensor;
  /** In place: y += alpha·x (same size). */
  axpy(alpha: number, x: Tensor, y: Tensor): void;
  /** In place: x ← alpha·x. */
  scale(x: Tensor, alpha: number): void;
  /** In place: every element ← value. */
  fill(x: Tensor, value: number): void;

  /**
   * out[r,:] = wte[tokens[r],:] + wpe[positions[r],:] for every row r of tokens/positions
   * (shape (B,S) i32, flattened to R = B·S rows). wte (V,D), wpe (P,D) → (R,D).
   * Positions are clamped to [0, P−1] (padding rows get position 0 by convention).
   */
  embedding(tokens: Tensor, positions: Tensor, wte: Tensor, wpe: Tensor): Tensor;
  /**
   * embedding of the columns [start, start+len) of tokens/positions (B,S) i32 → (B·len, D): the
   * rollout's newest column in one dispatch (= embedding(sliceSeq(tokens)), without the slice).
   */
  embeddingWindow(tokens: Tensor, positions: Tensor, start: number, len: number, wte: Tensor, wpe: Tensor): Tensor;
  /** Accumulates into gradWte (V,D) and gradWpe (P,D); deterministic (no float atomics). */
  embeddingBackward(gradOut: Tensor, tokens: Tensor, positions: Tensor, gradWte: Tensor, gradWpe: Tensor): void;

  /** Rows [start, start+len) of each sequence: x (B,S,D) → (B,len,D). D may be 1 (shape (B,S)). */
  sliceSeq(x: Tensor, start: number, len: number): Tensor;
  /** Adjoint of sliceSeq: grad (B,len,D) → (B,S,D), zeros outside the slice. */
  sliceSeqBackward(grad: Tensor, seqLen: number, start: number): Tensor;
  /**
   * out[i,:] = x[index[i],:]: x (N,R...) f32 or i32, index (M) i32 → (M,R...) of x's dtype; an index
   * outside [0, N) gives a zero row. Copies bits, so ids and floats come back exact. Used for minibatches.
   */
  gatherRows(x: Tensor, index: Tensor): Tensor;
  /**
   * gatherRows of each x by the same rows: xs[k] (N,R_k...) f32 or i32, all with N rows, index (M)
   * i32 → [(M,R_k...) of xs[k]'s dtype]. On WebGPU up to three tensors share a dispatch (a
   * minibatch's k tensors take ⌈k/3⌉), within the storage-buffer limit of a shader stage.
   */
  gatherRowsMany(xs: readonly Tensor[], index: Tensor): Tensor[];

  /** Global L2 norm of a (flat) gradient tensor → (1), by a parallel reduction. */
  gradNorm(grads: Tensor): Tensor;
  /**
   * AdamW in place over flat buffers of one model (one dispatch): g ← grads·clipScale where
   * clipScale = min(1, maxGradNorm/(‖g‖ + 1e-6)) read from `gradNorm` on the GPU (null = 1);
   * m ← β1m + (1−β1)g; v ← β2v + (1−β2)g²; p ← p − lr·(m̂/(√v̂ + eps) + wd·decayMask·p).
   */
  adamw(params: Tensor, grads: Tensor, m: Tensor, v: Tensor, decayMask: Tensor, gradNorm: Tensor | null, hp: AdamWParams): void;
}
