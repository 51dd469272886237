// What a task brings to a run of your own model: fresh training prompts from the run's generator,
// fixed held-out prompts, and the rule that scores an answer. The chat task (arithmetic asked in
// words, through the chat template) or one of the playground's tasks — its prompts as its
// character model reads them, scored by its own rule, which may ask whether EOS ended the answer.
import { chatArithmeticEvalPrompts, chatArithmeticScore, chatArithmeticTrainPrompt } from '../../tasks/chatArithmetic.ts';
import { getTask } from '../../tasks/index.ts';
import type { Rng } from '../../util/rng.ts';
import { type HfTrainReward, playgroundTaskOf } from './hfTrainSettings.ts';

export interface HfTaskRule {
  trainPrompt(rng: Rng): string;
  /** The first `count` held-out prompts (the same list on every call). */
  heldOut(count: number): string[];
  /** The answer's score; `endedWithEos` false when it ran out of new tokens. */
  score(prompt: string, response: string, endedWithEos: boolean): number;
}

/** The rule of a task reward, or null for the page's reward function. */
export function hfTaskRule(reward: HfTrainReward): HfTaskRule | null {
  if (reward === 'chat-arithmetic')
    return { trainPrompt: chatArithmeticTrainPrompt, heldOut: chatArithmeticEvalPrompts, score: (prompt, response) => chatArithmeticScore(prompt, response) };
  const name = playgroundTaskOf(reward);
  if (name === null) return null;
  const task = getTask(name);
  return {
    trainPrompt: (rng) => task.trainPrompt(rng),
    heldOut: (count) => task.evalPrompts(count),
    score: (prompt, response, endedWithEos) => task.ruleScore({ prompt, response, endedWithEos }),
  };
}

/** Whether a generated response (its ids, EOS included when drawn: hfGenerate.ts) ended with an EOS id. */
export function endsWithEos(ids: readonly number[], eosIds: readonly number[]): boolean {
  return ids.length > 0 && eosIds.includes(ids[ids.length - 1]);
}
