// readNamed: one readMany, answered by the names it was asked with.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { readNamed } from '../../src/rl/readNamed.ts';

describe('readNamed', () => {
  it('reads tensors, lists of tensors and nulls in one readback, by name', async () => {
    const be = new CpuBackend();
    const a = be.tensor([1, 2], [2]);
    const b = be.tensor([3], [1]);
    const c = be.tensor([4, 5, 6], [3]);
    const before = be.counters().readbacks;
    const host = await readNamed(be, { a, list: [b, c], none: null, empty: [] });
    expect(be.counters().readbacks - before).toBe(1);
    expect(Array.from(host.a)).toEqual([1, 2]);
    expect(host.list.map((x) => Array.from(x))).toEqual([[3], [4, 5, 6]]);
    expect(host.none).toBeNull();
    expect(host.empty).toEqual([]);
  });
});
