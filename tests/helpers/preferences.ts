// Sentiment preference pairs for the reward-model tests, drawn from a seeded stream.
import { lexiconScore, sentimentTask } from '../../src/tasks/sentiment.ts';
import type { PreferencePair } from '../../src/tasks/task.ts';
import { rng } from './random.ts';

/** `n` pairs as the task draws them (its labels carry the task's noise). */
export function pairsFrom(seed: number, n: number): PreferencePair[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => sentimentTask.preferencePair(r));
}

/** Held-out pairs labelled by the noiseless lexicon order (the task's true preference). */
export function cleanPairs(seed: number, n: number): PreferencePair[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const p = sentimentTask.preferencePair(r);
    return lexiconScore(p.chosen) > lexiconScore(p.rejected) ? p : { prompt: p.prompt, chosen: p.rejected, rejected: p.chosen };
  });
}
