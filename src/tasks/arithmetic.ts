// Two-operand column arithmetic with two-digit operands: prompt "23+48=", response "71", then EOS.
// Operands 0–49 are always written with two digits ("07+35=") and so is a non-negative answer
// ("09"): every digit sits at a fixed position, so a tiny model learns the columns quickly.
//
// The SFT model is made in two phases (sftRecipe). First a tutor: every answer right, so the model
// learns to add, carry included (98% greedy held-out accuracy after this phase). Then a "sloppy
// student": every answer right except that on problems whose units column carries, the student
// forgets the carry FORGET_CARRY_RATE of the time (23+48 → "61"). The model keeps the carry it can
// compute but learns to drop it: greedy accuracy on carry problems 0%, on no-carry problems 100%,
// and the carried answer keeps ~10% of the probability. That is the situation RL with a verifiable
// reward is good at: the capability is there, and the reward only has to move probability onto it.
// (Without the tutor phase the 2-layer model never learns to detect a carry, because the sloppy
// corpus barely depends on it, and PPO can only learn the shortcut "always carry".)
// Training and evaluation prompts are mostly carry problems (CARRY_SHARE), which is where the
// student has something to learn; evaluate() splits accuracy by carry so a shortcut shows.
//
// Held out: about 10% of the operand pairs, picked by a fixed integer hash of the pair (231 of
// 2500), never appear in training prompts or either SFT corpus; evalPrompts uses only them, so
// evaluation measures generalisation rather than recall. A hash rather than a rule on the digits:
// any rule on a and b mod 10 would hide whole columns of the units addition table (the old rule,
// 7a + 3b ≡ 0 mod 10, held out exactly the pairs with equal units digits), and then no model
// could generalise to the held-out pairs.
import { Rng } from '../util/rng.ts';
import { rate } from './metrics.ts';
import type { SftExample, Task, TaskSample } from './task.ts';

export const MAX_OPERAND = 49;
/** Digits every operand and every answer is written with (zero-padded). */
export const DIGITS = 2;
/** Probability that the SFT student forgets the carry on a problem whose units column carries. */
export const FORGET_CARRY_RATE = 0.9;
/** Share of training (and evaluation) prompts whose units column carries. */
export const CARRY_SHARE = 0.8;
/** Partial credit weight (only with `partialCredit`): score = w·max(0, 1 − |pred − answer|/10) for a wrong, well-formed, EOS-terminated answer. */
export const PARTIAL_CREDIT_WEIGHT = 0.2;
const EVAL_SEED = 0xa417;

export interface ArithmeticOptions {
  /** Also generate "a-b=" prompts (answers may be negative, written "-07"). Default false. */
  subtraction?: boolean;
  /** Give wrong-but-close answers a small reward (see PARTIAL_CREDIT_WEIGHT). Default false: exact answers only. */
  partialCredit?: boolean;
}

/** A fixed 32-bit integer hash of the pair (multiply–xorshift), held out when ≡ 0 mod 10. */
export function isHeldOutPair(a: number, b: number): boolean {
  let x = Math.imul(a * 100 + b + 1, 0x9e3779b1) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x85ebca77) >>> 0;
  x = (x ^ (x >>> 13)) >>> 0;
  return x % 10 === 0;
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

/** True when the units column of an addition carries (3 + 8 ≥ 10): the student's weak spot. */
export function hasCarry(a: number, b: number, op: Op = '+'): boolean {
  return op === '+' && (a % 10) + (b % 10) >= 10;
}

function answerOf(p: Problem): number {
  return p.op === '+' ? p.a + p.b : p.a - p.b;
}

/** A number in the task's fixed-width format: "07", "71", "-07". */
export function formatNumber(n: number): string {
  return (n < 0 ? '-' : '') + String(Math.abs(n)).padStart(DIGITS, '0');
}

function promptOf(p: Problem): string {
  return `${formatNumber(p.a)}${p.op}${formatNumber(p.b)}=`;
}

export function makeArithmeticTask(opts: ArithmeticOptions = {}): Task {
  const ops: Op[] = opts.subtraction ? ['+', '-'] : ['+'];
  const partialCredit = opts.partialCredit ?? false;

  const anyTrainProblem = (rng: Rng): Problem => {
    for (;;) {
      const a = rng.int(0, MAX_OPERAND + 1);
      const b = rng.int(0, MAX_OPERAND + 1);
      if (!isHeldOutPair(a, b)) return { a, b, op: ops[rng.int(0, ops.length)] };
    }
  };
  /** A training problem that carries with probability CARRY_SHARE (additions only). */
  const drillProblem = (rng: Rng): Problem => {
    const wantCarry = rng.next() < CARRY_SHARE;
    for (;;) {
      const p = anyTrainProblem(rng);
      if (p.op === '-' || hasCarry(p.a, p.b, p.op) === wantCarry) return p;
    }
  };

  // Every held-out problem once, in a fixed order: shuffled carry and non-carry problems
  // interleaved so that every prefix holds about CARRY_SHARE carry problems (while they last).
  const carry: Problem[] = [];
  const plain: Problem[] = [];
  for (let a = 0; a <= MAX_OPERAND; a++) {
    for (let b = 0; b <= MAX_OPERAND; b++) {
      if (isHeldOutPair(a, b)) for (const op of ops) (hasCarry(a, b, op) ? carry : plain).push({ a, b, op });
    }
  }
  const evalRng = new Rng(EVAL_SEED);
  evalRng.shuffle(carry);
  evalRng.shuffle(plain);
  const heldOut: Problem[] = [];
  while (carry.length + plain.length > 0) {
    const carryDue = heldOut.filter((p) => hasCarry(p.a, p.b, p.op)).length < CARRY_SHARE * (heldOut.length + 1);
    heldOut.push((carryDue && carry.length > 0) || plain.length === 0 ? carry.shift()! : plain.shift()!);
  }

  /** The tutor's corpus: every training problem with its right answer. */
  const tutorExample = (rng: Rng): SftExample => {
    const p = anyTrainProblem(rng);
    return { prompt: promptOf(p), response: formatNumber(answerOf(p)) };
  };
  /** The sloppy student's corpus: right, except that a carry is forgotten FORGET_CARRY_RATE of the time. */
  const sloppyExample = (rng: Rng): SftExample => {
    const p = anyTrainProblem(rng);
    const truth = answerOf(p);
    const forgot = hasCarry(p.a, p.b, p.op) && rng.next() < FORGET_CARRY_RATE;
    return { prompt: promptOf(p), response: formatNumber(forgot ? truth - 10 : truth) };
  };

  const isExact = (s: TaskSample) => s.endedWithEos && s.response === formatNumber(answerOf(parseArithmeticPrompt(s.prompt)));

  return {
    name: 'arithmetic',
    title: 'Arithmetic',
    description:
      `Answer "a${ops.join('/')}b=" for two-digit operands 00–${MAX_OPERAND} with a two-digit answer ("23+48=71"). ` +
      `Reward 1 for the exact answer followed by EOS, else 0` +
      (partialCredit ? ` (partial credit up to ${PARTIAL_CREDIT_WEIGHT} for close answers).` : '.') +
      ` The SFT model learned from a tutor (every answer right), then imitated a sloppy student who forgets the carry ${FORGET_CARRY_RATE * 100}% of the time;` +
      ` ${CARRY_SHARE * 100}% of prompts need a carry; evaluation uses operand pairs never seen in training.`,
    alphabet: '0123456789+-=',
    maxPromptChars: 6, // "49+49="
    maxResponseChars: 4, // "-49" fits; one spare for a runaway answer to be visibly wrong
    sftExample: sloppyExample,
    sftRecipe: [
      { label: 'tutor: every answer right', steps: 600, lr: 3e-3, batchSize: 32, example: tutorExample },
      { label: `sloppy student: forgets the carry ${FORGET_CARRY_RATE * 100}% of the time`, steps: 300, lr: 1e-3, batchSize: 32 },
    ],
    trainPrompt(rng) {
      return promptOf(drillProblem(rng));
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
      // Split by whether the units column carries: the sloppy student's error is all in `carry`, and a
      // policy that merely learned "always carry" would show accuracy_no_carry falling.
      const carries = (s: TaskSample) => {
        const p = parseArithmeticPrompt(s.prompt);
        return hasCarry(p.a, p.b, p.op);
      };
      const carry = samples.filter(carries);
      const plain = samples.filter((s) => !carries(s));
      return {
        accuracy: rate(samples, isExact),
        accuracy_carry: carry.length > 0 ? rate(carry, isExact) : 0,
        accuracy_no_carry: plain.length > 0 ? rate(plain, isExact) : 0,
        eos_rate: rate(samples, (s) => s.endedWithEos),
      };
    },
    isCorrect: isExact,
  };
}

export const arithmeticTask: Task = makeArithmeticTask();

/** Exposed for tests: the exact answer of a prompt. */
export function arithmeticAnswer(prompt: string): number {
  return answerOf(parseArithmeticPrompt(prompt));
}
