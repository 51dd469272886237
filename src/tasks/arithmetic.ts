// Two-operand arithmetic: prompt "23+45=", response "68", then EOS. Operands 0–49.
// Held out: operand pairs with (7a + 3b) mod 10 = 0 (exactly one b residue per a, so 10% of
// pairs) never appear in training prompts or the SFT corpus; evalPrompts uses only them, so
// evaluation measures generalisation rather than recall.
// The SFT corpus is noisy on purpose (30% wrong answers), so the SFT model starts clearly
// imperfect and PPO has something to fix.
import { Rng } from '../util/rng.ts';
import { rate } from './metrics.ts';
import type { Task, TaskSample } from './task.ts';

export const MAX_OPERAND = 49;
/** Probability that an SFT example carries a wrong answer. */
export const SFT_NOISE_RATE = 0.3;
/** Partial credit weight (only with `partialCredit`): score = w·max(0, 1 − |pred − answer|/10) for a wrong, well-formed, EOS-terminated answer. */
export const PARTIAL_CREDIT_WEIGHT = 0.2;
const EVAL_SEED = 0xa417;

export interface ArithmeticOptions {
  /** Also generate "a-b=" prompts (answers may be negative). Default false. */
  subtraction?: boolean;
  /** Give wrong-but-close answers a small reward (see PARTIAL_CREDIT_WEIGHT). Default false: exact answers only. */
  partialCredit?: boolean;
}

export function isHeldOutPair(a: number, b: number): boolean {
  return (7 * a + 3 * b) % 10 === 0;
}

type Op = '+' | '-';

interface Problem {
  a: number;
  b: number;
  op: Op;
}

const PROMPT_RE = /^(\d+)([+-])(\d+)=$/;

export function parseArithmeticPrompt(prompt: string): Problem {
  const m = PROMPT_RE.exec(prompt);
  if (!m) throw new Error(`not an arithmetic prompt: ${JSON.stringify(prompt)}`);
  return { a: Number(m[1]), b: Number(m[3]), op: m[2] as Op };
}

function answerOf(p: Problem): number {
  return p.op === '+' ? p.a + p.b : p.a - p.b;
}

function promptOf(p: Problem): string {
  return `${p.a}${p.op}${p.b}=`;
}

/** A wrong answer near the right one: one digit changed, or off by ±1..±10 (each half the time). */
function corruptAnswer(answer: number, allowNegative: boolean, rng: Rng): number {
  if (rng.next() < 0.5) {
    const digits = String(Math.abs(answer));
    const i = rng.int(0, digits.length);
    // A changed leading digit stays nonzero so "45" never becomes the non-canonical "05".
    const lo = i === 0 && digits.length > 1 ? 1 : 0;
    // Draw from the 9 − lo digits other than the current one.
    let d = rng.int(lo, 9);
    if (d >= Number(digits[i])) d++;
    const changed = Number(digits.slice(0, i) + String(d) + digits.slice(i + 1));
    return answer < 0 ? -changed : changed;
  }
  const k = rng.int(1, 11) * (rng.next() < 0.5 ? -1 : 1);
  return !allowNegative && answer + k < 0 ? answer - k : answer + k;
}

export function makeArithmeticTask(opts: ArithmeticOptions = {}): Task {
  const ops: Op[] = opts.subtraction ? ['+', '-'] : ['+'];
  const partialCredit = opts.partialCredit ?? false;

  const trainProblem = (rng: Rng): Problem => {
    for (;;) {
      const a = rng.int(0, MAX_OPERAND + 1);
      const b = rng.int(0, MAX_OPERAND + 1);
      if (!isHeldOutPair(a, b)) return { a, b, op: ops[rng.int(0, ops.length)] };
    }
  };

  // Every held-out problem once, in a fixed shuffled order.
  const heldOut: Problem[] = [];
  for (let a = 0; a <= MAX_OPERAND; a++) {
    for (let b = 0; b <= MAX_OPERAND; b++) {
      if (isHeldOutPair(a, b)) for (const op of ops) heldOut.push({ a, b, op });
    }
  }
  new Rng(EVAL_SEED).shuffle(heldOut);

  const isExact = (s: TaskSample) => s.endedWithEos && s.response === String(answerOf(parseArithmeticPrompt(s.prompt)));

  return {
    name: 'arithmetic',
    title: 'Arithmetic',
    description:
      `Answer "a${ops.join('/')}b=" for operands 0–${MAX_OPERAND}. Reward 1 for the exact answer followed by EOS, else 0` +
      (partialCredit ? ` (partial credit up to ${PARTIAL_CREDIT_WEIGHT} for close answers).` : '.') +
      ` The SFT data is wrong ${SFT_NOISE_RATE * 100}% of the time; evaluation uses operand pairs never seen in training.`,
    alphabet: '0123456789+-=',
    maxPromptChars: 6, // "49+49="
    maxResponseChars: 4, // "-49" fits; one spare for a runaway answer to be visibly wrong
    sftExample(rng) {
      const p = trainProblem(rng);
      const truth = answerOf(p);
      const answer = rng.next() < SFT_NOISE_RATE ? corruptAnswer(truth, p.op === '-', rng) : truth;
      return { prompt: promptOf(p), response: String(answer) };
    },
    trainPrompt(rng) {
      return promptOf(trainProblem(rng));
    },
    evalPrompts(count) {
      // More prompts than held-out problems repeat the list from the start.
      return Array.from({ length: count }, (_, i) => promptOf(heldOut[i % heldOut.length]));
    },
    ruleScore(s) {
      if (isExact(s)) return 1;
      if (!partialCredit || !s.endedWithEos || !/^-?\d{1,3}$/.test(s.response)) return 0;
      const err = Math.abs(Number(s.response) - answerOf(parseArithmeticPrompt(s.prompt)));
      return PARTIAL_CREDIT_WEIGHT * Math.max(0, 1 - err / 10);
    },
    evaluate(samples) {
      return { accuracy: rate(samples, isExact), eos_rate: rate(samples, (s) => s.endedWithEos) };
    },
  };
}

export const arithmeticTask: Task = makeArithmeticTask();

/** Exposed for tests: the exact answer of a prompt. */
export function arithmeticAnswer(prompt: string): number {
  return answerOf(parseArithmeticPrompt(prompt));
}
