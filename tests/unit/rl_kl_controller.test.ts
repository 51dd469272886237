import { describe, expect, it } from 'vitest';
import { AdaptiveKlController, FixedKlController, makeKlController } from '../../src/rl/klController.ts';

describe('KL controllers', () => {
  it('fixed keeps β whatever the KL', () => {
    const c = new FixedKlController(0.05);
    c.update(100, 64);
    c.update(0, 64);
    expect(c.beta).toBe(0.05);
  });

  it('adaptive follows β ← β·(1 + clip(KL/target − 1, ±0.2)·n/horizon)', () => {
    const c = new AdaptiveKlController(0.1, 6, 10000);
    c.update(9, 32); // error 0.5 → clipped to 0.2
    expect(c.beta).toBeCloseTo(0.1 * (1 + (0.2 * 32) / 10000), 15);
    const b1 = c.beta;
    c.update(5.4, 32); // error −0.1 (inside the clip)
    expect(c.beta).toBeCloseTo(b1 * (1 + (-0.1 * 32) / 10000), 15);
    const b2 = c.beta;
    c.update(0, 32); // error −1 → clipped to −0.2
    expect(c.beta).toBeCloseTo(b2 * (1 - (0.2 * 32) / 10000), 15);
  });

  it('adaptive raises β while KL is above target and lowers it below', () => {
    const hi = new AdaptiveKlController(0.1, 1, 100);
    const lo = new AdaptiveKlController(0.1, 1, 100);
    for (let i = 0; i < 10; i++) {
      hi.update(3, 8);
      lo.update(0.1, 8);
    }
    expect(hi.beta).toBeGreaterThan(0.1);
    expect(lo.beta).toBeLessThan(0.1);
  });

  it('ignores a non-finite KL and rejects bad settings', () => {
    const c = new AdaptiveKlController(0.2, 1, 100);
    c.update(NaN, 8);
    expect(c.beta).toBe(0.2);
    expect(() => new AdaptiveKlController(0.2, 0, 100)).toThrow(/target/);
    expect(() => new AdaptiveKlController(0.2, 1, 0)).toThrow(/horizon/);
    expect(makeKlController('fixed', 0.3, 1, 1)).toBeInstanceOf(FixedKlController);
    expect(makeKlController('adaptive', 0.3, 1, 1)).toBeInstanceOf(AdaptiveKlController);
  });
});
