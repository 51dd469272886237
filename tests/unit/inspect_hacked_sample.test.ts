// The reward hack the inspector opens on: the best-scored response among the half of the batch
// furthest from the reference (lowest mean log π_ref per action token), not simply the best score.
import { describe, expect, it } from 'vitest';
import { hackedSample, meanRefLogprob } from '../../src/rl/inspect/hackedSample.ts';

/** A batch of rows given as [score, log π_ref per action token]; rows padded to the longest. */
function batch(rows: [number, number[]][]) {
  const B = rows.length;
  const A = Math.max(1, ...rows.map((r) => r[1].length));
  const actionMask = new Float64Array(B * A);
  const refLogprobs = new Float64Array(B * A).fill(123); // padding garbage must not count
  rows.forEach(([, ref], b) => {
    ref.forEach((x, a) => {
      actionMask[b * A + a] = 1;
      refLogprobs[b * A + a] = x;
    });
  });
  return { B, A, actionMask, refLogprobs, scores: Float64Array.from(rows.map((r) => r[0])) };
}

describe('hacked sample', () => {
  it('mean log π_ref counts action tokens only', () => {
    const t = batch([
      [0, [-1, -3]],
      [0, [-2]],
    ]);
    expect(meanRefLogprob(t, 0)).toBe(-2);
    expect(meanRefLogprob(t, 1)).toBe(-2);
  });

  it('skips the best score when that text is close to the reference', () => {
    const t = batch([
      [2.0, [-0.5, -0.6]], // best score, fluent: not a hack
      [1.2, [-4.0, -5.0]], // far from the reference, scored high: the hack
      [0.3, [-6.0, -6.5]], // furthest, scored low
      [0.9, [-0.7, -0.4]],
    ]);
    expect(hackedSample(t)).toBe(1);
  });

  it('ties in score go to the response further from the reference', () => {
    const t = batch([
      [1, [-3]],
      [1, [-5]],
      [0, [-0.1]],
      [0, [-0.2]],
    ]);
    expect(hackedSample(t)).toBe(1);
  });

  it('a row without action tokens is never chosen; an empty batch has none', () => {
    const t = batch([
      [5, []],
      [0.1, [-2]],
      [0.2, [-1]],
    ]);
    expect(hackedSample(t)).toBe(1);
    expect(hackedSample({ B: 0, A: 1, actionMask: new Float64Array(0), refLogprobs: new Float64Array(0), scores: new Float64Array(0) })).toBe(-1);
  });
});
