// The job's dataset rows: the playground's own prompts (the task's training generator with the run
// seed, and its fixed held-out prompts), each as chat messages plus what the rule needs to score a
// response. One row layout serves both engines: verl reads data_source / prompt / ability /
// reward_model / extra_info, OpenRLHF reads `prompt` (--data.input_key) and `label` (--data.label_key).
import type { PpoConfig } from '../rl/config.ts';
import { arithmeticAnswer, formatNumber } from '../tasks/arithmetic.ts';
import { getTask } from '../tasks/index.ts';
import { parseStopPrompt } from '../tasks/stop.ts';
import type { TaskName } from '../tasks/task.ts';
import { Rng } from '../util/rng.ts';

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

export interface JobRow {
  data_source: string;
  prompt: ChatMessage[];
  ability: string;
  reward_model: { style: 'rule'; ground_truth: string };
  extra_info: { split: 'train' | 'test'; index: number; playground_prompt: string };
  /** The same ground truth, flat, for OpenRLHF's --data.label_key. */
  label: string;
}

export const dataSource = (task: TaskName) => `ppo_playground/${task}`;

/** What the task asks, told to a chat model once per prompt (the playground's model learns it from SFT data). */
const INSTRUCTIONS: Record<TaskName, string> = {
  arithmetic: 'Add the two numbers. Reply with the sum as exactly two digits (a leading zero below 10, e.g. 08): no words, no spaces, nothing after it.',
  stop: 'The message "n=K:" asks for exactly K characters. Reply with exactly K characters, each "a" or "b", and nothing else.',
  sentiment: 'Finish the sentence the user starts. Reply with the rest of the sentence only, starting with a space and ending with a period.',
};

const ABILITY: Record<TaskName, string> = { arithmetic: 'math', stop: 'length_control', sentiment: 'sentiment' };

/** What reward.py needs besides the response: the answer, the target length, or nothing (lexicon). */
export function groundTruth(task: TaskName, prompt: string): string {
  // The answer exactly as the playground's rule wants it: two digits, zero-padded ("03+05=" → "08").
  if (task === 'arithmetic') return formatNumber(arithmeticAnswer(prompt));
  if (task === 'stop') return String(parseStopPrompt(prompt));
  return '';
}

function row(task: TaskName, prompt: string, split: 'train' | 'test', index: number): JobRow {
  const truth = groundTruth(task, prompt);
  return {
    data_source: dataSource(task),
    prompt: [
      { role: 'system', content: INSTRUCTIONS[task] },
      { role: 'user', content: prompt },
    ],
    ability: ABILITY[task],
    reward_model: { style: 'rule', ground_truth: truth },
    extra_info: { split, index, playground_prompt: prompt },
    label: truth,
  };
}

/**
 * Every distinct held-out prompt once, in the task's fixed order. evalPrompts(n) repeats its list
 * after the last distinct prompt, so reading until the first repeat yields the whole set.
 */
export function heldOutPrompts(task: TaskName): string[] {
  const all = getTask(task).evalPrompts(10_000);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of all) {
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(p);
  }
  return out;
}

export interface JobDataset {
  train: JobRow[];
  test: JobRow[];
}

/**
 * train: `trainRows` prompts from the task's training generator, seeded like the playground's run
 * (repeats included, as the playground samples them); test: the held-out prompts.
 */
export function buildDataset(config: PpoConfig, trainRows: number): JobDataset {
  const task = getTask(config.task);
  const rng = new Rng(config.seed);
  const train = Array.from({ length: trainRows }, (_, i) => row(config.task, task.trainPrompt(rng), 'train', i));
  const test = heldOutPrompts(config.task).map((p, i) => row(config.task, p, 'test', i));
  return { train, test };
}
