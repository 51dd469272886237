// Tolerances scaled by the magnitude of what was summed: |actual − reference| ≤ tol_i, with tol_i
// from a first-order float32 error bound (a sum of n terms in any order is off by at most
// (n − 1)·u·Σ|terms|, u = 2^-24), so a result that cancels to near zero is judged by the size of
// its terms rather than by its own.
import { expect } from 'vitest';

/** The unit roundoff of float32. */
export const U32 = 2 ** -24;

/** |actual[i] − expected[i]| ≤ tol[i] for every i, and actual finite; names the worst element. */
export function expectWithin(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: ArrayLike<number>, what: string): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  let worst = -1;
  let worstRatio = 1;
  for (let i = 0; i < expected.length; i++) {
    if (!Number.isFinite(actual[i])) throw new Error(`${what}[${i}] is ${actual[i]} (expected ${expected[i]})`);
    const err = Math.abs(actual[i] - expected[i]);
    const ratio = err === 0 ? 0 : err / tol[i];
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worst = i;
    }
  }
  if (worst >= 0) {
    const err = Math.abs(actual[worst] - expected[worst]);
    throw new Error(`${what}[${worst}] = ${actual[worst]} but reference = ${expected[worst]} (|diff| ${err.toExponential(3)} > tolerance ${Number(tol[worst]).toExponential(3)})`);
  }
}

/** The largest |actual − expected| / tol (≤ 1 passes): how much of its tolerance a result uses. */
export function toleranceUsed(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]) / tol[i]);
  return worst;
}

/** float32 rounding of each value, as float64. */
export const f32 = (xs: ArrayLike<number>): Float64Array => Float64Array.from(new Float32Array(Array.from(xs)));
