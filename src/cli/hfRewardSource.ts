// Where `npm run train -- --model` gets its prompts and scores: a prompts file and the user's
// reward function (run in the page's QuickJS sandbox), or a built-in task (--task chat-arithmetic
// for chat models, or a playground task — arithmetic, sentiment, stop — whose prompts go without a
// chat template: fresh training prompts from the seed, fixed held-out prompts, the task's rule).
// Every problem is one InputRefusal naming the flag.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { RewardFunctionError } from '../rl/rewardFunction/problem.ts';
import { CompiledReward, loadRewardSandbox, scoreWithFunction } from '../rl/rewardFunction/sandbox.ts';
import { hfTaskRule } from '../rl/hf/hfTaskRule.ts';
import { CHAT_ARITHMETIC_NAME } from '../tasks/chatArithmetic.ts';
import { TASK_NAMES } from '../tasks/task.ts';
import { Rng } from '../util/rng.ts';
import { InputRefusal } from './hfModelArgs.ts';

/** The chat task, then the playground's tasks (src/rl/hf/hfTaskRule.ts). */
export const HF_TASKS = [CHAT_ARITHMETIC_NAME, ...TASK_NAMES] as const;

/** Training prompts drawn up front for a task (cycled past this many). */
const TASK_POOL = 4096;

export interface HfRewardSource {
  /** Training prompts, used in order and cycled. */
  train: string[];
  /** Held-out prompts for the greedy evaluation (none for a prompts file). */
  heldOut: string[];
  /** Scores a batch of (prompt text, response text, whether EOS ended it). */
  score(samples: { prompt: string; response: string; endedWithEos: boolean }[]): ArrayLike<number>;
  /** The rule a task scores with, for the evaluation; null for a reward function. */
  rule: ((prompt: string, response: string, endedWithEos: boolean) => number) | null;
  /** For the run's first line. */
  label: string;
  /** True when the prompts are meant for the chat template. */
  chat: boolean;
}

export interface RewardFlags {
  task?: string;
  prompts?: string;
  'reward-function'?: string;
}

function readText(flag: string, path: string): string {
  if (!existsSync(path) || !statSync(path).isFile()) throw new InputRefusal(`--${flag}: no file at ${path}`);
  return readFileSync(path, 'utf8');
}

export async function rewardSource(flags: RewardFlags, opts: { seed: number; prompts: number; evalCount: number }): Promise<HfRewardSource> {
  if (flags.task !== undefined) {
    if (flags.prompts !== undefined || flags['reward-function'] !== undefined)
      throw new InputRefusal(`--task ${flags.task} brings its own prompts and reward; leave out --prompts and --reward-function`);
    if (!(HF_TASKS as readonly string[]).includes(flags.task)) throw new InputRefusal(`--task = ${JSON.stringify(flags.task)}: allowed with --model: ${HF_TASKS.join(', ')}`);
    const task = hfTaskRule(flags.task as (typeof HF_TASKS)[number])!;
    const rng = new Rng(opts.seed);
    let heldOut: string[];
    try {
      heldOut = task.heldOut(opts.evalCount);
    } catch (e) {
      throw new InputRefusal(`--eval-count: ${(e as Error).message}`);
    }
    const chat = flags.task === CHAT_ARITHMETIC_NAME;
    return {
      train: Array.from({ length: Math.min(opts.prompts, TASK_POOL) }, () => task.trainPrompt(rng)),
      heldOut,
      score: (samples) => samples.map((s) => task.score(s.prompt, s.response, s.endedWithEos)),
      rule: task.score,
      label: chat
        ? `task ${CHAT_ARITHMETIC_NAME} (1 when the answer's last integer is the sum)`
        : `the playground's task ${flags.task} (its prompts without a chat template, its rule)`,
      chat,
    };
  }
  if (flags.prompts === undefined) throw new InputRefusal('--prompts FILE (one prompt a line) or --task is required');
  if (flags['reward-function'] === undefined) throw new InputRefusal('--reward-function FILE.js ((prompt, response) => number) is required with --prompts');
  const train = readText('prompts', flags.prompts)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  if (train.length === 0) throw new InputRefusal(`--prompts: ${flags.prompts} holds no prompt (one a line; blank lines are skipped)`);
  const source = readText('reward-function', flags['reward-function']);
  const sandbox = await loadRewardSandbox();
  const compiled = sandbox.compile(source);
  if (!(compiled instanceof CompiledReward)) throw new InputRefusal(`--reward-function: ${compiled.message}`);
  compiled.dispose();
  return {
    train,
    heldOut: [],
    score: (samples) => {
      try {
        return scoreWithFunction(
          sandbox,
          source,
          samples.map(({ prompt, response }) => ({ prompt, response })),
        );
      } catch (e) {
        if (e instanceof RewardFunctionError) throw new InputRefusal(`--reward-function: ${e.problem.message}`);
        throw e;
      }
    },
    rule: null,
    label: `${flags['reward-function']} (QuickJS sandbox)`,
    chat: false,
  };
}
