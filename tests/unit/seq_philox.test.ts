import { describe, expect, it } from 'vitest';
import { mulhi32, philox4x32, sampleUniform } from '../../src/util/philox.ts';
import { rng } from '../helpers/random.ts';

describe('philox4x32-10', () => {
  it('matches the Random123 known-answer vectors', () => {
    expect(philox4x32([0, 0, 0, 0], [0, 0])).toEqual([0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    expect(philox4x32([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff])).toEqual([0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
    expect(philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0])).toEqual([0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]);
  });

  it('mulhi32 equals the high word of the exact 64-bit product', () => {
    const r = rng(11);
    for (let i = 0; i < 2000; i++) {
      const a = r.nextU32(),
        b = r.nextU32();
      expect(mulhi32(a, b)).toBe(Number((BigInt(a) * BigInt(b)) >> 32n));
    }
    expect(mulhi32(0xffffffff, 0xffffffff)).toBe(0xfffffffe);
  });

  it('sampleUniform is in [0,1), deterministic, and roughly uniform over rows', () => {
    const n = 20000;
    const bins = new Array(10).fill(0);
    for (let b = 0; b < n; b++) {
      const u = sampleUniform(1234, b, 7);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      bins[Math.floor(u * 10)]++;
    }
    expect(sampleUniform(1234, 5, 7)).toBe(sampleUniform(1234, 5, 7));
    expect(sampleUniform(1234, 5, 7)).not.toBe(sampleUniform(1235, 5, 7));
    expect(sampleUniform(1234, 5, 7)).not.toBe(sampleUniform(1234, 5, 8));
    // chi-square with 9 dof: 99.99th percentile ≈ 33.7
    const chi2 = bins.reduce((s, c) => s + (c - n / 10) ** 2 / (n / 10), 0);
    expect(chi2).toBeLessThan(33.7);
  });
});
