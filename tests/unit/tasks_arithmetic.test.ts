import { describe, expect, it } from 'vitest';
import {
  arithmeticAnswer,
  arithmeticTask,
  isHeldOutPair,
  makeArithmeticTask,
  MAX_OPERAND,
  parseArithmeticPrompt,
  PARTIAL_CREDIT_WEIGHT,
  SFT_NOISE_RATE,
} from '../../src/tasks/arithmetic.ts';
import { Rng } from '../../src/util/rng.ts';

const sample = (prompt: string, response: string, endedWithEos = true) => ({ prompt, response, endedWithEos });

describe('arithmetic task', () => {
  it('holds out exactly the pairs with (7a + 3b) % 10 === 0: 10% of them', () => {
    let n = 0;
    for (let a = 0; a <= MAX_OPERAND; a++) for (let b = 0; b <= MAX_OPERAND; b++) n += isHeldOutPair(a, b) ? 1 : 0;
    expect(n).toBe(250);
    expect(isHeldOutPair(0, 0)).toBe(true);
    expect(isHeldOutPair(1, 1)).toBe(true); // 7 + 3
    expect(isHeldOutPair(1, 2)).toBe(false);
  });

  it('never trains on a held-out pair; evaluates only on held-out pairs, each once before repeating', () => {
    const r = new Rng(4);
    for (let i = 0; i < 5000; i++) {
      const { a, b } = parseArithmeticPrompt(arithmeticTask.trainPrompt(r));
      expect(isHeldOutPair(a, b)).toBe(false);
      const e = parseArithmeticPrompt(arithmeticTask.sftExample(r).prompt);
      expect(isHeldOutPair(e.a, e.b)).toBe(false);
      expect(Math.max(a, b, e.a, e.b)).toBeLessThanOrEqual(MAX_OPERAND);
    }
    const evalSet = arithmeticTask.evalPrompts(250);
    expect(new Set(evalSet).size).toBe(250);
    for (const p of evalSet) {
      const { a, b, op } = parseArithmeticPrompt(p);
      expect(isHeldOutPair(a, b)).toBe(true);
      expect(op).toBe('+');
    }
    expect(arithmeticTask.evalPrompts(260).slice(250)).toEqual(evalSet.slice(0, 10));
  });

  it('corrupts about 30% of SFT answers, each to a different well-formed number', () => {
    const r = new Rng(8);
    const n = 6000;
    let wrong = 0;
    for (let i = 0; i < n; i++) {
      const { prompt, response } = arithmeticTask.sftExample(r);
      expect(response).toMatch(/^(0|[1-9]\d*)$/); // canonical, non-negative for addition
      if (Number(response) !== arithmeticAnswer(prompt)) {
        wrong++;
        // either one digit changed or off by at most 10
        const truth = String(arithmeticAnswer(prompt));
        const oneDigit = response.length === truth.length && [...response].filter((c, k) => c !== truth[k]).length === 1;
        expect(oneDigit || Math.abs(Number(response) - Number(truth)) <= 10).toBe(true);
      }
    }
    // binomial sd = sqrt(0.3·0.7/6000) ≈ 0.0059; 0.03 is > 5 sd
    expect(Math.abs(wrong / n - SFT_NOISE_RATE)).toBeLessThan(0.03);
  });

  it('scores 1 only for the exact answer followed by EOS', () => {
    expect(arithmeticTask.ruleScore(sample('23+45=', '68'))).toBe(1);
    expect(arithmeticTask.ruleScore(sample('23+45=', '68', false))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('23+45=', '69'))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('23+45=', '068'))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('23+45=', '68='))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('0+0=', '0'))).toBe(1);
    expect(arithmeticTask.ruleScore(sample('0+0=', ''))).toBe(0);
    expect(() => arithmeticTask.ruleScore(sample('23*45=', '68'))).toThrow(/not an arithmetic prompt/);
  });

  it('gives documented partial credit only when enabled', () => {
    const t = makeArithmeticTask({ partialCredit: true });
    expect(t.ruleScore(sample('23+45=', '68'))).toBe(1);
    expect(t.ruleScore(sample('23+45=', '70'))).toBeCloseTo(PARTIAL_CREDIT_WEIGHT * 0.8, 12);
    expect(t.ruleScore(sample('23+45=', '58'))).toBe(0);
    expect(t.ruleScore(sample('23+45=', '70', false))).toBe(0);
    expect(t.ruleScore(sample('23+45=', '7=0'))).toBe(0);
  });

  it('supports subtraction with negative answers when asked', () => {
    const t = makeArithmeticTask({ subtraction: true });
    expect(t.ruleScore(sample('3-10=', '-7'))).toBe(1);
    const r = new Rng(1);
    const ops = new Set(Array.from({ length: 200 }, () => parseArithmeticPrompt(t.trainPrompt(r)).op));
    expect(ops).toEqual(new Set(['+', '-']));
    expect(t.evalPrompts(500).length).toBe(500);
    expect(new Set(t.evalPrompts(500)).size).toBe(500);
  });

  it('evaluates accuracy and EOS rate', () => {
    const m = arithmeticTask.evaluate([
      sample('1+1=', '2'),
      sample('1+1=', '3'),
      sample('2+2=', '4', false),
      sample('5+5=', '10'),
    ]);
    expect(m).toEqual({ accuracy: 0.5, eos_rate: 0.75 });
  });
});
