import { describe, expect, it } from 'vitest';
import {
  INTENSIFIERS,
  isHeldOutStart,
  lexiconScore,
  NEGATIVE_WORDS,
  NEUTRAL_WORDS,
  POSITIVE_WORDS,
  PREFERENCE_LABEL_NOISE,
  sentimentTask,
  SUBJECTS,
  VERBS,
} from '../../src/tasks/sentiment.ts';
import { Rng } from '../../src/util/rng.ts';

const sample = (response: string, endedWithEos = true) => ({ prompt: 'the food was', response, endedWithEos });

describe('sentiment task', () => {
  it('keeps the lexicons disjoint', () => {
    const all = [...POSITIVE_WORDS, ...NEGATIVE_WORDS, ...NEUTRAL_WORDS, ...INTENSIFIERS];
    expect(new Set(all).size).toBe(all.length);
  });

  it('scores (#positive − #negative) words, clipped to ±3, whole words only', () => {
    expect(lexiconScore(' great.')).toBe(1);
    expect(lexiconScore(' really awful.')).toBe(-1);
    expect(lexiconScore(' good and bad.')).toBe(0);
    expect(lexiconScore(' okay.')).toBe(0);
    expect(lexiconScore(' great and fun.')).toBe(2);
    expect(lexiconScore(' great great great great great.')).toBe(3);
    expect(lexiconScore(' sad sad rude dull bad')).toBe(-3);
    expect(lexiconScore(' greatness and badly.')).toBe(0);
    expect(lexiconScore('')).toBe(0);
    expect(sentimentTask.ruleScore(sample(' superb and lovely.'))).toBe(2);
    expect(sentimentTask.ruleScore(sample(' superb', false))).toBe(1);
  });

  it('draws a balanced mix of positive, negative and neutral SFT endings', () => {
    const r = new Rng(12);
    const n = 6000;
    const counts = { pos: 0, neg: 0, zero: 0 };
    for (let i = 0; i < n; i++) {
      const s = lexiconScore(sentimentTask.sftExample(r).response);
      if (s > 0) counts.pos++;
      else if (s < 0) counts.neg++;
      else counts.zero++;
    }
    // each third has sd ≈ sqrt(2/9/6000) ≈ 0.006
    for (const c of Object.values(counts)) expect(Math.abs(c / n - 1 / 3)).toBeLessThan(0.03);
  });

  it('writes grammatical endings: " adj.", " intensifier adj." or " adj and adj."', () => {
    const adj = `(${[...POSITIVE_WORDS, ...NEGATIVE_WORDS, ...NEUTRAL_WORDS].join('|')})`;
    const re = new RegExp(`^ ((${INTENSIFIERS.join('|')}) )?${adj}\\.$|^ ${adj} and ${adj}\\.$`);
    const r = new Rng(3);
    for (let i = 0; i < 1000; i++) expect(sentimentTask.sftExample(r).response).toMatch(re);
  });

  it('holds out 12 sentence starts for evaluation and never trains on them', () => {
    const heldOut = new Set<string>();
    for (const [i, s] of SUBJECTS.entries()) {
      for (const [j, v] of VERBS.entries()) if (isHeldOutStart(i, j)) heldOut.add(`the ${s} ${v}`);
    }
    expect(heldOut.size).toBe(12);
    const evalSet = sentimentTask.evalPrompts(24);
    expect(new Set(evalSet)).toEqual(heldOut);
    const r = new Rng(5);
    for (let i = 0; i < 3000; i++) {
      expect(heldOut.has(sentimentTask.trainPrompt(r))).toBe(false);
      expect(heldOut.has(sentimentTask.sftExample(r).prompt)).toBe(false);
      expect(heldOut.has(sentimentTask.preferencePair(r).prompt)).toBe(false);
    }
  });

  it('prefers the more positive ending except for ~10% label noise', () => {
    const r = new Rng(21);
    const n = 5000;
    let flipped = 0;
    for (let i = 0; i < n; i++) {
      const p = sentimentTask.preferencePair(r);
      const dc = lexiconScore(p.chosen);
      const dr = lexiconScore(p.rejected);
      expect(dc).not.toBe(dr);
      if (dc < dr) flipped++;
    }
    // sd = sqrt(0.09/5000) ≈ 0.0042
    expect(Math.abs(flipped / n - PREFERENCE_LABEL_NOISE)).toBeLessThan(0.025);
  });

  it('evaluates positivity, diversity and length on a hand-computed batch', () => {
    const m = sentimentTask.evaluate([sample(' great.'), sample(' great.'), sample(' bad and dull.', false), sample('')]);
    // scores 1, 1, −2, 0; words: great | great | bad and dull -> 5 unigrams, 4 unique; bigrams (bad and)(and dull) -> 2/2
    expect(m.positive_rate).toBe(0.5);
    expect(m.lexicon_score_mean).toBe(0);
    expect(m.distinct_1).toBeCloseTo(4 / 5, 15);
    expect(m.distinct_2).toBe(1);
    expect(m.mean_length).toBe((7 + 7 + 14 + 0) / 4);
    expect(m.eos_rate).toBe(0.75);
  });
});
