// pass@k (src/rl/passAtK.ts): the unbiased estimator of Chen et al. 2021 against a hand-computed
// case and the combinatorial formula 1 − C(n − c, k) / C(n, k); the held-out mean over prompts.
import { describe, expect, it } from 'vitest';
import { meanPassAtK, passAtK, passAtKKey } from '../../src/rl/passAtK.ts';
import { makeArithmeticTask } from '../../src/tasks/arithmetic.ts';

/** Binomial coefficient by the multiplicative formula, exact for these small n. */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe('pass@k', () => {
  it('matches a hand-computed case: n = 4 draws, c = 1 correct', () => {
    // pass@1 = 1/4; pass@2 = 1 − C(3,2)/C(4,2) = 1 − 3/6 = 1/2; pass@3 = 1 − C(3,3)/C(4,3) = 1 − 1/4 = 3/4;
    // pass@4 = 1 (the one correct draw is always among all four).
    expect(passAtK(4, 1, 1)).toBeCloseTo(0.25, 15);
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 15);
    expect(passAtK(4, 1, 3)).toBeCloseTo(0.75, 15);
    expect(passAtK(4, 1, 4)).toBe(1);
    // None correct: 0 at every k; all correct: 1 at every k.
    for (let k = 1; k <= 4; k++) {
      expect(passAtK(4, 0, k)).toBe(0);
      expect(passAtK(4, 4, k)).toBe(1);
    }
  });

  it('equals 1 − C(n − c, k) / C(n, k) for every n ≤ 12, c ≤ n, k ≤ n', () => {
    for (let n = 1; n <= 12; n++) {
      for (let c = 0; c <= n; c++) {
        for (let k = 1; k <= n; k++) {
          const exact = 1 - choose(n - c, k) / choose(n, k);
          expect(Math.abs(passAtK(n, c, k) - exact), `n=${n} c=${c} k=${k}`).toBeLessThan(1e-12);
        }
        // k = 1 is the fraction correct; k = n is "any draw correct".
        expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 12);
        expect(passAtK(n, c, n)).toBe(c > 0 ? 1 : 0);
      }
    }
  });

  it('refuses k outside 1 … n and c outside 0 … n', () => {
    expect(() => passAtK(4, 1, 0)).toThrow(RangeError);
    expect(() => passAtK(4, 1, 5)).toThrow(RangeError);
    expect(() => passAtK(4, 5, 2)).toThrow(RangeError);
    expect(() => passAtK(4, -1, 2)).toThrow(RangeError);
  });

  it('averages over prompts whose draws are consecutive', () => {
    // Three prompts × 4 draws: correct counts 1, 0, 3.
    const correct = [true, false, false, false, false, false, false, false, true, true, false, true];
    expect(meanPassAtK(correct, 4, 4)).toBeCloseTo(2 / 3, 15);
    expect(meanPassAtK(correct, 4, 1)).toBeCloseTo((1 + 0 + 3) / 12, 15);
    expect(meanPassAtK(correct, 4, 2)).toBeCloseTo((0.5 + 0 + 1) / 3, 15);
    expect(() => meanPassAtK(correct, 5, 2)).toThrow(RangeError);
    expect(passAtKKey(4)).toBe('pass_at_4');
  });

  it('arithmetic marks exactly the right, EOS-terminated answers correct', () => {
    const task = makeArithmeticTask();
    const prompt = task.evalPrompts(1)[0];
    const m = /^(\d+)([+-])(\d+)=$/.exec(prompt)!;
    const answer = String(m[2] === '+' ? Number(m[1]) + Number(m[3]) : Number(m[1]) - Number(m[3]));
    expect(task.isCorrect?.({ prompt, response: answer, endedWithEos: true })).toBe(true);
    expect(task.isCorrect?.({ prompt, response: answer, endedWithEos: false })).toBe(false);
    expect(task.isCorrect?.({ prompt, response: `${answer}1`, endedWithEos: true })).toBe(false);
  });
});
