import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { SampleParams } from '../../src/reference/seq/sample.ts';
import { keptProbabilities, sampleStepRef } from '../../src/reference/seq/sample.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { randn, rng } from '../helpers/random.ts';
import { sampleStep } from '../../src/ops/sampleStep.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const EOS = 1,
  PAD = 0;
const params = (p: Partial<SampleParams>): SampleParams => ({ temperature: 1, topK: 0, topP: 1, seed: 1, eosId: EOS, padId: PAD, ...p });

interface State {
  sequences: Float64Array;
  mask: Float64Array;
  positions: Float64Array;
  finished: Float64Array;
}

/** A fresh (B,S) state: positions[b, pos−1] = b + 3 so that the +1 rule is visible. */
function initialState(B: number, S: number, pos: number, finished?: number[]): State {
  const positions = new Float64Array(B * S);
  if (pos > 0) for (let b = 0; b < B; b++) positions[b * S + pos - 1] = b + 3;
  return {
    sequences: new Float64Array(B * S).fill(7),
    mask: new Float64Array(B * S).fill(0.5),
    positions,
    finished: Float64Array.from(finished ?? new Array(B).fill(0)),
  };
}

/** Runs one sampleStep on `be` from `init` and reads the state back. */
async function step(be: Backend, logits: Float64Array, V: number, S: number, pos: number, p: SampleParams, init: State): Promise<State> {
  const B = logits.length / V;
  const t = {
    sequences: be.tensor(init.sequences, [B, S], 'i32'),
    mask: be.tensor(init.mask, [B, S]),
    positions: be.tensor(init.positions, [B, S], 'i32'),
    finished: be.tensor(init.finished, [B], 'i32'),
  };
  sampleStep(be, { logits: be.tensor(logits, [B, V]), sequences: t.sequences, attnMask: t.mask, positions: t.positions, finished: t.finished, pos, params: p });
  const [sequences, mask, positions, finished] = await be.readMany([t.sequences, t.mask, t.positions, t.finished]);
  return { sequences, mask, positions, finished };
}

const column = (x: Float64Array, B: number, S: number, pos: number) => Array.from({ length: B }, (_, b) => x[b * S + pos]);
const argmax = (row: ArrayLike<number>) => {
  let best = 0;
  for (let v = 1; v < row.length; v++) if (row[v] > row[best]) best = v;
  return best;
};

const SETTINGS: [string, Partial<SampleParams>][] = [
  ['plain', {}],
  ['temperature 0.7, top-k 10', { temperature: 0.7, topK: 10 }],
  ['top-p 0.8', { topP: 0.8 }],
  ['top-k 20 then top-p 0.9', { temperature: 1.3, topK: 20, topP: 0.9 }],
];

describe.each(BACKENDS)('sampleStep on %s', (_name, makeBackend) => {
  it.each(SETTINGS)('same seed gives the same tokens as the float64 reference (%s)', async (_label, extra) => {
    const be = await makeBackend();
    const r = rng(31);
    const B = 48,
      V = 50,
      S = 4,
      pos = 2;
    const logits = f32(randn(r, B * V, 2));
    const p = params({ ...extra, seed: r.nextU32() });
    const a = await step(be, logits, V, S, pos, p, initialState(B, S, pos));
    const b = await step(be, logits, V, S, pos, p, initialState(B, S, pos));
    const ref = initialState(B, S, pos);
    sampleStepRef(logits, ref.sequences, ref.mask, ref.positions, ref.finished, { B, V, S }, pos, p);
    expect(Array.from(a.sequences)).toEqual(Array.from(b.sequences));
    expect(column(a.sequences, B, S, pos)).toEqual(column(ref.sequences, B, S, pos));
    expect(Array.from(a.mask)).toEqual(Array.from(ref.mask));
    expect(Array.from(a.positions)).toEqual(Array.from(ref.positions));
    expect(Array.from(a.finished)).toEqual(Array.from(ref.finished));
  });

  // The fused sampler gives each row one workgroup of 64 threads: a vocabulary of 150 makes every
  // thread rank several tokens (150 = 2·64 + 22, a ragged last round).
  it.each(SETTINGS)('a vocabulary larger than a workgroup (V = 150) matches the float64 reference (%s)', async (_label, extra) => {
    const be = await makeBackend();
    const r = rng(37);
    const B = 9,
      V = 150,
      S = 3,
      pos = 1;
    const logits = f32(randn(r, B * V, 3));
    const p = params({ ...extra, seed: r.nextU32() });
    const a = await step(be, logits, V, S, pos, p, initialState(B, S, pos));
    const ref = initialState(B, S, pos);
    sampleStepRef(logits, ref.sequences, ref.mask, ref.positions, ref.finished, { B, V, S }, pos, p);
    expect(column(a.sequences, B, S, pos)).toEqual(column(ref.sequences, B, S, pos));
    expect(Array.from(a.finished)).toEqual(Array.from(ref.finished));
  });

  it('a different seed draws different tokens', async () => {
    const be = await makeBackend();
    const B = 64,
      V = 16,
      S = 2;
    const logits = new Float64Array(B * V); // uniform over 16 tokens
    const seed = rng(32).nextU32();
    const a = await step(be, logits, V, S, 1, params({ seed }), initialState(B, S, 1));
    const b = await step(be, logits, V, S, 1, params({ seed: seed + 1 }), initialState(B, S, 1));
    const differ = column(a.sequences, B, S, 1).filter((x, i) => x !== column(b.sequences, B, S, 1)[i]).length;
    expect(differ).toBeGreaterThan(B / 2); // expected 60 of 64
  });

  it('top-k = 1 and a tiny top-p both pick the argmax (ties: lower token id)', async () => {
    const be = await makeBackend();
    const r = rng(33);
    const B = 32,
      V = 40,
      S = 3,
      pos = 1;
    const logits = f32(randn(r, B * V, 3));
    for (let b = 0; b < 4; b++) {
      // rows 0..3: the maximum appears twice; the lower id must win
      const row = logits.subarray(b * V, (b + 1) * V);
      const m = Math.max(...row);
      row[5 + b] = m + 1;
      row[20 + b] = m + 1;
    }
    const expected = Array.from({ length: B }, (_, b) => argmax(logits.subarray(b * V, (b + 1) * V)));
    for (const extra of [{ topK: 1 }, { topP: 1e-6 }, { topK: 3, topP: 1e-6, temperature: 0.3 }]) {
      const out = await step(be, logits, V, S, pos, params({ ...extra, seed: r.nextU32() }), initialState(B, S, pos));
      expect(column(out.sequences, B, S, pos)).toEqual(expected);
    }
  });

  it.each([
    ['no filter', { temperature: 0.8 }],
    ['top-k 3', { topK: 3 }],
    ['top-p 0.7', { topP: 0.7 }],
  ] as [string, Partial<SampleParams>][])('a histogram over many rows matches the kept softmax (%s)', async (_label, extra) => {
    const be = await makeBackend();
    const r = rng(34);
    const B = 4000,
      V = 6,
      S = 1;
    const row = [1.2, -0.3, 0.4, 2.0, 0.0, -1.5].map(Math.fround);
    const logits = new Float64Array(B * V);
    for (let b = 0; b < B; b++) logits.set(row, b * V);
    const p = params({ ...extra, seed: r.nextU32(), eosId: 99 });
    const out = await step(be, logits, V, S, 0, p, initialState(B, S, 0));
    const probs = keptProbabilities(row, p);
    const counts = new Array(V).fill(0);
    for (const t of column(out.sequences, B, S, 0)) counts[t]++;
    let chi2 = 0,
      dof = -1;
    for (let v = 0; v < V; v++) {
      if (probs[v] === 0) {
        expect(counts[v], `filtered token ${v} was drawn`).toBe(0);
        continue;
      }
      chi2 += (counts[v] - B * probs[v]) ** 2 / (B * probs[v]);
      dof++;
    }
    // P(chi² > 30) < 1e-5 for up to 5 degrees of freedom
    expect(dof).toBeGreaterThan(0);
    expect(chi2).toBeLessThan(30);
  });

  it('handles EOS, PAD, the attention mask, positions and finished rows', async () => {
    const be = await makeBackend();
    const B = 4,
      V = 8,
      S = 5,
      pos = 2;
    const logits = new Float64Array(B * V);
    logits[0 * V + EOS] = 1e4; // row 0 draws EOS
    logits[1 * V + 4] = 1e4; // row 1 is already finished
    logits[2 * V + 6] = 1e4; // row 2 draws token 6
    logits[3 * V + EOS] = 1e4; // row 3 draws EOS
    const p = params({ seed: 5 });
    const s1 = await step(be, logits, V, S, pos, p, initialState(B, S, pos, [0, 1, 0, 0]));
    expect(column(s1.sequences, B, S, pos)).toEqual([EOS, PAD, 6, EOS]);
    expect(column(s1.mask, B, S, pos)).toEqual([1, 0, 1, 1]);
    expect(column(s1.positions, B, S, pos)).toEqual([4, 0, 6, 7]);
    expect(Array.from(s1.finished)).toEqual([1, 1, 0, 1]);
    // other positions untouched
    expect(column(s1.sequences, B, S, pos + 1)).toEqual([7, 7, 7, 7]);
    // Next step: finished rows stay finished and write PAD, 0, 0.
    const s2 = await step(be, logits, V, S, pos + 1, p, s1);
    expect(column(s2.sequences, B, S, pos + 1)).toEqual([PAD, PAD, 6, PAD]);
    expect(column(s2.mask, B, S, pos + 1)).toEqual([0, 0, 1, 0]);
    expect(column(s2.positions, B, S, pos + 1)).toEqual([0, 0, 7, 0]);
    expect(Array.from(s2.finished)).toEqual([1, 1, 0, 1]);
    // Position 0 gets position 0.
    const s0 = await step(be, logits, V, S, 0, p, initialState(B, S, 0));
    expect(column(s0.positions, B, S, 0)).toEqual([0, 0, 0, 0]);
  });

  it('extreme logits (±1e4) at temperature 0.05 give valid tokens and no NaN', async () => {
    const be = await makeBackend();
    const r = rng(35);
    const B = 16,
      V = 24,
      S = 2;
    const logits = Float64Array.from({ length: B * V }, () => (r.next() < 0.5 ? -1e4 : 1e4) * r.uniform(0.5, 1));
    logits.fill(-1e4, 0, V); // row 0: all equal: uniform over the vocabulary
    const rounded = f32(logits);
    for (const extra of [{}, { topK: 5 }, { topP: 0.9 }]) {
      const p = params({ ...extra, temperature: 0.05, seed: r.nextU32(), eosId: 99 });
      const out = await step(be, rounded, V, S, 1, p, initialState(B, S, 1));
      const toks = column(out.sequences, B, S, 1);
      for (const t of toks) expect(Number.isInteger(t) && t >= 0 && t < V).toBe(true);
      for (let b = 1; b < B; b++) expect(toks[b]).toBe(argmax(rounded.subarray(b * V, (b + 1) * V)));
      expect(Array.from(out.mask).every(Number.isFinite)).toBe(true);
      const ref = initialState(B, S, 1);
      sampleStepRef(rounded, ref.sequences, ref.mask, ref.positions, ref.finished, { B, V, S }, 1, p);
      expect(toks).toEqual(column(ref.sequences, B, S, 1));
    }
  });

  it('a 1000-token vocabulary matches the reference', async () => {
    const be = await makeBackend();
    const r = rng(36);
    const B = 8,
      V = 1000,
      S = 2;
    const logits = f32(randn(r, B * V, 1.5));
    const p = params({ temperature: 0.9, topK: 200, topP: 0.95, seed: r.nextU32(), eosId: 999 });
    const out = await step(be, logits, V, S, 1, p, initialState(B, S, 1));
    const ref = initialState(B, S, 1);
    sampleStepRef(logits, ref.sequences, ref.mask, ref.positions, ref.finished, { B, V, S }, 1, p);
    expect(column(out.sequences, B, S, 1)).toEqual(column(ref.sequences, B, S, 1));
  });

  // π_rollout: log p(token) under the kept, renormalised distribution, against the float64
  // reference (same seed, so the same token). Tolerance 1e-5 absolute (float32 exp/log of
  // z − max z and of the kept mass); finished rows write 0.
  it.each(SETTINGS)("writes the drawn token's log-probability when asked (%s)", async (_label, extra) => {
    const be = await makeBackend();
    const r = rng(77);
    const B = 6,
      V = 40,
      S = 5,
      pos = 2;
    const logits = f32(randn(r, B * V, 2));
    logits[3 * V + 5] = 30; // a near-certain token: log-prob ≈ 0, no overflow
    const p = params({ ...extra, seed: r.int(0, 1e9) });
    const init = initialState(B, S, pos, [0, 0, 1, 0, 0, 1]);
    const t = {
      sequences: be.tensor(init.sequences, [B, S], 'i32'),
      mask: be.tensor(init.mask, [B, S]),
      positions: be.tensor(init.positions, [B, S], 'i32'),
      finished: be.tensor(init.finished, [B], 'i32'),
      logprobs: be.tensor(new Float64Array(B * S).fill(9), [B, S]),
    };
    sampleStep(be, {
      logits: be.tensor(logits, [B, V]),
      sequences: t.sequences,
      attnMask: t.mask,
      positions: t.positions,
      finished: t.finished,
      pos,
      params: p,
      logprobs: t.logprobs,
    });
    const [seq, lp] = await be.readMany([t.sequences, t.logprobs]);
    const want = initialState(B, S, pos, [0, 0, 1, 0, 0, 1]);
    const wantLp = new Float64Array(B * S).fill(9);
    sampleStepRef(logits, want.sequences, want.mask, want.positions, want.finished, { B, V, S }, pos, p, wantLp);
    expect(column(seq, B, S, pos)).toEqual(column(want.sequences, B, S, pos));
    for (let b = 0; b < B; b++) {
      const got = lp[b * S + pos];
      if (init.finished[b]) {
        expect(got).toBe(0);
        continue;
      }
      const probs = keptProbabilities(Array.from(logits.slice(b * V, (b + 1) * V)), p);
      expect(Math.log(probs[seq[b * S + pos]])).toBeCloseTo(wantLp[b * S + pos], 12);
      expect(Math.abs(got - wantLp[b * S + pos]), `row ${b}`).toBeLessThan(1e-5);
      expect(got).toBeLessThanOrEqual(1e-6);
    }
    // other columns untouched
    for (let i = 0; i < B * S; i++) if (i % S !== pos) expect(lp[i]).toBe(9);
  });
});
