// The critic's value head on an HfModel: v = h·wᵀ + b per scored row, h the final-normed hidden
// state that scores a response column (verl's critic is AutoModelForTokenClassification with one
// label: its `score` layer, Linear(hidden, 1), weight N(0, initializer_range), bias 0, values read
// at the same columns as the actor's log-probs). The critic shares the frozen base with the actor
// and the reference and trains its own adapters plus this head.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { matmul, matmulBackward } from '../../ops/matmul.ts';
import { Rng } from '../../util/rng.ts';

export interface ValueHead {
  w: Tensor; // (1, D) f32, nn.Linear's (out, in)
  b: Tensor; // (1) f32
}

/** Host values of a fresh head: weight N(0, std²) (transformers' initializer_range, 0.02 by default), bias 0. */
export function valueHeadInit(D: number, seed: number, std = 0.02): { w: Float64Array; b: Float64Array } {
  const r = new Rng(seed);
  return { w: Float64Array.from({ length: D }, () => Math.fround(r.normal() * std)), b: new Float64Array(1) };
}

/** values (N) f32 of the scored rows (N, D). */
export function valueHeadForward(be: Backend, head: ValueHead, rows: Tensor): Tensor {
  const v = matmul(be, { a: rows, b: head.w, bias: head.b, transB: true }); // (N, 1)
  return be.reshape(v, [rows.shape[0]]);
}

/** Accumulates the head's gradients for ∂L/∂values = gradValues (N); returns ∂L/∂rows (N, D). */
export function valueHeadBackward(be: Backend, head: ValueHead, rows: Tensor, gradValues: Tensor, grads: ValueHead): Tensor {
  return be.scope(() => {
    // A copy, since reshape hands the storage over and the caller keeps its gradValues.
    const copy = be.zeros(gradValues.shape);
    be.copy(gradValues, copy);
    const gOut = be.reshape(copy, [rows.shape[0], 1]);
    return matmulBackward(be, { gradOut: gOut, a: rows, b: head.w, transB: true, gradB: grads.w, gradBias: grads.b, needGradA: true })!;
  });
}
