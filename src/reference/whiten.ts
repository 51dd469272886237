// float64 reference: masked whitening over every action token of the batch.

/** Added to the variance before the inverse square root (docs/algorithms.md, Numerical conventions). */
export const WHITEN_EPS = 1e-8;

/**
 * n = Σ[mask ≠ 0]; mean = Σ mask·x / n (0 when n = 0);
 * var = Σ mask·(x − mean)² / (n − 1) (Bessel; 0 when n < 2).
 */
export function maskedMeanVar(x: ArrayLike<number>, mask: ArrayLike<number>): { n: number; mean: number; variance: number } {
  let n = 0;
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    if (mask[i] === 0) continue;
    n += mask[i];
    sum += mask[i] * x[i];
  }
  const mean = n > 0 ? sum / n : 0;
  let ssd = 0;
  for (let i = 0; i < x.length; i++) {
    if (mask[i] === 0) continue;
    const d = x[i] - mean;
    ssd += mask[i] * d * d;
  }
  const variance = n >= 2 ? ssd / (n - 1) : 0;
  return { n, mean, variance };
}

/** out = (x − mean)·rsqrt(var + 1e-8), plus mean when shiftMean is false; at every position. */
export function whitenRef(x: ArrayLike<number>, mask: ArrayLike<number>, shiftMean: boolean): Float64Array {
  const { mean, variance } = maskedMeanVar(x, mask);
  const scale = 1 / Math.sqrt(variance + WHITEN_EPS);
  const shift = shiftMean ? 0 : mean;
  return Float64Array.from(x, (v) => (v - mean) * scale + shift);
}
