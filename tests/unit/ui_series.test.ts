// Chart series helpers: axis ticks, smoothing and downsampling.
import { describe, expect, it } from 'vitest';
import { ema, lttb, niceTicks, type XY } from '../../src/ui/charts/series.ts';

describe('niceTicks', () => {
  it('puts an exact 0 on the axis when the range reaches it (no −1.4e-17 from a running sum)', () => {
    const ticks = niceTicks(-0.13, -1e-4);
    expect(ticks).toEqual([-0.15, -0.1, -0.05, 0]);
    expect(Object.is(ticks[3], 0) || Object.is(ticks[3], -0)).toBe(true);
  });

  it('covers the range with round steps of 1, 2, 2.5 or 5 × 10^k', () => {
    for (const [lo, hi] of [
      [0, 1],
      [-3.7, 12.2],
      [0.0012, 0.0087],
      [1e4, 3.3e4],
      [-2e-7, 5e-7],
    ]) {
      const ticks = niceTicks(lo, hi);
      expect(ticks[0]).toBeLessThanOrEqual(lo);
      expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(hi);
      const step = ticks[1] - ticks[0];
      const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
      expect(
        [1, 2, 2.5, 5].some((m) => Math.abs(mantissa - m) < 1e-6),
        `step ${step}`,
      ).toBe(true);
      for (let i = 2; i < ticks.length; i++) expect(ticks[i] - ticks[i - 1]).toBeCloseTo(step, 9);
    }
  });

  it('gives a flat series a band around its value', () => {
    const ticks = niceTicks(0.5, 0.5);
    expect(ticks[0]).toBeLessThan(0.5);
    expect(ticks[ticks.length - 1]).toBeGreaterThan(0.5);
    expect(niceTicks(0, 0)).toContain(0);
  });
});

describe('ema and lttb', () => {
  const line: XY[] = Array.from({ length: 1000 }, (_, i) => ({ x: i, y: i === 500 ? 100 : Math.sin(i / 50) }));

  it('ema is debiased (the first point is kept) and weight 0 is the identity', () => {
    expect(ema(line, 0.9)[0].y).toBeCloseTo(line[0].y, 12);
    expect(ema(line, 0)).toEqual(line);
  });

  it('lttb keeps the endpoints and the spike within the point budget', () => {
    const down = lttb(line, 100);
    expect(down.length).toBe(100);
    expect(down[0]).toEqual(line[0]);
    expect(down[99]).toEqual(line[999]);
    expect(down.some((p) => p.y === 100)).toBe(true);
  });
});
