// Arithmetic asked in words, for a chat model: "What is 23 + 48? Answer with the number.", sent
// through the model's chat template, rewarded 1 when the last integer of the answer is the sum and
// 0 otherwise (GSM8K-style answer extraction: a model that restates the problem, "23 + 48 = 71",
// is judged on its last number). Operands 0–99. Held out: the operand pairs the character task's
// hash holds out (about 10%, isHeldOutPair) never appear in training prompts; the evaluation
// prompts are those pairs in a fixed shuffled order, so held-out accuracy measures generalisation.
import { Rng } from '../util/rng.ts';
import { isHeldOutPair } from './arithmetic.ts';

export const CHAT_ARITHMETIC_NAME = 'chat-arithmetic';
export const CHAT_MAX_OPERAND = 99;
const EVAL_SEED = 0xc4a7;

const PROMPT_RE = /^What is (\d+) \+ (\d+)\? Answer with the number\.$/;

export function chatArithmeticPrompt(a: number, b: number): string {
  return `What is ${a} + ${b}? Answer with the number.`;
}

/** The operands of a prompt this task wrote; null for any other text. */
export function parseChatArithmetic(prompt: string): { a: number; b: number } | null {
  const m = PROMPT_RE.exec(prompt);
  return m ? { a: Number(m[1]), b: Number(m[2]) } : null;
}

/** Whether a prompt's sum needs the units' carry (29 + 57: 9 + 7 ≥ 10), the step a sloppy student forgets; null for any other text. */
export function chatArithmeticCarries(prompt: string): boolean | null {
  const p = parseChatArithmetic(prompt);
  return p === null ? null : (p.a % 10) + (p.b % 10) >= 10;
}

/** The last integer written in `text` (a leading minus sign counts), or null when there is none. */
export function lastInteger(text: string): number | null {
  const all = text.match(/-?\d+/g);
  return all ? Number(all[all.length - 1]) : null;
}

/** 1 when the response's last integer is the prompt's sum, else 0 (also for a prompt not of this task). */
export function chatArithmeticScore(prompt: string, response: string): number {
  const p = parseChatArithmetic(prompt);
  return p !== null && lastInteger(response) === p.a + p.b ? 1 : 0;
}

/** A training prompt: operands drawn uniformly from the pairs not held out. */
export function chatArithmeticTrainPrompt(rng: Rng): string {
  for (;;) {
    const a = rng.int(0, CHAT_MAX_OPERAND + 1);
    const b = rng.int(0, CHAT_MAX_OPERAND + 1);
    if (!isHeldOutPair(a, b)) return chatArithmeticPrompt(a, b);
  }
}

let heldOut: string[] | null = null;

/** The first `count` held-out prompts, the same list on every call. */
export function chatArithmeticEvalPrompts(count: number): string[] {
  if (!heldOut) {
    const pairs: string[] = [];
    for (let a = 0; a <= CHAT_MAX_OPERAND; a++) for (let b = 0; b <= CHAT_MAX_OPERAND; b++) if (isHeldOutPair(a, b)) pairs.push(chatArithmeticPrompt(a, b));
    new Rng(EVAL_SEED).shuffle(pairs);
    heldOut = pairs;
  }
  if (count > heldOut.length) throw new Error(`chat-arithmetic holds out ${heldOut.length} prompts; ${count} were asked`);
  return heldOut.slice(0, count);
}
