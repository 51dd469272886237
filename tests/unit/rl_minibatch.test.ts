import { describe, expect, it } from 'vitest';
import { epochMinibatches } from '../../src/rl/minibatch.ts';
import { deriveSeed } from '../../src/util/seedStreams.ts';

describe('minibatch shuffling', () => {
  it('is a deterministic partition of the batch into equal parts', () => {
    const a = epochMinibatches(24, 4, 7, 3, 1);
    const b = epochMinibatches(24, 4, 7, 3, 1);
    expect(a.map((x) => Array.from(x))).toEqual(b.map((x) => Array.from(x)));
    expect(a).toHaveLength(4);
    for (const mb of a) expect(mb).toHaveLength(6);
    const all = a.flatMap((x) => Array.from(x)).sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 24 }, (_, i) => i));
  });

  it('differs across seeds, iterations and epochs, and actually shuffles', () => {
    const key = (s: number, it: number, ep: number) =>
      epochMinibatches(32, 2, s, it, ep)
        .map((x) => Array.from(x).join(','))
        .join('|');
    const base = key(1, 0, 0);
    expect(key(2, 0, 0)).not.toBe(base);
    expect(key(1, 1, 0)).not.toBe(base);
    expect(key(1, 0, 1)).not.toBe(base);
    expect(Array.from(epochMinibatches(32, 2, 1, 0, 0)[0])).not.toEqual(Array.from({ length: 16 }, (_, i) => i));
  });

  it('rejects a batch that does not divide', () => {
    expect(() => epochMinibatches(10, 3, 1, 0, 0)).toThrow(/10 sequences into 3/);
  });

  it('derives distinct 32-bit seeds', () => {
    const seeds = new Set<number>();
    for (let i = 0; i < 100; i++) seeds.add(deriveSeed(1, i));
    expect(seeds.size).toBe(100);
    expect(deriveSeed(1, 2)).not.toBe(deriveSeed(2, 1));
    for (const s of seeds) expect(Number.isInteger(s) && s >= 0 && s < 2 ** 32).toBe(true);
  });
});
