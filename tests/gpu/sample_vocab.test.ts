// sampleVocab on both backends against the float64 reference sampler
// (src/reference/seq/sampleVocab.ts) on the same uniform draws: the same tokens, masks, positions,
// finished flags and log-probs, at V = 300 and at Qwen's 151 936; rows built of exact ties (±0
// included) with top-k and top-p boundaries inside a tie group; several EOS ids and finished rows;
// a chi-square check of the sampled distribution; the refusals. The sorted reference itself is
// checked against the pairwise keptProbabilities of sample.ts (tests/unit/sample_vocab_ref.test.ts).
//
// Tolerance: log-probs |Δ| ≤ 1e-5 + 1e-5·|ref| (f32 logs of a weight and of a sum of ≤ V weights,
// ~1e-6 here). Tokens, masks, positions and flags exactly. A draw could differ from the reference
// only where u·Σw falls within f32 rounding (~1e-7 relative) of a CDF step, or where a top-p
// boundary is that close to p: the tie rows below put p halfway inside a tie group, a random row
// with a boundary within 1e-4 of p is drawn again, and the chance of a CDF-step collision over
// all draws here is below 1e-4.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { SAMPLE_VOCAB_MAX_K, sampleVocab, type VocabSampleParams } from '../../src/ops/sampleVocab.ts';
import { keptProbabilitiesSorted, sampleVocabStepRef } from '../../src/reference/seq/sampleVocab.ts';
import { sampleUniform } from '../../src/util/philox.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const params = (p: Partial<VocabSampleParams>): VocabSampleParams => ({ temperature: 1, topK: 0, topP: 1, seed: 1, eosIds: [], padId: 0, ...p });

interface State {
  sequences: Float64Array;
  mask: Float64Array;
  positions: Float64Array;
  finished: Float64Array;
  logprobs: Float64Array;
}

/** A fresh (B, S) state: positions[b, pos − 1] = b + 3 so that the +1 rule shows. */
function initialState(B: number, S: number, pos: number, finished?: number[]): State {
  const positions = new Float64Array(B * S);
  if (pos > 0) for (let b = 0; b < B; b++) positions[b * S + pos - 1] = b + 3;
  return {
    sequences: new Float64Array(B * S).fill(7),
    mask: new Float64Array(B * S).fill(0.5),
    positions,
    finished: Float64Array.from(finished ?? new Array(B).fill(0)),
    logprobs: new Float64Array(B * S).fill(9),
  };
}

/** One step on `be` from `init`, read back. */
async function step(be: Backend, logits: Float64Array, V: number, S: number, pos: number, p: VocabSampleParams, init: State): Promise<State> {
  const B = logits.length / V;
  const t = {
    sequences: be.tensor(init.sequences, [B, S], 'i32'),
    attnMask: be.tensor(init.mask, [B, S]),
    positions: be.tensor(init.positions, [B, S], 'i32'),
    finished: be.tensor(init.finished, [B], 'i32'),
    logprobs: be.tensor(init.logprobs, [B, S]),
  };
  sampleVocab(be, { logits: be.tensor(logits, [B, V]), ...t, pos, params: p });
  const [sequences, mask, positions, finished, logprobs] = await be.readMany([t.sequences, t.attnMask, t.positions, t.finished, t.logprobs]);
  return { sequences, mask, positions, finished, logprobs };
}

/**
 * Where the float64 CDF has a step within CDF_SLACK of u, f32 sums may land on either side of it:
 * then the token drawn must be one whose CDF interval [F(v−), F(v)] (float64, id order over the kept
 * tokens) lies within CDF_SLACK of u, i.e. a correct inverse-CDF draw for some u' with |u' − u| ≤
 * 1e-5. Everywhere else the token must be the reference's.
 */
const CDF_SLACK = 1e-5;

function drawIsNear(probs: Float64Array, u: number, tok: number): boolean {
  let before = 0;
  for (let v = 0; v < tok; v++) before += probs[v];
  return probs[tok] > 0 && before - CDF_SLACK <= u && u <= before + probs[tok] + CDF_SLACK;
}

/** The step on `be` equals the float64 reference's: every field (up to CDF_SLACK for the token); log-probs to 1e-5. */
async function expectSameAsReference(be: Backend, logits: Float64Array, V: number, S: number, pos: number, p: VocabSampleParams, finished?: number[]): Promise<State> {
  const B = logits.length / V;
  const got = await step(be, logits, V, S, pos, p, initialState(B, S, pos, finished));
  const ref = initialState(B, S, pos, finished);
  sampleVocabStepRef(logits, ref.sequences, ref.mask, ref.positions, ref.finished, { B, V, S }, pos, p, ref.logprobs);
  let near = 0;
  for (let b = 0; b < B; b++) {
    const at = b * S + pos;
    const tok = got.sequences[at];
    if (ref.finished[b] === 1 && (finished?.[b] ?? 0) === 1) continue;
    if (tok === ref.sequences[at]) continue;
    const probs = keptProbabilitiesSorted(logits.subarray(b * V, (b + 1) * V), p);
    const u = sampleUniform(p.seed, b, pos);
    expect(drawIsNear(probs, u, tok), `row ${b}: token ${tok}, reference ${ref.sequences[at]} (u = ${u})`).toBe(true);
    near++;
    ref.sequences[at] = tok;
    ref.logprobs[at] = Math.log(probs[tok]);
    ref.finished[b] = p.eosIds.includes(tok) ? 1 : 0;
  }
  expect(near, 'draws off the reference token (each within 1e-5 of a CDF step)').toBeLessThanOrEqual(Math.max(1, B / 16));
  expect(Array.from(got.sequences)).toEqual(Array.from(ref.sequences));
  expect(Array.from(got.mask)).toEqual(Array.from(ref.mask));
  expect(Array.from(got.positions)).toEqual(Array.from(ref.positions));
  expect(Array.from(got.finished)).toEqual(Array.from(ref.finished));
  expectClose(got.logprobs, ref.logprobs, 1e-5, 1e-5, 'logprobs');
  return got;
}

/** How far every top-p boundary of a random row stays from p: 1e-4, some 1 000× the f32 error of a sum of 300 weights. */
const TOP_P_MARGIN = 1e-4;

/** The least |mass before a token − p| over the row's kept tokens, in its sorted order; Infinity without top-p. */
function topPMargin(row: ArrayLike<number>, p: VocabSampleParams): number {
  if (p.topP >= 1) return Number.POSITIVE_INFINITY;
  const probs = keptProbabilitiesSorted(row, { ...p, topP: 1 });
  const sorted = Array.from(probs)
    .filter((q) => q > 0)
    .sort((x, y) => y - x);
  let before = 0;
  let margin = Number.POSITIVE_INFINITY;
  for (const q of sorted) {
    margin = Math.min(margin, Math.abs(before - p.topP));
    before += q;
  }
  return margin;
}

const SETTINGS: [string, Partial<VocabSampleParams>][] = [
  ['plain', {}],
  ['temperature 0.7, top-k 10', { temperature: 0.7, topK: 10 }],
  ['top-p 0.8', { topP: 0.8 }],
  ['top-k 20 then top-p 0.9, temperature 1.3', { temperature: 1.3, topK: 20, topP: 0.9 }],
  [`top-k ${SAMPLE_VOCAB_MAX_K}`, { topK: SAMPLE_VOCAB_MAX_K }],
];

/**
 * A top-p that cuts inside a tie group far from any f32 rounding: halfway between the mass-before
 * fractions of two consecutive tied tokens of the row's sorted order (the widest such gap).
 */
function topPInsideTies(row: ArrayLike<number>, T: number, topK: number): { topP: number; gap: number } {
  const probs = keptProbabilitiesSorted(row, { temperature: T, topK, topP: 1 });
  const sorted = Array.from(probs)
    .map((q, v) => [q, v] as const)
    .filter(([q]) => q > 0)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  let before = 0;
  let best = { topP: 1, gap: 0 };
  sorted.forEach(([q, v], i) => {
    const next = sorted[i + 1];
    if (i > 0 && next && row[next[1]] === row[v] && q > best.gap) best = { topP: before + q / 2, gap: q };
    before += q;
  });
  return best; // this tie's fraction before is < p, the next tie's (before + q) is not
}

describe.each(BACKENDS)('sampleVocab on %s', (_name, makeBackend) => {
  it.each(SETTINGS)('V = 300: the same tokens and log-probs as the float64 reference (%s)', async (_label, extra) => {
    const be = await makeBackend();
    const r = rng(31);
    const B = 48,
      V = 300,
      S = 4;
    const p = params({ ...extra, seed: r.nextU32() });
    const logits = f32(randn(r, B * V, 2));
    // A row whose top-p boundary falls within f32 rounding of p keeps one token more or less in
    // f32 (TEST_SEED=1007218613 drew one 1.2e-8 from 0.8): such a row is drawn again.
    for (let b = 0; b < B; b++)
      for (let tries = 0; topPMargin(logits.subarray(b * V, (b + 1) * V), p) < TOP_P_MARGIN; tries++) {
        expect(tries, `row ${b}: a top-p boundary ${TOP_P_MARGIN} from p within 20 draws`).toBeLessThan(20);
        logits.set(f32(randn(r, V, 2)), b * V);
      }
    const a = await expectSameAsReference(be, logits, V, S, 2, p);
    // The same seed gives the same tokens again; another gives others.
    const again = await step(be, logits, V, S, 2, p, initialState(B, S, 2));
    expect(Array.from(again.sequences)).toEqual(Array.from(a.sequences));
    const other = await step(be, logits, V, S, 2, { ...p, seed: (p.seed ^ 0x5bd1e995) >>> 0 }, initialState(B, S, 2));
    expect(Array.from(other.sequences)).not.toEqual(Array.from(a.sequences));
  });

  it.each([
    ['plain, T 1', { temperature: 1 }],
    ["Qwen3's T 0.6, top-k 20, top-p 0.95", { temperature: 0.6, topK: 20, topP: 0.95 }],
    ['top-p 0.9 alone', { topP: 0.9 }],
    ['top-k 50', { topK: 50 }],
  ] as [string, Partial<VocabSampleParams>][])("Qwen's vocabulary of 151 936: the reference's tokens (%s)", async (_label, extra) => {
    const be = await makeBackend();
    const r = rng(151936);
    const B = 3,
      V = 151936,
      S = 2;
    const logits = f32(randn(r, B * V, 3));
    await expectSameAsReference(be, logits, V, S, 1, params({ ...extra, seed: r.nextU32(), eosIds: [151645, 151643] }));
  });

  it('exact ties (±0 among them): top-k and top-p cut inside a tie group keep the lowest ids, as the reference', async () => {
    const be = await makeBackend();
    const r = rng(7);
    const B = 64,
      V = 200,
      S = 3;
    const values = [-1, -0, 0, 0.5, 2, 2.25];
    const row = Float64Array.from({ length: V }, () => values[r.int(0, values.length)]);
    const logits = new Float64Array(B * V);
    for (let b = 0; b < B; b++) logits.set(row, b * V); // one row, 64 draws from it
    for (const T of [1, 0.5]) {
      // top-k cutting the 0 / −0 group: k = (tokens above 0) + 3.
      const above = row.filter((x) => x > 0).length;
      await expectSameAsReference(be, logits, V, S, 1, params({ temperature: T, topK: Math.min(above + 3, SAMPLE_VOCAB_MAX_K), seed: r.nextU32() }));
      // top-p cutting inside a tie group: halfway between two consecutive mass fractions of one group.
      for (const topK of [0, SAMPLE_VOCAB_MAX_K]) {
        const { topP, gap } = topPInsideTies(row, T, topK);
        expect(gap).toBeGreaterThan(2e-3); // the cut is ≥ 1e-3 from either fraction
        const got = await expectSameAsReference(be, logits, V, S, 1, params({ temperature: T, topK, topP, seed: r.nextU32() }));
        // Only tokens the reference keeps are drawn.
        const kept = keptProbabilitiesSorted(row, { temperature: T, topK, topP });
        for (let b = 0; b < B; b++) expect(kept[got.sequences[b * S + 1]]).toBeGreaterThan(0);
      }
    }
  });

  it('several EOS ids finish their rows; finished rows write PAD, 0, 0 and log-prob 0', async () => {
    const be = await makeBackend();
    const V = 500,
      S = 5,
      pos = 3;
    const eosIds = [499, 7, 250];
    const peaked = (tok: number) => Float64Array.from({ length: V }, (_, v) => (v === tok ? 50 : 0));
    // Rows draw 499 (EOS), 7 (EOS), 12 (not EOS), and row 3 had already finished.
    const logits = new Float64Array(4 * V);
    for (const [b, tok] of [499, 7, 12, 250].entries()) logits.set(peaked(tok), b * V);
    const p = params({ eosIds, padId: 3, seed: 11 });
    const got = await expectSameAsReference(be, logits, V, S, pos, p, [0, 0, 0, 1]);
    expect([0, 1, 2, 3].map((b) => got.sequences[b * S + pos])).toEqual([499, 7, 12, 3]);
    expect(Array.from(got.finished)).toEqual([1, 1, 0, 1]);
    expect([0, 1, 2, 3].map((b) => got.positions[b * S + pos])).toEqual([4, 5, 6, 0]);
    expect([0, 1, 2, 3].map((b) => got.mask[b * S + pos])).toEqual([1, 1, 1, 0]);
    expect(got.logprobs[3 * S + pos]).toBe(0);
    // At position 0 a position is 0 whatever came before.
    const first = await expectSameAsReference(be, logits, V, S, 0, p);
    expect([0, 1, 2, 3].map((b) => first.positions[b * S])).toEqual([0, 0, 0, 0]);
  });

  it('the sampled distribution: 1 600 draws at V = 6 (T 0.8, top-k 4, top-p 0.9) pass a chi-square test against the kept probabilities', async () => {
    const be = await makeBackend();
    const V = 6,
      B = 64,
      S = 25;
    const row = [1.2, -0.3, 0.8, 2.0, 0.1, 1.7];
    const p = params({ temperature: 0.8, topK: 4, topP: 0.9, seed: rng(99).nextU32() });
    const kept = keptProbabilitiesSorted(row, p);
    const logits = be.tensor(Array.from({ length: B }, () => row).flat(), [B, V]);
    const t = { sequences: be.zeros([B, S], 'i32'), attnMask: be.zeros([B, S]), positions: be.zeros([B, S], 'i32'), finished: be.zeros([B], 'i32') };
    for (let pos = 0; pos < S; pos++) sampleVocab(be, { logits, ...t, pos, params: p });
    const seqs = await be.read(t.sequences);
    const counts = new Array(V).fill(0);
    for (const tok of seqs) counts[tok]++;
    let chi2 = 0;
    let df = -1;
    for (let v = 0; v < V; v++) {
      if (kept[v] === 0) {
        expect(counts[v], `token ${v} is filtered out`).toBe(0);
        continue;
      }
      const expected = kept[v] * B * S;
      chi2 += (counts[v] - expected) ** 2 / expected;
      df++;
    }
    expect(df).toBe(2); // top-p 0.9 of the top 4 keeps 3 tokens here
    // P(χ²₂ > 23) = e^{−11.5} ≈ 1e-5: a correct sampler fails once in 100 000 seeds.
    expect(chi2).toBeLessThan(23);
  });

  it('with the workgroup a GPU gets (256 threads): the reference tokens at V = 5 000', async () => {
    const be = await makeBackend();
    if (!(be instanceof WebGpuBackend)) return;
    const r = rng(256);
    const logits = f32(randn(r, 6 * 5000, 3));
    const saved = be.rt.cpuAdapter;
    be.rt.cpuAdapter = false;
    try {
      for (const extra of SETTINGS.map(([, e]) => e)) await expectSameAsReference(be, logits, 5000, 2, 1, params({ ...extra, seed: r.nextU32() }));
    } finally {
      be.rt.cpuAdapter = saved;
    }
  });

  it('refuses bad arguments, naming them', async () => {
    const be = await makeBackend();
    const B = 2,
      S = 3,
      V = 100;
    const a = {
      logits: be.zeros([B, V]),
      sequences: be.zeros([B, S], 'i32'),
      attnMask: be.zeros([B, S]),
      positions: be.zeros([B, S], 'i32'),
      finished: be.zeros([B], 'i32'),
      pos: 1,
      params: params({}),
    };
    expect(() => sampleVocab(be, { ...a, params: params({ topK: 65 }) })).toThrow(`topK 65 exceeds the sampler's ${SAMPLE_VOCAB_MAX_K}`);
    expect(() => sampleVocab(be, { ...a, params: params({ topP: 0 }) })).toThrow('topP must be in (0, 1], got 0');
    expect(() => sampleVocab(be, { ...a, params: params({ temperature: 0 }) })).toThrow('temperature must be a finite number > 0, got 0');
    expect(() => sampleVocab(be, { ...a, params: params({ eosIds: [1, 2, 3, 4, 5, 6, 7, 8, 9] }) })).toThrow("eosIds: 9 ids exceed the sampler's 8");
    expect(() => sampleVocab(be, { ...a, pos: 3 })).toThrow('pos 3 outside [0, 3)');
    expect(() => sampleVocab(be, { ...a, sequences: be.zeros([B, S]) })).toThrow('sequences: expected dtype i32, got f32');
    // top-k ≥ V keeps every token and is accepted
    expect(() => sampleVocab(be, { ...a, params: params({ topK: 1000 }) })).not.toThrow();
  });
});
