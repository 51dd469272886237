import { describe, expect, it } from 'vitest';
import { MAX_TARGET, MIN_TARGET, parseStopPrompt, SFT_LENGTH_NOISE_RATE, SFT_MAX_LENGTH_OFFSET, stopTask } from '../../src/tasks/stop.ts';
import { Rng } from '../../src/util/rng.ts';

const sample = (prompt: string, response: string, endedWithEos = true) => ({ prompt, response, endedWithEos });

describe('stop task', () => {
  it('scores 1 − |len − n|/n clipped at −1, and −1 without EOS', () => {
    expect(stopTask.ruleScore(sample('n=5:', 'ababa'))).toBe(1);
    expect(stopTask.ruleScore(sample('n=5:', 'abab'))).toBeCloseTo(0.8, 15);
    expect(stopTask.ruleScore(sample('n=4:', 'aaaaaa'))).toBe(0.5);
    expect(stopTask.ruleScore(sample('n=1:', 'aaaaaaaa'))).toBe(-1); // 1 − 7 clipped
    expect(stopTask.ruleScore(sample('n=2:', 'aaaa'))).toBe(0);
    expect(stopTask.ruleScore(sample('n=3:', ''))).toBe(0);
    expect(stopTask.ruleScore(sample('n=5:', 'ababa', false))).toBe(-1);
    expect(stopTask.ruleScore(sample('n=12:', 'a'.repeat(12)))).toBe(1);
    expect(() => stopTask.ruleScore(sample('n=x:', 'a'))).toThrow(/not a stop prompt/);
  });

  it('trains on targets 1–12 and evaluates each target equally often', () => {
    const r = new Rng(2);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(parseStopPrompt(stopTask.trainPrompt(r)));
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const evalTargets = stopTask.evalPrompts(36).map(parseStopPrompt);
    for (let t = MIN_TARGET; t <= MAX_TARGET; t++) expect(evalTargets.filter((x) => x === t).length).toBe(3);
  });

  it('misses the SFT length about half the time, by at most ±3, never below 1 character', () => {
    const r = new Rng(17);
    const n = 6000;
    let wrong = 0;
    for (let i = 0; i < n; i++) {
      const { prompt, response } = stopTask.sftExample(r);
      const target = parseStopPrompt(prompt);
      expect(response).toMatch(/^[ab]+$/);
      expect(Math.abs(response.length - target)).toBeLessThanOrEqual(SFT_MAX_LENGTH_OFFSET);
      if (response.length !== target) wrong++;
    }
    // sd = sqrt(0.25/6000) ≈ 0.0065
    expect(Math.abs(wrong / n - SFT_LENGTH_NOISE_RATE)).toBeLessThan(0.03);
  });

  it('evaluates exact-length rate, EOS rate and mean absolute length error', () => {
    const m = stopTask.evaluate([sample('n=3:', 'aba'), sample('n=3:', 'aba', false), sample('n=2:', 'aaaaa'), sample('n=10:', 'ab')]);
    expect(m).toEqual({ exact_length_rate: 0.25, eos_rate: 0.75, mean_abs_length_error: (0 + 0 + 3 + 8) / 4 });
  });
});
