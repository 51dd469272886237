// "Check yourself" (src/rl/inspect/questions.ts): every question's answer is the iteration's own
// number, and a student who works it out by hand from the numbers the question shows (rounded to 4
// decimals) is judged right, while a slip in the second decimal is judged wrong. The hand
// recomputations below are written out here, from the formulas, not taken from the page's code.
import { describe, expect, it } from 'vitest';
import { ANSWER_TOLERANCE, type ClipQuestion, clipChoices, isRight, type NumberQuestion, parseAnswer, questionsFor, shownValue } from '../../src/rl/inspect/questions.ts';
import { recomputeTrace } from '../../src/rl/inspect/index.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

const given = (q: NumberQuestion, tex: string) => {
  const g = q.given.find((x) => x.tex === tex);
  if (!g) throw new Error(`${q.kind}: no given ${tex} in ${q.given.map((x) => x.tex).join(', ')}`);
  return g.value;
};
const numberQuestion = (qs: ReturnType<typeof questionsFor>, kind: NumberQuestion['kind']) => qs.find((q): q is NumberQuestion => q.kind === kind);

/** Right by hand, wrong by a slip of 0.05 either way. */
function judgedAsAStudentWould(hand: number, q: NumberQuestion) {
  expect(isRight(hand, q.answer), `${q.kind}: hand ${hand} vs ${q.answer}`).toBe(true);
  expect(isRight(hand + 0.05 + 0.01 * Math.abs(hand), q.answer)).toBe(false);
  expect(isRight(hand - 0.05 - 0.01 * Math.abs(hand), q.answer)).toBe(false);
}

describe('check-yourself questions', () => {
  it('GAE, KL penalty and whitening: the answers are the iteration’s numbers, worked out by hand from the shown ones', () => {
    for (let seed = 0; seed < 12; seed++) {
      const trace = { ...buildTrace(rng(100 + seed), { holeRow: 1, lengthOneRow: 2 }), iter: 7 };
      const rec = recomputeTrace(trace);
      const qs = questionsFor(trace, rec, seed);
      expect(qs.map((q) => q.kind)).toEqual(['gae', 'kl', 'whiten', 'clip']);

      const gae = numberQuestion(qs, 'gae')!;
      const t = gae.t;
      expect(trace.actionMask[gae.row * trace.A + t]).toBe(1);
      expect(gae.answer).toBe(rec.advantagesRaw[gae.row * trace.A + t]);
      const hand = given(gae, `\\delta_{${t}}`) + given(gae, '\\gamma') * given(gae, '\\lambda') * given(gae, `A_{${t + 1}}`);
      judgedAsAStudentWould(hand, gae);

      const kl = numberQuestion(qs, 'kl')!;
      const i = kl.row * trace.A + kl.t;
      expect(kl.answer).toBe(-rec.rewardBeta * trace.stored.kl[i]); // the trainer's KL_t
      const d = given(kl, `\\log\\pi_{\\text{old}}(a_{${kl.t}})`) - given(kl, `\\log\\pi_{\\text{ref}}(a_{${kl.t}})`);
      expect(trace.knobs.klEstimator).toBe('k1');
      judgedAsAStudentWould(-given(kl, '\\beta') * d, kl);

      const w = numberQuestion(qs, 'whiten')!;
      expect(w.answer).toBe(trace.stored.advantages[w.row * trace.A + w.t]);
      const sigma = given(w, '\\sigma');
      judgedAsAStudentWould((given(w, `A_{${w.t}}`) - given(w, '\\mu')) / Math.sqrt(sigma * sigma + 1e-8), w);
    }
  });

  it('the clip: each listed token’s side follows from its ratio, its advantage and ε, as a student reads them', () => {
    let clipped = 0;
    for (let seed = 0; seed < 20; seed++) {
      const trace = { ...buildTrace(rng(200 + seed), { newSpread: 0.4, knobs: { dualClip: seed % 2 === 0 ? 3 : null } }), iter: 4 };
      const q = questionsFor(trace, recomputeTrace(trace), seed).find((x): x is ClipQuestion => x.kind === 'clip')!;
      expect(q.tokens.length).toBeGreaterThan(0);
      expect(q.tokens.length).toBeLessThanOrEqual(4);
      expect(clipChoices(q)).toEqual(q.dualClip === null ? ['none', 'high', 'low'] : ['none', 'high', 'low', 'dual']);
      expect(q.tokens.map((x) => x.t)).toEqual([...q.tokens.map((x) => x.t)].sort((a, b) => a - b));
      for (const x of q.tokens) {
        expect(trace.actionMask[q.row * trace.A + x.t]).toBe(1);
        // vanilla PPO by hand: A > 0 clips above 1 + ε_high; A < 0 below 1 − ε_low, and past c the dual clip
        const hand =
          x.advantage < 0 && q.dualClip !== null && x.ratio > q.dualClip
            ? 'dual'
            : x.advantage > 0 && x.ratio > 1 + q.clipHigh
              ? 'high'
              : x.advantage < 0 && x.ratio < 1 - q.clipLow
                ? 'low'
                : 'none';
        expect(x.side, `seed ${seed} t ${x.t}: r ${x.ratio}, A ${x.advantage}`).toBe(hand);
        if (x.side !== 'none') clipped++;
      }
    }
    expect(clipped).toBeGreaterThan(10);
  });

  it('a group estimator asks for a response’s advantage from its group’s scores', () => {
    for (const [estimator, byHand] of [
      [
        'group_norm',
        (s: number, xs: number[]) => {
          const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
          const std = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
          return (s - mean) / (std + 1e-9);
        },
      ],
      ['dr_grpo', (s: number, xs: number[]) => s - xs.reduce((a, b) => a + b, 0) / xs.length],
      ['rloo', (s: number, xs: number[]) => s - (xs.reduce((a, b) => a + b, 0) - s) / (xs.length - 1)],
    ] as const) {
      for (let seed = 0; seed < 6; seed++) {
        // KL in the loss, not the reward: every token of a response carries its s̃
        const trace = { ...buildTrace(rng(300 + seed), { knobs: { advantageEstimator: estimator, whiten: false, klInReward: false, useKlLoss: true } }), iter: 2 };
        const rec = recomputeTrace(trace);
        const qs = questionsFor(trace, rec, seed);
        expect(qs.map((q) => q.kind)).toEqual(['group', 'clip']);
        const q = numberQuestion(qs, 'group')!;
        const members = Array.from({ length: trace.B }, (_, b) => b).filter((b) => trace.group[b] === trace.group[q.row]);
        expect(q.given.map((g) => g.value)).toEqual(members.map((b) => shownValue(trace.scores[b])));
        expect(q.answer).toBe(trace.stored.advantages[q.row * trace.A + q.t]);
        const own = q.given[members.indexOf(q.row)];
        expect(own.tex).toContain('\\star');
        judgedAsAStudentWould(
          byHand(
            own.value,
            q.given.map((g) => g.value),
          ),
          q,
        );
      }
    }
  });

  it('leaves out what the iteration does not have, and draws the same questions for the same seed', () => {
    const trace = { ...buildTrace(rng(400), { knobs: { klInReward: false, lossMode: 'cispo' } }), iter: 1 };
    const rec = recomputeTrace(trace);
    expect(questionsFor(trace, rec, 3).map((q) => q.kind)).toEqual(['gae', 'whiten']);
    expect(questionsFor(trace, rec, 3)).toEqual(questionsFor(trace, rec, 3));
    const positions = new Set(Array.from({ length: 10 }, (_, s) => JSON.stringify(questionsFor(trace, rec, s).map((q) => [q.row, q.t]))));
    expect(positions.size).toBeGreaterThan(3);
    // Nothing to ask about an all-masked batch.
    const empty = buildTrace(rng(401), { prompts: 1, samples: 2, allMaskedRow: 0 });
    empty.actionMask.fill(0);
    expect(questionsFor(empty, recomputeTrace(empty), 1)).toEqual([]);
  });

  it('reads what a student types, and states its tolerance', () => {
    expect(parseAnswer(' -0.25 ')).toBe(-0.25);
    expect(parseAnswer('\u22120.25')).toBe(-0.25);
    expect(parseAnswer('0,25')).toBe(0.25);
    expect(parseAnswer('.5')).toBe(0.5);
    expect(parseAnswer('1e-3')).toBe(0.001);
    expect(parseAnswer('+3')).toBe(3);
    for (const bad of ['', 'abc', '1,000.5', '1.2.3', '--1', 'NaN', 'Infinity', '1/2', '0x10']) expect(parseAnswer(bad), bad).toBeNull();
    expect(ANSWER_TOLERANCE).toEqual({ abs: 0.005, rel: 0.005 });
    expect(isRight(1.0149, 1.01)).toBe(true); // 0.0049 ≤ 0.005 + 0.00505
    expect(isRight(1.021, 1.01)).toBe(false);
    expect(isRight(-100.4, -100)).toBe(true); // 0.4 ≤ 0.005 + 0.5
    expect(isRight(-100.6, -100)).toBe(false);
  });
});
