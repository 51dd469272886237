// A trainable parameter set held as flat f32 buffers (LoRA adapters, loraParams.ts; every weight of
// a small model, fullParams.ts): each tensor a view into `params`, its gradient a view into
// `grads`, so one gradNorm and one AdamW dispatch update them all.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { fill } from '../../ops/elementwise.ts';
import { adamw, gradNorm } from '../../ops/optim.ts';
import { NO_CLIP, type OptimizerParams } from '../gpt.ts';

export interface FlatTrainable {
  params: Tensor; // (size) f32
  grads: Tensor; // (size) f32
  m: Tensor; // (size) f32, AdamW's first moments
  v: Tensor; // (size) f32, second moments
  decayMask: Tensor; // (size) f32: 1 where weight decay applies
  steps: number;
}

/** Zeroes the gradients before a new accumulation. */
export function zeroFlatGrads(be: Backend, t: FlatTrainable): void {
  fill(be, { x: t.grads, value: 0 });
}

/** One AdamW step over every parameter (global-norm clipping when hp.maxGradNorm > 0); returns the pre-clip gradient norm (1). */
export function flatOptimizerStep(be: Backend, t: FlatTrainable, hp: OptimizerParams): Tensor {
  const norm = gradNorm(be, { grads: t.grads });
  t.steps++;
  const maxGradNorm = hp.maxGradNorm > 0 ? hp.maxGradNorm : NO_CLIP;
  adamw(be, { params: t.params, grads: t.grads, m: t.m, v: t.v, decayMask: t.decayMask, gradNorm: norm, hp: { ...hp, maxGradNorm, step: t.steps } });
  return norm;
}
