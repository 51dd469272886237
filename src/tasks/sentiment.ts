// Sentiment steering: prompts are sentence starts ("the food was"), the response finishes the
// sentence (" really great."). The SFT corpus is a balanced mix of positive, negative and neutral
// endings; PPO is rewarded for positive ones. Vocabulary is lowercase letters, space and period.
//
// Rule reward (lexicon score): split the response into words (runs of letters), count words in
// POSITIVE_WORDS minus words in NEGATIVE_WORDS, clip to [−3, 3]. No negation handling: "not"
// is not in the grammar, so the count is the whole story — and a policy that repeats "great"
// is rewarded up to the clip, which the distinct-n metrics make visible.
import { Rng } from '../util/rng.ts';
import { distinctN, mean, rate, words } from './metrics.ts';
import type { PreferencePair, Task, TaskSample } from './task.ts';

export const POSITIVE_WORDS = ['great', 'good', 'fun', 'lovely', 'nice', 'superb', 'warm', 'fresh'] as const;
export const NEGATIVE_WORDS = ['bad', 'awful', 'dull', 'poor', 'boring', 'sad', 'rude', 'stale'] as const;
export const NEUTRAL_WORDS = ['okay', 'long', 'short', 'new', 'old', 'loud', 'quiet', 'plain'] as const;
export const INTENSIFIERS = ['very', 'really', 'quite', 'so', 'rather'] as const;
export const SUBJECTS = ['food', 'film', 'book', 'show', 'game', 'song', 'meal', 'room', 'view', 'plot', 'staff', 'hotel'] as const;
export const VERBS = ['was', 'is', 'seems', 'felt', 'looked'] as const;
export const LEXICON_CLIP = 3;
/** Probability that a preference pair's label is flipped (annotator noise). */
export const PREFERENCE_LABEL_NOISE = 0.1;
const EVAL_SEED = 0x5e47;

const POSITIVE = new Set<string>(POSITIVE_WORDS);
const NEGATIVE = new Set<string>(NEGATIVE_WORDS);

export type Polarity = 'positive' | 'negative' | 'neutral';
const POLARITIES: Polarity[] = ['positive', 'negative', 'neutral'];
const ADJECTIVES: Record<Polarity, readonly string[]> = {
  positive: POSITIVE_WORDS,
  negative: NEGATIVE_WORDS,
  neutral: NEUTRAL_WORDS,
};

/** (#positive − #negative lexicon words), clipped to [−LEXICON_CLIP, LEXICON_CLIP]. */
export function lexiconScore(text: string): number {
  let s = 0;
  for (const w of words(text)) s += POSITIVE.has(w) ? 1 : NEGATIVE.has(w) ? -1 : 0;
  return Math.max(-LEXICON_CLIP, Math.min(LEXICON_CLIP, s));
}

/**
 * Held out for evaluation: subject/verb pairs with (subject index + verb index) % 5 === 0
 * (12 of the 60 sentence starts). The ending grammar does not depend on the start, so this tests
 * whether a learned preference carries over to unseen starts.
 */
export function isHeldOutStart(subjectIdx: number, verbIdx: number): boolean {
  return (subjectIdx + verbIdx) % 5 === 0;
}

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(0, xs.length)];
}

/** One grammatical ending of the given polarity: " adj.", " intensifier adj." or " adj and adj.". */
export function sentenceEnding(rng: Rng, polarity: Polarity): string {
  const adj = ADJECTIVES[polarity];
  const form = rng.int(0, 3);
  if (form === 0) return ` ${pick(rng, adj)}.`;
  if (form === 1) return ` ${pick(rng, INTENSIFIERS)} ${pick(rng, adj)}.`;
  const first = pick(rng, adj);
  let second = pick(rng, adj);
  while (second === first) second = pick(rng, adj);
  return ` ${first} and ${second}.`;
}

function trainStart(rng: Rng): string {
  for (;;) {
    const s = rng.int(0, SUBJECTS.length);
    const v = rng.int(0, VERBS.length);
    if (!isHeldOutStart(s, v)) return `the ${SUBJECTS[s]} ${VERBS[v]}`;
  }
}

const heldOutStarts: string[] = [];
SUBJECTS.forEach((subj, s) => {
  VERBS.forEach((verb, v) => {
    if (isHeldOutStart(s, v)) heldOutStarts.push(`the ${subj} ${verb}`);
  });
});

export interface SentimentTask extends Task {
  preferencePair(rng: Rng): PreferencePair;
}

export const sentimentTask: SentimentTask = {
  name: 'sentiment',
  title: 'Positive sentiment',
  description:
    'Finish a sentence start like "the food was". The SFT model writes positive, negative and neutral endings equally often; ' +
    `the reward is (#positive − #negative lexicon words) clipped to ±${LEXICON_CLIP}, or a reward model trained on preference pairs.`,
  alphabet: 'abcdefghijklmnopqrstuvwxyz .',
  maxPromptChars: 16, // "the hotel looked"
  maxResponseChars: 24, // longest grammatical ending " boring and superb." is 19
  sftRecipe: [{ label: 'fluent sentence endings, every polarity', steps: 600, lr: 3e-3, batchSize: 16 }],
  sftExample(rng) {
    return { prompt: trainStart(rng), response: sentenceEnding(rng, pick(rng, POLARITIES)) };
  },
  trainPrompt: trainStart,
  evalPrompts(count) {
    // Cycle through the held-out starts in a fixed shuffled order so every start gets its share.
    const order = new Rng(EVAL_SEED).shuffle([...heldOutStarts]);
    return Array.from({ length: count }, (_, i) => order[i % order.length]);
  },
  ruleScore(s: TaskSample) {
    return lexiconScore(s.response);
  },
  evaluate(samples) {
    const responses = samples.map((s) => s.response);
    return {
      positive_rate: rate(responses, (r) => lexiconScore(r) > 0),
      lexicon_score_mean: mean(responses.map(lexiconScore)),
      distinct_1: distinctN(responses, 1),
      distinct_2: distinctN(responses, 2),
      mean_length: mean(responses.map((r) => r.length)),
      eos_rate: rate(samples, (s) => s.endedWithEos),
    };
  },
  /**
   * Two SFT-style endings of different polarities for one training prompt. The one with the higher
   * lexicon score is `chosen`, except that with probability PREFERENCE_LABEL_NOISE the labels are
   * swapped, as a stand-in for annotator disagreement. Ties are redrawn, so a pair always differs.
   */
  preferencePair(rng) {
    const prompt = trainStart(rng);
    for (;;) {
      const x = sentenceEnding(rng, pick(rng, POLARITIES));
      const y = sentenceEnding(rng, pick(rng, POLARITIES));
      const dx = lexiconScore(x);
      const dy = lexiconScore(y);
      if (dx === dy) continue;
      const [better, worse] = dx > dy ? [x, y] : [y, x];
      const flip = rng.next() < PREFERENCE_LABEL_NOISE;
      return flip ? { prompt, chosen: worse, rejected: better } : { prompt, chosen: better, rejected: worse };
    }
  },
};
