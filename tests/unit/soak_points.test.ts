// Where a soak reads memory: never before the warm-up, then at 1%, 10%, 50% and 100% of the run.
// The soak itself runs on WebGPU in tests/gpu/soak.test.ts.
import { describe, expect, it } from 'vitest';
import { soakPoints } from '../../src/fuzz/soak.ts';

describe('soak sample points', () => {
  it('samples at 10, 15 and 30 iterations; 1000 iterations at 10, 100, 500, 1000', () => {
    expect(soakPoints(30)).toEqual([10, 15, 30]);
    expect(soakPoints(1000)).toEqual([10, 100, 500, 1000]);
  });
});
