// Backend.scope (tidy-style): what a scope makes and does not return is disposed when it returns;
// what it returns survives into the enclosing scope. Checked on the CPU backend by recording the
// tensors passed to dispose (the same Scopes class serves the WebGPU backend).
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { tensorsIn } from '../../src/backend/scope.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { policyLoss } from '../../src/ops/policyLoss.ts';

function recording(): { be: CpuBackend; disposed: Set<Tensor> } {
  const be = new CpuBackend();
  const disposed = new Set<Tensor>();
  const orig = be.dispose.bind(be);
  be.dispose = (...ts) => {
    for (const t of ts) if (t) disposed.add(t);
    orig(...ts);
  };
  return { be, disposed };
}

describe('Backend.scope', () => {
  it('disposes op outputs and tensor()/zeros() made inside but not returned; keeps what is returned', () => {
    const { be, disposed } = recording();
    const outside = be.tensor([1, 2], [2]);
    let a!: Tensor, b!: Tensor, z!: Tensor, loss!: { stats: Tensor; gradLogprobs: Tensor };
    const kept = be.scope(() => {
      a = be.tensor([1, 2], [2]);
      b = be.nn.add(a, outside);
      z = be.zeros([1, 2]);
      const m = be.tensor([1, 1], [1, 2]);
      loss = policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: m, params: { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean' } });
      return { sum: be.nn.add(b, b), stats: loss.stats };
    });
    expect(disposed.has(outside)).toBe(false);
    expect(disposed.has(kept.sum)).toBe(false);
    expect(disposed.has(kept.stats)).toBe(false);
    for (const t of [a, b, z, loss.gradLogprobs]) expect(disposed.has(t)).toBe(true);
  });

  it('a returned tensor belongs to the enclosing scope; an exception disposes everything made', () => {
    const { be, disposed } = recording();
    let inner!: Tensor, outer!: Tensor;
    be.scope(() => {
      inner = be.scope(() => be.zeros([3]));
      expect(disposed.has(inner)).toBe(false);
      outer = be.zeros([3]);
      return null;
    });
    expect(disposed.has(inner)).toBe(true);
    expect(disposed.has(outer)).toBe(true);
    let made!: Tensor;
    expect(() =>
      be.scope(() => {
        made = be.zeros([2]);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(disposed.has(made)).toBe(true);
  });

  it('refuses an async function', () => {
    const { be } = recording();
    expect(() => be.scope(async () => 1)).toThrow(/synchronous/);
  });

  it("tensorsIn finds the tensors a scope would keep: a tensor, a record's or array's fields, once each", () => {
    const be = new CpuBackend();
    const [a, b, c] = [be.tensor([1], [1]), be.tensor([2], [1]), be.tensor([3], [1])];
    const bundle = { n: 3, index: Int32Array.from([0, 1]), a, none: null, pair: [b, a], info: { c, group: new Int32Array(2) } };
    expect(new Set(tensorsIn(bundle))).toEqual(new Set([a, b, c]));
    expect(tensorsIn(bundle)).toHaveLength(3);
    expect(tensorsIn(a)).toEqual([a]);
    expect(tensorsIn({ deep: { deeper: { a } } })).toEqual([]); // two levels, as scope() keeps
    expect(tensorsIn(Int32Array.from([1]))).toEqual([]);
  });
});
