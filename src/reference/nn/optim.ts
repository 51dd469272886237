// float64 references of the global gradient norm and AdamW (oracle for shaders/optim.wgsl).

export interface AdamWParams {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 1-based step count, for bias correction. */
  step: number;
  /** Clip the global gradient norm to this value (using `gradNorm`); ≤ 0 disables clipping. */
  maxGradNorm: number;
}

export function gradNormRef(g: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < g.length; i++) s += g[i] * g[i];
  return Math.sqrt(s);
}

/** min(1, maxGradNorm/(norm + 1e-6)) when clipping is on and a norm is given, else 1. */
export function clipScale(norm: number | null, maxGradNorm: number): number {
  if (norm === null || !(maxGradNorm > 0)) return 1;
  return Math.min(1, maxGradNorm / (norm + 1e-6));
}

/**
 * One AdamW step in place (decoupled weight decay, bias-corrected moments, 1-based step). A given
 * norm (with maxGradNorm > 0) that is NaN or ±inf skips the step (params, m and v untouched), as verl skips
 * optimizer.step() when the gradient norm is not finite:
 *   g = grads·clip; m ← β1m + (1−β1)g; v ← β2v + (1−β2)g²;
 *   p ← p − lr·(m/(1−β1^t) / (√(v/(1−β2^t)) + eps) + wd·decayMask·p).
 */
export function adamwRef(
  params: Float64Array, // (n)
  grads: ArrayLike<number>, // (n)
  m: Float64Array, // (n)
  v: Float64Array, // (n)
  decayMask: ArrayLike<number>, // (n) 0/1
  norm: number | null,
  hp: AdamWParams,
): void {
  // the norm is read only when clipping is on (as the kernel's use_norm); callers that always want
  // the skip pass a huge maxGradNorm (Gpt.optimizerStep's NO_CLIP)
  if (norm !== null && hp.maxGradNorm > 0 && !Number.isFinite(norm)) return;
  const scale = clipScale(norm, hp.maxGradNorm);
  const bc1 = 1 - hp.beta1 ** hp.step;
  const bc2 = 1 - hp.beta2 ** hp.step;
  for (let i = 0; i < params.length; i++) {
    const g = grads[i] * scale;
    m[i] = hp.beta1 * m[i] + (1 - hp.beta1) * g;
    v[i] = hp.beta2 * v[i] + (1 - hp.beta2) * g * g;
    const update = m[i] / bc1 / (Math.sqrt(v[i] / bc2) + hp.eps) + hp.weightDecay * decayMask[i] * params[i];
    params[i] -= hp.lr * update;
  }
}
