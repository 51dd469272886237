// be.counters() counts host↔device traffic the same way on both backends: tensor uploads and their
// bytes (uniforms excluded), readbacks and the bytes mapped back (4 per value).
import { describe, expect, it } from 'vitest';
import { diffCounters } from '../../src/gpu/recorder.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';
import { add, scale } from '../../src/ops/elementwise.ts';

describe.each(BACKENDS)('transfer counters on %s', (_name, makeBackend) => {
  it('count tensor uploads and readback bytes, not uniforms or device-side work', async () => {
    const be = await makeBackend();
    const r = rng(5);
    const n = r.int(3, 200),
      m = r.int(3, 200);
    be.flush();
    const c0 = { ...be.counters() };
    const a = be.tensor(randn(r, n), [n]);
    const ids = be.tensor(
      Array.from({ length: m }, () => r.int(0, 1000)),
      [m],
      'i32',
    );
    be.write(a, randn(r, n));
    const empty = be.tensor([], [0]); // an empty upload moves nothing
    const c1 = { ...be.counters() };
    // Ops with uniform blocks, a zero fill and a device copy: none of it is host data.
    const b = add(be, { a, b: a });
    scale(be, { x: b, alpha: 0.5 });
    const z = be.zeros([n]);
    be.copy(b, z);
    const c2 = { ...be.counters() };
    const [ra, rb] = await be.readMany([a, z]);
    await be.read(ids);
    const c3 = { ...be.counters() };

    const up = diffCounters(c0, c1);
    expect([up.uploads, up.uploadBytes, up.readbacks, up.readbackBytes]).toEqual([3, 4 * (2 * n + m), 0, 0]);
    const ops = diffCounters(c1, c2);
    expect([ops.uploads, ops.uploadBytes, ops.readbacks, ops.readbackBytes]).toEqual([0, 0, 0, 0]);
    const down = diffCounters(c2, c3);
    expect([down.uploads, down.uploadBytes, down.readbacks, down.readbackBytes]).toEqual([0, 0, 2, 4 * (2 * n + m)]);
    expect(ra.length + rb.length).toBe(2 * n);
    be.dispose(a, b, z, ids, empty);
  });
});
