// The backward's passes (src/ops/gqaAttention.ts): in order, disjoint, covering every index once,
// none longer than the chunk; one pass when the sequence fits; a CPU adapter gets shorter ones.
import { describe, expect, it } from 'vitest';
import { gqaPasses, gqaPassRows } from '../../src/ops/gqaAttention.ts';

describe('gqaPasses', () => {
  it.each([
    [1, 512],
    [511, 512],
    [512, 512],
    [513, 512],
    [1024, 256],
    [1000, 3],
  ])('n %i in chunks of %i: in order, disjoint, complete', (n, chunk) => {
    const passes = gqaPasses(n, chunk);
    expect(passes.length).toBe(Math.ceil(n / chunk));
    let next = 0;
    for (const [lo, hi] of passes) {
      expect(lo).toBe(next);
      expect(hi - lo).toBeGreaterThan(0);
      expect(hi - lo).toBeLessThanOrEqual(chunk);
      next = hi;
    }
    expect(next).toBe(n);
  });

  it('an empty sequence has no pass; a CPU adapter sums fewer rows a pass than a GPU', () => {
    expect(gqaPasses(0, 512)).toEqual([]);
    expect(gqaPassRows(true)).toBeLessThan(gqaPassRows(false));
  });
});
