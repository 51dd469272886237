// The chat arithmetic task (src/tasks/chatArithmetic.ts): prompts in words, the last integer of the
// answer judged against the sum, held-out pairs never in training prompts, fixed evaluation prompts.
import { describe, expect, it } from 'vitest';
import { isHeldOutPair } from '../../src/tasks/arithmetic.ts';
import {
  chatArithmeticCarries,
  chatArithmeticEvalPrompts,
  chatArithmeticPrompt,
  chatArithmeticScore,
  chatArithmeticTrainPrompt,
  lastInteger,
  parseChatArithmetic,
} from '../../src/tasks/chatArithmetic.ts';
import { Rng } from '../../src/util/rng.ts';

describe('chat arithmetic', () => {
  it('a problem carries when its units add up to ten or more; other text is no problem of the task', () => {
    expect(chatArithmeticCarries(chatArithmeticPrompt(29, 57))).toBe(true);
    expect(chatArithmeticCarries(chatArithmeticPrompt(25, 75))).toBe(true); // 5 + 5 = 10
    expect(chatArithmeticCarries(chatArithmeticPrompt(24, 75))).toBe(false);
    expect(chatArithmeticCarries(chatArithmeticPrompt(0, 9))).toBe(false);
    expect(chatArithmeticCarries(chatArithmeticPrompt(91, 9))).toBe(true); // into the hundreds
    expect(chatArithmeticCarries('What is 2 + 2?')).toBeNull();
    // every pair by the definition: the sum's units are not the units' sum
    for (let a = 0; a < 100; a += 7) for (let b = 0; b < 100; b += 3) expect(chatArithmeticCarries(chatArithmeticPrompt(a, b))).toBe((a % 10) + (b % 10) !== (a + b) % 10);
  });

  it('scores the last integer of the answer against the sum', () => {
    const p = chatArithmeticPrompt(23, 48);
    expect(p).toBe('What is 23 + 48? Answer with the number.');
    expect(parseChatArithmetic(p)).toEqual({ a: 23, b: 48 });
    expect(chatArithmeticScore(p, '71')).toBe(1);
    expect(chatArithmeticScore(p, 'The answer is 71.')).toBe(1);
    expect(chatArithmeticScore(p, '23 + 48 = 71')).toBe(1);
    expect(chatArithmeticScore(p, '71, or maybe 61')).toBe(0);
    expect(chatArithmeticScore(p, '61')).toBe(0);
    expect(chatArithmeticScore(p, 'seventy-one')).toBe(0);
    expect(chatArithmeticScore(p, '')).toBe(0);
    expect(chatArithmeticScore(p, '710')).toBe(0);
    expect(chatArithmeticScore('23+48=', '71')).toBe(0); // not a prompt of this task
    expect(lastInteger('a -5 b')).toBe(-5);
    expect(lastInteger('none')).toBeNull();
  });

  it('training prompts never use a held-out pair; evaluation prompts only use them, the same list each call', () => {
    const rng = new Rng(7);
    for (let i = 0; i < 2000; i++) {
      const { a, b } = parseChatArithmetic(chatArithmeticTrainPrompt(rng))!;
      expect(isHeldOutPair(a, b)).toBe(false);
      expect(a).toBeLessThanOrEqual(99);
      expect(b).toBeLessThanOrEqual(99);
    }
    const evalPrompts = chatArithmeticEvalPrompts(200);
    expect(new Set(evalPrompts).size).toBe(200);
    for (const p of evalPrompts) {
      const { a, b } = parseChatArithmetic(p)!;
      expect(isHeldOutPair(a, b)).toBe(true);
    }
    expect(chatArithmeticEvalPrompts(50)).toEqual(evalPrompts.slice(0, 50));
    expect(() => chatArithmeticEvalPrompts(100_000)).toThrow(/holds out \d+ prompts; 100000 were asked/);
  });
});
