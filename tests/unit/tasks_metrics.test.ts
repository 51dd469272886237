import { describe, expect, it } from 'vitest';
import { distinctN, mean, rate, words } from '../../src/tasks/metrics.ts';

describe('text metrics', () => {
  it('splits words on spaces and punctuation', () => {
    expect(words(' the food was  great.')).toEqual(['the', 'food', 'was', 'great']);
    expect(words('...')).toEqual([]);
  });

  it('distinct-n on hand-computed examples', () => {
    // words: [great, and, great], [great]  -> unigrams: 4 total, {great, and} = 2 unique
    expect(distinctN([' great and great.', ' great.'], 1)).toBeCloseTo(2 / 4, 15);
    // bigrams: (great and), (and great) from the first; none from the second -> 2 / 2
    expect(distinctN([' great and great.', ' great.'], 2)).toBe(1);
    // bigrams never cross texts: [a b], [b a], [a b] -> (a b), (b a), (a b) = 2 unique / 3
    expect(distinctN(['a b', 'b a', 'a b'], 2)).toBeCloseTo(2 / 3, 15);
    expect(distinctN(['x x x x'], 1)).toBe(0.25);
    expect(distinctN(['x x x x'], 3)).toBe(0.5);
  });

  it('distinct-n is 0 without n-grams and rejects a bad n', () => {
    expect(distinctN([], 1)).toBe(0);
    expect(distinctN(['one'], 2)).toBe(0);
    expect(() => distinctN(['a'], 0)).toThrow(/positive integer/);
  });

  it('mean and rate, with 0 for empty input', () => {
    expect(mean([1, 2, 6])).toBe(3);
    expect(mean([])).toBe(0);
    expect(rate([1, 2, 3, 4], (x) => x > 1)).toBe(0.75);
    expect(rate([], () => true)).toBe(0);
  });
});
