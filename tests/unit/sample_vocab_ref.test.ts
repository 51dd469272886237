// The sorted sampling reference (src/reference/seq/sampleVocab.ts) keeps exactly the tokens the
// pairwise one (keptProbabilities in src/reference/seq/sample.ts) keeps, with the same
// probabilities to float64 rounding, on random rows and rows of exact ties (±0 included); and its
// step follows sampleStepRef's contract with a list of EOS ids.
import { describe, expect, it } from 'vitest';
import { keptProbabilities, sampleStepRef } from '../../src/reference/seq/sample.ts';
import { keptProbabilitiesSorted, sampleVocabStepRef } from '../../src/reference/seq/sampleVocab.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const SETTINGS = [
  { temperature: 1, topK: 0, topP: 1 },
  { temperature: 0.7, topK: 5, topP: 1 },
  { temperature: 1.3, topK: 0, topP: 0.6 },
  { temperature: 0.5, topK: 12, topP: 0.8 },
  { temperature: 1, topK: 1, topP: 0.3 },
  { temperature: 1, topK: 0, topP: 0.01 },
];

describe('keptProbabilitiesSorted', () => {
  it.each(SETTINGS)('equals the pairwise keptProbabilities on random and tied rows (%o)', (s) => {
    const r = rng(17);
    for (let trial = 0; trial < 20; trial++) {
      const V = r.int(1, 60);
      const tied = trial % 2 === 1;
      const values = [-2, -0, 0, 0.25, 1, 3];
      const row = tied ? Array.from({ length: V }, () => values[r.int(0, values.length)]) : Array.from(randn(r, V, 2));
      const want = keptProbabilities(row, s);
      const got = keptProbabilitiesSorted(row, s);
      expect(got.map((x) => (x > 0 ? 1 : 0))).toEqual(want.map((x) => (x > 0 ? 1 : 0)));
      expectClose(got, want, 1e-12, 1e-15, `trial ${trial}`);
    }
  });
});

describe('sampleVocabStepRef', () => {
  it('with one EOS id equals sampleStepRef; a second EOS id finishes rows too', () => {
    const r = rng(18);
    const B = 40,
      V = 12,
      S = 3,
      pos = 2;
    const logits = randn(r, B * V, 1.5);
    const state = () => ({
      seq: new Float64Array(B * S),
      mask: new Float64Array(B * S),
      positions: new Float64Array(B * S).fill(4),
      fin: new Float64Array(B),
      lp: new Float64Array(B * S),
    });
    const a = state();
    const b = state();
    const p = { temperature: 0.9, topK: 8, topP: 0.9, seed: 12345, padId: 0 };
    sampleStepRef(logits, a.seq, a.mask, a.positions, a.fin, { B, V, S }, pos, { ...p, eosId: 3 }, a.lp);
    sampleVocabStepRef(logits, b.seq, b.mask, b.positions, b.fin, { B, V, S }, pos, { ...p, eosIds: [3] }, b.lp);
    expect(b).toEqual(a);
    const c = state();
    sampleVocabStepRef(logits, c.seq, c.mask, c.positions, c.fin, { B, V, S }, pos, { ...p, eosIds: [3, 5] }, c.lp);
    for (let row = 0; row < B; row++) expect(c.fin[row]).toBe([3, 5].includes(c.seq[row * S + pos]) ? 1 : 0);
    expect(c.seq).toEqual(a.seq);
  });
});
