// Fresh random inputs per run (seed printed, overridable with TEST_SEED) and tolerance checks.
import { expect } from 'vitest';
import { Rng } from '../../src/util/rng.ts';

// vitest.config.ts fixes one seed per run (or takes the caller's) before any worker starts.
if (!process.env.TEST_SEED) throw new Error('TEST_SEED is not set: run the tests through vitest.config.ts');
export const TEST_SEED = Number(process.env.TEST_SEED);
let announced = false;

/** A generator seeded from TEST_SEED and a per-test salt. */
export function rng(salt = 0): Rng {
  if (!announced) {
    announced = true;
    console.log(`[tests] TEST_SEED=${TEST_SEED} (set TEST_SEED to reproduce)`);
  }
  return new Rng((TEST_SEED + Math.imul(salt + 1, 0x27d4eb2d)) >>> 0);
}

export function randn(r: Rng, n: number, scale = 1): Float64Array {
  return Float64Array.from({ length: n }, () => r.normal() * scale);
}

export function uniformArray(r: Rng, n: number, lo: number, hi: number): Float64Array {
  return Float64Array.from({ length: n }, () => r.uniform(lo, hi));
}

/** A (B,A) right-padded action mask with row lengths in [minLen, A]. */
export function rightPaddedMask(r: Rng, B: number, A: number, minLen = 1): Float64Array {
  const m = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = r.int(minLen, A + 1);
    for (let a = 0; a < len; a++) m[b * A + a] = 1;
  }
  return m;
}

/**
 * Element-wise |actual − expected| ≤ atol + rtol·|expected|, and no NaN/Inf in actual; atol is one
 * number or one per element. Reports the worst element on failure.
 */
export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, rtol: number, atol: number | ArrayLike<number>, what = 'value'): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (!Number.isFinite(a)) {
      throw new Error(`${what}[${i}] is ${a} (expected ${e})`);
    }
    const excess = Math.abs(a - e) - ((typeof atol === 'number' ? atol : atol[i]) + rtol * Math.abs(e));
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = i;
    }
  }
  if (worst >= 0) {
    throw new Error(
      `${what}[${worst}] = ${actual[worst]} but reference = ${expected[worst]} ` +
        `(|diff| ${Math.abs(actual[worst] - expected[worst]).toExponential(3)} > atol ${typeof atol === 'number' ? atol : atol[worst]} + rtol ${rtol}·|ref|)`,
    );
  }
}

/** Tolerances (float32 kernels against float64 references). */
export const TOL = {
  /** element-wise kernels */
  elem: { rtol: 1e-5, atol: 1e-6 },
  /** reductions (sums over many terms in float32) */
  reduce: { rtol: 1e-4, atol: 1e-5 },
} as const;
