// What a task is to the trainer: an SFT corpus, a prompt generator, fixed held-out evaluation
// prompts, and a rule reward. Every string a task produces uses only `alphabet`, so the task's
// CharTokenizer can encode it (tests check this closure).
import type { Rng } from '../util/rng.ts';

/** The one list of task names: the config's choices, the registry's keys (src/tasks/index.ts). */
export const TASK_NAMES = ['arithmetic', 'sentiment', 'stop'] as const;
export type TaskName = (typeof TASK_NAMES)[number];

/** One finished rollout, decoded: `response` excludes the EOS token, `endedWithEos` says whether one was emitted. */
export interface TaskSample {
  prompt: string;
  response: string;
  endedWithEos: boolean;
}

/** An example of an SFT corpus: the response is followed by EOS in training. */
export interface SftExample {
  prompt: string;
  response: string;
}

/**
 * One phase of the recipe `npm run pretrain` follows to make a task's shipped SFT checkpoint:
 * `steps` AdamW steps of `batchSize` examples, peak learning rate `lr` (warm-up, then cosine decay).
 */
export interface SftPhase {
  /** What the phase teaches, for the log and docs/learning.md ("tutor: correct answers"). */
  label: string;
  steps: number;
  lr: number;
  batchSize: number;
  /** Where its examples come from; the task's own `sftExample` corpus when absent. */
  example?(rng: Rng): SftExample;
}

/** Synthetic human preference for training a Bradley–Terry reward model. */
export interface PreferencePair {
  prompt: string;
  chosen: string;
  rejected: string;
}

export interface Task {
  name: TaskName;
  /** Shown in the UI. */
  title: string;
  description: string;
  /** Every character prompts and responses may use. */
  alphabet: string;
  maxPromptChars: number;
  maxResponseChars: number;
  /** One example of the SFT corpus the shipped model imitates last (noisy where the task says so). */
  sftExample(rng: Rng): SftExample;
  /** The phases, in order, that make the shipped SFT checkpoint (the last one usually the task's own corpus). */
  sftRecipe: readonly SftPhase[];
  trainPrompt(rng: Rng): string;
  /** Fixed held-out prompts from the task's own seed (the same list on every call). */
  evalPrompts(count: number): string[];
  /** The rule reward of one sample. */
  ruleScore(s: TaskSample): number;
  /** Task metric(s) over a batch of samples. */
  evaluate(samples: TaskSample[]): Record<string, number>;
  /** Whether one sample is right, on tasks with a correctness notion (held-out pass@k counts these). */
  isCorrect?(s: TaskSample): boolean;
  /** Present on tasks that can train a learned reward model. */
  preferencePair?(rng: Rng): PreferencePair;
}
