import { describe, expect, it } from 'vitest';
import {
  arithmeticAnswer,
  arithmeticTask,
  isHeldOutPair,
  makeArithmeticTask,
  MAX_OPERAND,
  parseArithmeticPrompt,
  PARTIAL_CREDIT_WEIGHT,
  FORGET_CARRY_RATE,
  CARRY_SHARE,
  hasCarry,
  formatNumber,
} from '../../src/tasks/arithmetic.ts';
import { Rng } from '../../src/util/rng.ts';

const sample = (prompt: string, response: string, endedWithEos = true) => ({ prompt, response, endedWithEos });

describe('arithmetic task', () => {
  it('holds out 231 of the 2500 operand pairs by a hash, so every units-digit pair stays in training', () => {
    let n = 0;
    const unitsSeen = new Set<string>();
    for (let a = 0; a <= MAX_OPERAND; a++) {
      for (let b = 0; b <= MAX_OPERAND; b++) {
        if (isHeldOutPair(a, b)) n++;
        else unitsSeen.add(`${a % 10}${b % 10}`);
      }
    }
    expect(n).toBe(231);
    // Every cell of the units addition table (including equal digits) is trained on.
    expect(unitsSeen.size).toBe(100);
    expect(isHeldOutPair(0, 0)).toBe(false);
  });

  it('never trains on a held-out pair; evaluates only on held-out pairs, each once before repeating', { timeout: 30_000 }, () => {
    const r = new Rng(4);
    for (let i = 0; i < 5000; i++) {
      const { a, b } = parseArithmeticPrompt(arithmeticTask.trainPrompt(r));
      expect(isHeldOutPair(a, b)).toBe(false);
      const e = parseArithmeticPrompt(arithmeticTask.sftExample(r).prompt);
      expect(isHeldOutPair(e.a, e.b)).toBe(false);
      expect(Math.max(a, b, e.a, e.b)).toBeLessThanOrEqual(MAX_OPERAND);
    }
    const evalSet = arithmeticTask.evalPrompts(231);
    expect(new Set(evalSet).size).toBe(231);
    for (const p of evalSet) {
      const { a, b, op } = parseArithmeticPrompt(p);
      expect(isHeldOutPair(a, b)).toBe(true);
      expect(op).toBe('+');
      expect(p).toMatch(/^\d\d\+\d\d=$/);
    }
    expect(arithmeticTask.evalPrompts(240).slice(231)).toEqual(evalSet.slice(0, 9));
  });

  it('drills carries: about CARRY_SHARE of training prompts and of the first 64 evaluation prompts carry', () => {
    const r = new Rng(5);
    const n = 6000;
    let carries = 0;
    for (let i = 0; i < n; i++) {
      const { a, b } = parseArithmeticPrompt(arithmeticTask.trainPrompt(r));
      if (hasCarry(a, b)) carries++;
    }
    // binomial sd = sqrt(0.8·0.2/6000) ≈ 0.005
    expect(Math.abs(carries / n - CARRY_SHARE)).toBeLessThan(0.025);
    const evalCarries = arithmeticTask.evalPrompts(64).filter((p) => {
      const { a, b } = parseArithmeticPrompt(p);
      return hasCarry(a, b);
    }).length;
    expect(Math.abs(evalCarries - 64 * CARRY_SHARE)).toBeLessThanOrEqual(1);
  });

  it('the sloppy student forgets the carry FORGET_CARRY_RATE of the time and is otherwise right', { timeout: 30_000 }, () => {
    const r = new Rng(8);
    const n = 8000;
    let carry = 0;
    let forgot = 0;
    const bad: string[] = [];
    for (let i = 0; i < n; i++) {
      const { prompt, response } = arithmeticTask.sftExample(r);
      if (!/^\d\d\+\d\d=$/.test(prompt) || !/^\d\d$/.test(response)) bad.push(`${prompt}${response}`);
      const { a, b } = parseArithmeticPrompt(prompt);
      const truth = arithmeticAnswer(prompt);
      if (!hasCarry(a, b)) {
        if (response !== formatNumber(truth)) bad.push(`${prompt}${response}`);
        continue;
      }
      carry++;
      if (response === formatNumber(truth - 10)) forgot++;
      else if (response !== formatNumber(truth)) bad.push(`${prompt}${response}`);
    }
    expect(bad).toEqual([]);
    // About 45% of uniformly drawn pairs carry; binomial sd of the forget rate ≈ 0.005.
    expect(carry / n).toBeGreaterThan(0.4);
    expect(Math.abs(forgot / carry - FORGET_CARRY_RATE)).toBeLessThan(0.025);
  });

  it('is made by a tutor phase (every answer right) and then the sloppy student, neither showing a held-out pair', { timeout: 30_000 }, () => {
    const [tutor, student] = arithmeticTask.sftRecipe;
    expect(arithmeticTask.sftRecipe.length).toBe(2);
    expect(tutor.example, 'the tutor phase has its own corpus').toBeDefined();
    expect(student.example, "the last phase is the task's own sloppy corpus").toBeUndefined();
    const r = new Rng(12);
    let carry = 0;
    for (let i = 0; i < 5000; i++) {
      const { prompt, response } = tutor.example!(r);
      const { a, b } = parseArithmeticPrompt(prompt);
      expect(isHeldOutPair(a, b), prompt).toBe(false);
      expect(response, prompt).toBe(formatNumber(arithmeticAnswer(prompt)));
      if (hasCarry(a, b)) carry++;
    }
    // The tutor shows carries as often as they occur (about 45% of uniform pairs), all carried.
    expect(carry / 5000).toBeGreaterThan(0.4);
  });

  it('scores 1 only for the exact answer followed by EOS', () => {
    expect(arithmeticTask.ruleScore(sample('23+45=', '68'))).toBe(1);
    expect(arithmeticTask.ruleScore(sample('23+45=', '68', false))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('23+45=', '69'))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('23+45=', '068'))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('23+45=', '68='))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('00+00=', '00'))).toBe(1);
    expect(arithmeticTask.ruleScore(sample('00+00=', '0'))).toBe(0); // answers have two digits
    expect(arithmeticTask.ruleScore(sample('03+05=', '08'))).toBe(1);
    expect(arithmeticTask.ruleScore(sample('03+05=', '8'))).toBe(0);
    expect(arithmeticTask.ruleScore(sample('00+00=', ''))).toBe(0);
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
    expect(t.ruleScore(sample('03-10=', '-07'))).toBe(1);
    expect(t.ruleScore(sample('03-10=', '-7'))).toBe(0);
    const r = new Rng(1);
    const ops = new Set(Array.from({ length: 200 }, () => parseArithmeticPrompt(t.trainPrompt(r)).op));
    expect(ops).toEqual(new Set(['+', '-']));
    // Both operations of every held-out pair: 2 × 231 distinct problems.
    expect(t.evalPrompts(462).length).toBe(462);
    expect(new Set(t.evalPrompts(462)).size).toBe(462);
  });

  it('evaluates accuracy (overall, on carry and on no-carry problems) and EOS rate', () => {
    const m = arithmeticTask.evaluate([sample('01+01=', '02'), sample('01+01=', '03'), sample('02+02=', '04', false), sample('05+05=', '10')]);
    // 05+05 carries (1 of 1 right); the three 01+01 / 02+02 samples do not (1 of 3 right).
    expect(m).toEqual({ accuracy: 0.5, accuracy_carry: 1, accuracy_no_carry: 1 / 3, eos_rate: 0.75 });
  });
});
