// logprobs / entropy and their backward on both backends against the float64 reference.
// Tolerances: element-wise 1e-5 relative; atol 1e-6 (logprobs, entropy) and 1e-6·max|grad| for
// the gradient, whose entries span many orders of magnitude within a row (p_v down to e^-40).
import { describe, expect, it } from 'vitest';
import { logprobsBackwardRef, logprobsRef } from '../../src/reference/logprobs.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { logprobs, logprobsBackward } from '../../src/ops/logprobs.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));
const maxAbs = (xs: ArrayLike<number>) => Array.from(xs).reduce((m, v) => Math.max(m, Math.abs(v)), 0);

describe.each(BACKENDS)('logprobs on %s', (_name, makeBackend) => {
  async function check(logits: Float64Array, tokens: ArrayLike<number>, B: number, A: number, V: number, T: number, what: string) {
    const be = await makeBackend();
    const r = rng(B + A + V);
    const gL = f32(randn(r, B * A));
    const gE = f32(randn(r, B * A));
    const tl = be.tensor(logits, [B, A, V]);
    const tt = be.tensor(tokens, [B, A], 'i32');
    const fwd = logprobs(be, { logits: tl, tokens: tt, temperature: T });
    const gradBoth = logprobsBackward(be, { logits: tl, tokens: tt, temperature: T, gradLogprobs: be.tensor(gL, [B, A]), gradEntropy: be.tensor(gE, [B, A]) });
    const gradLogp = logprobsBackward(be, { logits: tl, tokens: tt, temperature: T, gradLogprobs: be.tensor(gL, [B, A]) });
    const [lp, ent, g2, g1] = await be.readMany([fwd.logprobs, fwd.entropy, gradBoth, gradLogp]);
    const want = logprobsRef(logits, tokens, B, A, V, T);
    expect(fwd.logprobs.shape).toEqual([B, A]);
    expect(gradBoth.shape).toEqual([B, A, V]);
    expectClose(lp, want.logprobs, TOL.elem.rtol, TOL.elem.atol, `${what} logprobs`);
    expectClose(ent, want.entropy, TOL.elem.rtol, TOL.elem.atol, `${what} entropy`);
    const w2 = logprobsBackwardRef(logits, tokens, B, A, V, T, gL, gE);
    const w1 = logprobsBackwardRef(logits, tokens, B, A, V, T, gL, null);
    expectClose(g2, w2, TOL.elem.rtol, 1e-6 * maxAbs(w2), `${what} grad (logp + entropy)`);
    expectClose(g1, w1, TOL.elem.rtol, 1e-6 * maxAbs(w1), `${what} grad (logp only)`);
    return { lp, ent, g1, g2 };
  }

  // On WebGPU, V = 300 takes the workgroup-per-row kernels (threads stride over the vocabulary);
  // V ≤ 256 the thread-per-row ones.
  const cases: [number, number, number, number][] = [
    [2, 3, 7, 1],
    [3, 5, 300, 0.7],
    [2, 4, 33, 0.05],
  ];
  it.each(cases)('random logits B=%i A=%i V=%i T=%s', async (B, A, V, T) => {
    const r = rng(B * 100 + V);
    const logits = f32(randn(r, B * A * V, 3));
    const tokens = Array.from({ length: B * A }, () => r.int(0, V));
    await check(logits, tokens, B, A, V, T, `B${B}A${A}V${V}T${T}`);
  });

  it.each([1, 0.05])('extreme logits ±1e4 at T=%s stay finite and exact', async (T) => {
    const B = 1,
      A = 4,
      V = 5;
    const logits = new Float64Array(B * A * V).fill(-1e4);
    logits[0] = 1e4; // row 0: one-hot, token is the winner
    logits[5 + 1] = 1e4; // row 1: one-hot, token is a loser (logprob −2e4/T)
    for (let v = 0; v < V; v++) logits[10 + v] = v % 2 ? 1e4 : -1e4; // row 2: two tied winners
    for (let v = 0; v < V; v++) logits[15 + v] = 1e4 - v * 0.5; // row 3: close values near 1e4
    const tokens = [0, 3, 1, 2];
    const { lp, ent } = await check(f32(logits), tokens, B, A, V, T, `extreme T${T}`);
    expect(lp[0]).toBe(0);
    expect(lp[1]).toBeCloseTo(-2e4 / T, 0);
    expectClose([lp[2], ent[2]], [-Math.LN2, Math.LN2], TOL.elem.rtol, TOL.elem.atol, 'tied winners');
  });

  it('length-1 responses, V = 1, and out-of-range token ids (clamped to [0, V))', async () => {
    const r = rng(5);
    await check(f32(randn(r, 3 * 1 * 1)), [0, 0, 0], 3, 1, 1, 1, 'V=1');
    const V = 6;
    const logits = f32(randn(r, 4 * V, 2));
    const { lp } = await check(logits, [-3, V, V + 100, 2], 4, 1, V, 1, 'clamped tokens');
    const clampedRef = logprobsRef(logits, [0, V - 1, V - 1, 2], 4, 1, V, 1).logprobs;
    expectClose(lp, clampedRef, TOL.elem.rtol, TOL.elem.atol, 'out-of-range ids act as the clamped id');
  });

  it('rejects a non-positive temperature, float tokens, and mismatched shapes', async () => {
    const be = await makeBackend();
    const logits = be.zeros([2, 3, 4]);
    const tokens = be.zeros([2, 3], 'i32');
    expect(() => logprobs(be, { logits, tokens, temperature: 0 })).toThrow(/temperature/);
    expect(() => logprobs(be, { logits, tokens: be.zeros([2, 3]), temperature: 1 })).toThrow(/tokens/);
    expect(() => logprobs(be, { logits, tokens: be.zeros([3, 2], 'i32'), temperature: 1 })).toThrow(/tokens/);
    expect(() => logprobsBackward(be, { logits, tokens, temperature: 1, gradLogprobs: be.zeros([2, 2]) })).toThrow(/grad_logprobs/);
  });
});
