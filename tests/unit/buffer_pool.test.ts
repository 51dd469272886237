// The WebGPU backend's buffer pool (src/gpu/bufferPool.ts), its bookkeeping alone (a device that
// hands out plain objects; tests/gpu/hf_load_plan.test.ts checks it on Dawn): sizes round up to a
// power of two of at least 256 bytes, a released buffer is reused by its class only, and what the
// pool holds after a stretch is each class as many times as it was in use at once.
import { describe, expect, it } from 'vitest';
import { BufferPool, sizeClass } from '../../src/gpu/bufferPool.ts';

function pool(): { pool: BufferPool; created: number[]; destroyed: number[] } {
  const created: number[] = [];
  const destroyed: number[] = [];
  const device = {
    createBuffer: ({ size }: { size: number }) => {
      created.push(size);
      return {
        size,
        destroy() {
          destroyed.push(size);
        },
      };
    },
  } as unknown as GPUDevice;
  return { pool: new BufferPool(device), created, destroyed };
}

describe('BufferPool', () => {
  it('rounds each request up to a power of two of at least 256 bytes', () => {
    expect([1, 256, 257, 4096, 4097, 3 * 2 ** 20].map(sizeClass)).toEqual([256, 256, 512, 4096, 8192, 4 * 2 ** 20]);
  });

  it('reuses a released buffer of the same class only, and holds each class as often as it was in use at once', () => {
    const { pool: p, created } = pool();
    p.resetPeak();
    const a = p.acquire(1000); // 1 KiB class
    const b = p.acquire(1000);
    p.release(a);
    const c = p.acquire(3000); // 4 KiB: a new buffer, not a
    p.release(b);
    const d = p.acquire(600); // 1 KiB again: reuses one
    expect(created).toEqual([1024, 1024, 4096]);
    expect(d === a || d === b).toBe(true);
    p.release(c);
    p.release(d);
    // 1 KiB twice at once (a, b), 4 KiB once: what a fresh pool holds after this stretch
    expect(p.heldSincePeakReset()).toBe(2 * 1024 + 4096);
    expect(p.stats()).toEqual({ buffers: 3, bytes: 2 * 1024 + 4096, inUseBuffers: 0, inUseBytes: 0 });
    expect(p.peakInUseBytes).toBe(1024 + 1024 + 4096 - 1024); // a freed before c
    // after a reset, only what is used from then on (and what was in use at the reset)
    const e = p.acquire(4000);
    p.resetPeak();
    p.acquire(100);
    expect(p.heldSincePeakReset()).toBe(4096 + 256);
    p.release(e);
  });

  it('with a bound on what it keeps: the free buffers of the sizes asked for longest ago go first, after the next submit, never one in use', () => {
    const { pool: p, created, destroyed } = pool();
    p.holdLimit = 8192;
    // a long iteration: two 2 KiB and one 4 KiB buffers, all released
    const long = [p.acquire(2000), p.acquire(2000), p.acquire(4000)];
    for (const b of long) p.release(b);
    expect(p.stats().bytes).toBe(8192);
    // a shorter one asks for 1 KiB buffers: the 2 KiB ones, asked for before the 4 KiB one, go first
    const held = p.acquire(4000); // reuses the 4 KiB buffer, which is now the newest asked
    const short = p.acquire(1000);
    expect(created).toEqual([2048, 2048, 4096, 1024]);
    expect(p.stats()).toEqual({ buffers: 3, bytes: 2048 + 4096 + 1024, inUseBuffers: 2, inUseBytes: 4096 + 1024 });
    // retired, not destroyed: a dispatch recorded before the release may still bind it
    expect(destroyed).toEqual([]);
    p.destroyRetired();
    expect(destroyed).toEqual([2048]);
    // in-use buffers are never taken: past the bound with nothing free, the pool grows
    const more = p.acquire(8000);
    p.destroyRetired();
    expect(destroyed).toEqual([2048, 2048]);
    expect(p.stats()).toEqual({ buffers: 3, bytes: 4096 + 1024 + 8192, inUseBuffers: 3, inUseBytes: 4096 + 1024 + 8192 });
    for (const b of [held, short, more]) p.release(b);
    // without a bound nothing is destroyed
    p.holdLimit = null;
    p.acquire(100);
    p.destroyRetired();
    expect(destroyed).toEqual([2048, 2048]);
    expect(p.stats().buffers).toBe(4);
  });
});
