// What can go wrong with a reward function the user wrote, named so the page can say it next to
// the sample that caused it. No interpreter here: the page imports this file, and the page itself
// never runs the function (its CSP has no 'wasm-unsafe-eval'; the trainer worker runs it).

/** The limits a written reward function runs under (docs/decisions.md, "A reward you write"). */
export const REWARD_FUNCTION_LIMITS = {
  /** Source size, in UTF-8 bytes. */
  maxSourceBytes: 8 * 1024,
  /** Wall-clock budget of one call. */
  callMs: 50,
  /** Wall-clock budget of all the calls scoring one batch. */
  batchMs: 2000,
  /** Evaluating the source (its top-level code runs too). */
  compileMs: 200,
  /** The interpreter's own allocation count; this build cannot size every allocation, so also: */
  memoryBytes: 16 * 1024 * 1024,
  /** The WebAssembly memory the interpreter lives in: a hard ceiling, whatever it allocates. */
  wasmMemoryBytes: 64 * 1024 * 1024,
  /** The interpreter's stack: deep recursion stops here, not in the worker. */
  stackBytes: 256 * 1024,
} as const;

export const REWARD_PROBLEM_KINDS = ['too-large', 'syntax', 'not-a-function', 'threw', 'timeout', 'batch-timeout', 'memory', 'not-a-number'] as const;
export type RewardProblemKind = (typeof REWARD_PROBLEM_KINDS)[number];

/** The prompt and response a call was given. */
export interface RewardSample {
  prompt: string;
  response: string;
}

/** One refused call (or a source refused before any call): what, why, and on which sample. */
export interface RewardFunctionProblem {
  kind: RewardProblemKind;
  /** One sentence naming the problem and what is allowed. */
  message: string;
  sample?: RewardSample;
}

/** A reward function refused during scoring: the iteration is abandoned before any weight moves. */
export class RewardFunctionError extends Error {
  constructor(readonly problem: RewardFunctionProblem) {
    super(`reward function: ${problem.message}`);
    this.name = 'RewardFunctionError';
  }
}

export function sourceBytes(source: string): number {
  return new TextEncoder().encode(source).length;
}

/** The source-size problem, or null: checked before the interpreter sees the text. */
export function sourceSizeProblem(source: string): RewardFunctionProblem | null {
  const bytes = sourceBytes(source);
  const max = REWARD_FUNCTION_LIMITS.maxSourceBytes;
  return bytes > max ? { kind: 'too-large', message: `the source is ${bytes} bytes; allowed: at most ${max} bytes (8 KiB)` } : null;
}
