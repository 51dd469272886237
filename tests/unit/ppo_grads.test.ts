// The float64 references' gradients against central finite differences, away from kinks (tokens
// whose clip/clamp branch changes within ±h are skipped, and the test asserts that most tokens
// were checked). Relative tolerance 1e-6 with h = 1e-5: the truncation error is O(h²).
import { describe, expect, it } from 'vitest';
import { LOSS_AGGS, type PolicyLossParams } from '../../src/backend/ppoOps.ts';
import { aggregateRef } from '../../src/reference/aggregate.ts';
import { logprobsBackwardRef, logprobsRef } from '../../src/reference/logprobs.ts';
import { policyLossRef, policyTokenRef } from '../../src/reference/policyLoss.ts';
import { valueLossRef, valueTokenRef } from '../../src/reference/valueLoss.ts';
import { Rng } from '../../src/util/rng.ts';

const H = 1e-5;
const seed = (Date.now() ^ (Math.random() * 2 ** 31)) >>> 0;
const rng = (salt: number) => new Rng((seed + salt * 7919) >>> 0);
const randn = (r: Rng, n: number, s = 1) => Float64Array.from({ length: n }, () => r.normal() * s);

function maskFor(r: Rng, B: number, A: number): Float64Array {
  const m = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = b === 0 ? 0 : r.int(1, A + 1); // row 0 has no action token
    for (let a = 0; a < len; a++) m[b * A + a] = 1;
  }
  return m;
}

function expectNear(got: number, want: number, what: string): void {
  const tol = 1e-6 * Math.max(1, Math.abs(want));
  if (!(Math.abs(got - want) <= tol)) throw new Error(`${what}: analytic ${got}, finite difference ${want} (seed ${seed})`);
}

describe('reference gradients match central finite differences', () => {
  it.each([1, 0.7, 0.05])('logprobs backward at T=%s (logprob and entropy terms)', (T) => {
    const r = rng(1);
    const B = 2, A = 3, V = 6;
    const logits = randn(r, B * A * V, 2 * T); // keep z = logits/T of order 2 so no row is one-hot
    const tokens = Float64Array.from({ length: B * A }, () => r.int(0, V));
    const gL = randn(r, B * A);
    const gE = randn(r, B * A);
    const objective = (x: Float64Array) => {
      const { logprobs, entropy } = logprobsRef(x, tokens, B, A, V, T);
      let s = 0;
      for (let i = 0; i < B * A; i++) s += gL[i] * logprobs[i] + gE[i] * entropy[i];
      return s;
    };
    const grad = logprobsBackwardRef(logits, tokens, B, A, V, T, gL, gE);
    const gradNoEnt = logprobsBackwardRef(logits, tokens, B, A, V, T, gL, null);
    const objNoEnt = (x: Float64Array) => {
      const { logprobs } = logprobsRef(x, tokens, B, A, V, T);
      return logprobs.reduce((s, v, i) => s + gL[i] * v, 0);
    };
    const h = H * T;
    for (let i = 0; i < logits.length; i++) {
      const up = logits.slice(); up[i] += h;
      const dn = logits.slice(); dn[i] -= h;
      expectNear(grad[i], (objective(up) - objective(dn)) / (2 * h), `logits[${i}]`);
      expectNear(gradNoEnt[i], (objNoEnt(up) - objNoEnt(dn)) / (2 * h), `logits[${i}] without entropy`);
    }
  });

  const policyCases: [string, PolicyLossParams][] = LOSS_AGGS.flatMap((agg) => [
    [`${agg}, no dual clip`, { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg }] as [string, PolicyLossParams],
    [`${agg}, dual clip 3`, { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg }] as [string, PolicyLossParams],
  ]);
  it.each(policyCases)('policy loss (%s)', (_n, params) => {
    const r = rng(2);
    const B = 4, A = 6;
    const old = randn(r, B * A, 1).map((x) => -Math.abs(x) - 0.1);
    const logp = Float64Array.from(old, (o) => o + r.normal() * 0.6); // wide enough to hit every branch
    const adv = randn(r, B * A, 1.5);
    const mask = maskFor(r, B, A);
    const { gradLogprobs } = policyLossRef(old, logp, adv, mask, B, A, params);
    let checked = 0, active = 0;
    for (let i = 0; i < B * A; i++) {
      if (!mask[i]) continue;
      const branch = (x: number) => {
        const t = policyTokenRef(old[i], x, adv[i], params);
        return `${t.clipped}${t.lower}`;
      };
      if (branch(logp[i] + H) !== branch(logp[i] - H)) continue; // at a kink
      const up = logp.slice(); up[i] += H;
      const dn = logp.slice(); dn[i] -= H;
      const fd = (policyLossRef(old, up, adv, mask, B, A, params).stats[0] - policyLossRef(old, dn, adv, mask, B, A, params).stats[0]) / (2 * H);
      expectNear(gradLogprobs[i], fd, `logp[${i}]`);
      checked++;
      if (gradLogprobs[i] !== 0) active++;
    }
    const unmasked = mask.reduce((s, m) => s + m, 0);
    expect(checked).toBeGreaterThanOrEqual(unmasked - 2);
    expect(active).toBeGreaterThan(0); // the check must not pass on an all-zero gradient
  });

  it.each(LOSS_AGGS.flatMap((agg) => [[agg, 0.2], [agg, null]] as [typeof agg, number | null][]))('value loss (%s, clip %s)', (agg, clip) => {
    const r = rng(3);
    const B = 4, A = 6;
    const old = randn(r, B * A);
    const values = Float64Array.from(old, (o) => o + r.normal() * 0.4);
    const returns = randn(r, B * A);
    const mask = maskFor(r, B, A);
    const params = { clip, agg };
    const { gradValues } = valueLossRef(values, old, returns, mask, B, A, params);
    let checked = 0, active = 0;
    for (let i = 0; i < B * A; i++) {
      if (!mask[i]) continue;
      const branch = (x: number) => {
        const t = valueTokenRef(x, old[i], returns[i], clip);
        return `${t.clipped}${clip !== null && Math.abs(x - old[i]) < clip}`;
      };
      if (branch(values[i] + H) !== branch(values[i] - H)) continue;
      const up = values.slice(); up[i] += H;
      const dn = values.slice(); dn[i] -= H;
      const fd = (valueLossRef(up, old, returns, mask, B, A, params).stats[0] - valueLossRef(dn, old, returns, mask, B, A, params).stats[0]) / (2 * H);
      expectNear(gradValues[i], fd, `v[${i}]`);
      checked++;
      if (gradValues[i] !== 0) active++;
    }
    expect(checked).toBeGreaterThanOrEqual(mask.reduce((s, m) => s + m, 0) - 2);
    expect(active).toBeGreaterThan(0);
  });

  it.each(LOSS_AGGS)('aggregate weights are ∂value/∂x (%s)', (agg) => {
    const r = rng(4);
    const B = 3, A = 5;
    const x = randn(r, B * A);
    const mask = maskFor(r, B, A);
    const { weights } = aggregateRef(x, mask, B, A, agg);
    for (let i = 0; i < B * A; i++) {
      const up = x.slice(); up[i] += H;
      const dn = x.slice(); dn[i] -= H;
      expectNear(weights[i], (aggregateRef(up, mask, B, A, agg).value - aggregateRef(dn, mask, B, A, agg).value) / (2 * H), `x[${i}]`);
    }
    expect(weights.some((w) => w !== 0)).toBe(true);
  });
});
