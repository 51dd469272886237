// Task registry: the trainer and the CLIs look a task up by name.
import { CharTokenizer } from '../model/tokenizer.ts';
import { arithmeticTask } from './arithmetic.ts';
import { sentimentTask } from './sentiment.ts';
import { stopTask } from './stop.ts';
import { TASK_NAMES, type Task, type TaskName } from './task.ts';

export { TASK_NAMES, type PreferencePair, type SftExample, type SftPhase, type Task, type TaskName, type TaskSample } from './task.ts';

export const TASKS_BY_NAME: Readonly<Record<TaskName, Task>> = {
  arithmetic: arithmeticTask,
  sentiment: sentimentTask,
  stop: stopTask,
};

export function getTask(name: string): Task {
  // hasOwn so that "toString" and friends are not mistaken for tasks.
  if (!Object.hasOwn(TASKS_BY_NAME, name)) throw new Error(`unknown task "${name}" (available: ${TASK_NAMES.join(', ')})`);
  return TASKS_BY_NAME[name as TaskName];
}

/** The tokenizer a task's model uses; its alphabet goes into checkpoint metadata. */
export function taskTokenizer(task: Task): CharTokenizer {
  return new CharTokenizer(task.alphabet);
}
