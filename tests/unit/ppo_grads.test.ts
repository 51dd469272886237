// The float64 references' gradients against central finite differences, away from kinks (tokens
// whose clip/clamp branch changes within ±h are skipped, and the test asserts that most tokens
// were checked). Relative tolerance 1e-6 with h = 1e-5: the truncation error is O(h²).
import { describe, expect, it } from 'vitest';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { LOSS_AGGS, NORM_SCALES } from '../../src/reference/aggregate.ts';
import type { LossMode, PolicyLossParams } from '../../src/reference/policyLoss.ts';
import { klGradValue } from '../../src/reference/kl.ts';
import * as verl from '../helpers/verl.ts';
import { aggregateRef } from '../../src/reference/aggregate.ts';
import { logprobsBackwardRef, logprobsRef } from '../../src/reference/logprobs.ts';
import { covHash, covSelectRef, policyLossRef, policyTokenRef } from '../../src/reference/policyLoss.ts';
import { valueLossRef, valueTokenRef } from '../../src/reference/valueLoss.ts';
import { Rng } from '../../src/util/rng.ts';
import { TEST_SEED } from '../helpers/random.ts';

const H = 1e-5;
// The run's TEST_SEED (printed in the summary), so a failure here reproduces with TEST_SEED=<n>.
const seed = TEST_SEED;
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
    const B = 2,
      A = 3,
      V = 6;
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
      const up = logits.slice();
      up[i] += h;
      const dn = logits.slice();
      dn[i] -= h;
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
    const B = 4,
      A = 6;
    const old = randn(r, B * A, 1).map((x) => -Math.abs(x) - 0.1);
    const logp = Float64Array.from(old, (o) => o + r.normal() * 0.6); // wide enough to hit every branch
    const adv = randn(r, B * A, 1.5);
    const mask = maskFor(r, B, A);
    const { gradLogprobs } = policyLossRef(old, logp, adv, mask, B, A, params);
    let checked = 0,
      active = 0;
    for (let i = 0; i < B * A; i++) {
      if (!mask[i]) continue;
      const branch = (x: number) => {
        const t = policyTokenRef(old[i], x, adv[i], params);
        return `${t.clipped}${t.lower}`;
      };
      if (branch(logp[i] + H) !== branch(logp[i] - H)) continue; // at a kink
      const up = logp.slice();
      up[i] += H;
      const dn = logp.slice();
      dn[i] -= H;
      const fd = (policyLossRef(old, up, adv, mask, B, A, params).stats[0] - policyLossRef(old, dn, adv, mask, B, A, params).stats[0]) / (2 * H);
      expectNear(gradLogprobs[i], fd, `logp[${i}]`);
      checked++;
      if (gradLogprobs[i] !== 0) active++;
    }
    const unmasked = mask.reduce((s, m) => s + m, 0);
    expect(checked).toBeGreaterThanOrEqual(unmasked - 2);
    expect(active).toBeGreaterThan(0); // the check must not pass on an all-zero gradient
  });

  it.each(
    LOSS_AGGS.flatMap(
      (agg) =>
        [
          [agg, 0.2],
          [agg, null],
        ] as [typeof agg, number | null][],
    ),
  )('value loss (%s, clip %s)', (agg, clip) => {
    const r = rng(3);
    const B = 4,
      A = 6;
    const old = randn(r, B * A);
    const values = Float64Array.from(old, (o) => o + r.normal() * 0.4);
    const returns = randn(r, B * A);
    const mask = maskFor(r, B, A);
    const params = { clip, agg };
    const { gradValues } = valueLossRef(values, old, returns, mask, B, A, params);
    let checked = 0,
      active = 0;
    for (let i = 0; i < B * A; i++) {
      if (!mask[i]) continue;
      const branch = (x: number) => {
        const t = valueTokenRef(x, old[i], returns[i], clip);
        return `${t.clipped}${clip !== null && Math.abs(x - old[i]) < clip}`;
      };
      if (branch(values[i] + H) !== branch(values[i] - H)) continue;
      const up = values.slice();
      up[i] += H;
      const dn = values.slice();
      dn[i] -= H;
      const fd = (valueLossRef(up, old, returns, mask, B, A, params).stats[0] - valueLossRef(dn, old, returns, mask, B, A, params).stats[0]) / (2 * H);
      expectNear(gradValues[i], fd, `v[${i}]`);
      checked++;
      if (gradValues[i] !== 0) active++;
    }
    expect(checked).toBeGreaterThanOrEqual(mask.reduce((s, m) => s + m, 0) - 2);
    expect(active).toBeGreaterThan(0);
  });

  it.each(LOSS_AGGS.flatMap((agg) => NORM_SCALES.map((ns) => [agg, ns] as const)))('aggregate weights are ∂value/∂x (%s, norm scale %s)', (agg, ns) => {
    const r = rng(4);
    const B = 3,
      A = 5;
    const x = randn(r, B * A);
    const mask = maskFor(r, B, A);
    const { weights } = aggregateRef(x, mask, B, A, agg, ns);
    for (let i = 0; i < B * A; i++) {
      const up = x.slice();
      up[i] += H;
      const dn = x.slice();
      dn[i] -= H;
      expectNear(weights[i], (aggregateRef(up, mask, B, A, agg, ns).value - aggregateRef(dn, mask, B, A, agg, ns).value) / (2 * H), `x[${i}]`);
    }
    expect(weights.some((w) => w !== 0)).toBe(true);
  });
});

/** Right-padded mask, every row 1..A tokens (verl's per-sequence means are NaN on an empty row). */
function fullRows(r: Rng, B: number, A: number): Float64Array {
  const m = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = r.int(1, A + 1);
    for (let a = 0; a < len; a++) m[b * A + a] = 1;
  }
  return m;
}

// Gradients of the references against finite differences of verl's own functions (transliterated
// in tests/helpers/verl.ts): the live log-probs move by ±h while every `.detach()` operand stays at
// the base point, which is the gradient autograd gives verl.
describe("reference gradients match finite differences of verl's losses (stop-gradients held fixed)", () => {
  const cfg = (agg: string): verl.VerlPolicyConfig => ({ clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3, lossAggMode: agg });
  const modes: LossMode[] = ['vanilla', 'gspo', 'cispo', 'sapo', 'gpg', 'geo_mean', 'clip_cov', 'kl_cov'];
  // clip_cov / kl_cov knobs that pick several tokens of 35 (verl's 0.0002 picks one)
  const COV = { clipCovRatio: 0.1, clipCovLb: 0, clipCovUb: 5, klCovRatio: 0.2, ppoKlCoef: 0.5, covSeed: 7 };
  const cases = modes.flatMap((mode) => LOSS_AGGS.flatMap((agg) => [false, true].map((withIs) => [mode, agg, withIs] as const)));
  const TAU_POS = 0.7,
    TAU_NEG = 1.6; // SAPO's temperatures here: not verl's defaults, so a swapped pair shows
  it.each(cases)('%s policy loss, agg %s, is_weights %s', (mode, agg, withIs) => {
    const r = rng(10 + modes.indexOf(mode));
    const B = 5,
      A = 7;
    const old = randn(r, B * A, 1).map((x) => -Math.abs(x) - 0.1);
    const logp = Float64Array.from(old, (o) => o + r.normal() * 0.4);
    const adv = randn(r, B * A, 1.5);
    const mask = fullRows(r, B, A);
    const isW = withIs ? Float64Array.from({ length: B * A }, () => r.uniform(0.2, 2)) : null;
    const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg, lossMode: mode, normScale: 'verl', sapoTauPos: TAU_POS, sapoTauNeg: TAU_NEG, ...COV };
    const { gradLogprobs } = policyLossRef(old, logp, adv, mask, B, A, params, isW);
    // clip_cov: the reference's seeded choice injected as verl's randperm order
    const hashOrder = (band: number[]) => [...band].sort((x, y) => covHash(y, COV.covSeed) - covHash(x, COV.covSeed) || x - y);
    const picked = covSelectRef(old, logp, adv, mask, B, A, params);
    const lossAt = (x: Float64Array) => {
      if (mode === 'clip_cov') {
        const v = verl.policyLossClipCov(
          old,
          x,
          adv,
          mask,
          B,
          A,
          { ...cfg(agg), clipRatioC: 3 },
          { ratio: COV.clipCovRatio, lb: COV.clipCovLb, ub: COV.clipCovUb },
          hashOrder,
          isW,
        );
        expect(Array.from(v.picked)).toEqual(Array.from(picked)); // ±h moves no token across the band's edges
        return v.loss;
      }
      if (mode === 'kl_cov') return verl.policyLossKlCov(old, x, logp, adv, mask, B, A, agg, { ratio: COV.klCovRatio, coef: COV.ppoKlCoef }, isW).loss;
      if (mode === 'sapo') return verl.policyLossSapo(old, x, adv, mask, B, A, TAU_POS, TAU_NEG, isW).loss;
      if (mode === 'gpg') return verl.policyLossGpg(x, adv, mask, B, A, agg, isW).loss;
      if (mode === 'geo_mean') return verl.policyLossGeoMean(old, x, adv, mask, B, A, cfg(agg), isW).loss;
      if (mode === 'gspo') return verl.policyLossGspo(old, x, logp, adv, mask, B, A, cfg(agg), isW).loss;
      if (mode === 'cispo') return verl.policyLossCispo(old, x, logp, adv, mask, B, A, cfg(agg), isW).loss;
      return verl.policyLossVanilla(old, x, adv, mask, B, A, cfg(agg), isW).loss;
    };
    // GSPO's token ratio exp(logp − sg(logp) + sg(s_b)): the clip branch is that of the sequence ratio
    const seqRatio = (x: Float64Array, b: number) => {
      let sum = 0,
        n = 0;
      for (let a = 0; a < A; a++)
        if (mask[b * A + a]) {
          sum += x[b * A + a] - old[b * A + a];
          n++;
        }
      return Math.exp(sum / n);
    };
    // Which side of each kink (clip bounds 0.8 and 1.28, dual clip 3) a ratio lies on.
    // (kl_cov: |logp − old| has its kink at ratio 1; clip_cov has no dual clip but 3 is harmless.)
    const side = (ratio: number) =>
      mode === 'geo_mean' ? `${Math.log(ratio) < -0.2}${Math.log(ratio) > 0.28}` : mode === 'kl_cov' ? `${ratio < 1}` : `${ratio < 0.8}${ratio > 1.28}${ratio > 3}`;
    let checked = 0,
      active = 0;
    for (let i = 0; i < B * A; i++) {
      if (!mask[i]) {
        expect(gradLogprobs[i]).toBe(0);
        continue;
      }
      const up = logp.slice();
      up[i] += H;
      const dn = logp.slice();
      dn[i] -= H;
      const ratioAt = (x: Float64Array) => (mode === 'gspo' ? seqRatio(x, Math.floor(i / A)) : Math.exp(x[i] - old[i]));
      // At a kink only when the ±h points fall on different branches (CISPO, SAPO and GPG have no
      // kink in logp here; GMPO's are at log-ratio −ε_low and ε_high, where side() looks for it).
      const smooth = mode === 'cispo' || mode === 'sapo' || mode === 'gpg';
      if (!smooth && side(ratioAt(up)) !== side(ratioAt(dn))) continue;
      expectNear(gradLogprobs[i], (lossAt(up) - lossAt(dn)) / (2 * H), `${mode} logp[${i}]`);
      checked++;
      if (gradLogprobs[i] !== 0) active++;
    }
    expect(checked).toBeGreaterThanOrEqual(mask.reduce((s, m) => s + m, 0) - 2);
    expect(active).toBeGreaterThan(0);
  });

  it.each(KL_ESTIMATORS)('kl %s: klGrad is the gradient of verl kl_penalty (straight-through for "+")', (est) => {
    const r = rng(20);
    let checked = 0;
    for (let k = 0; k < 200; k++) {
      const ref = -Math.abs(r.normal()) - 0.1;
      const logp = ref + r.normal() * (k < 190 ? 1.5 : 30); // the last ten reach the k3 clamps
      const value = (x: number) => (est === 'k1_clamped' ? Math.max(x - ref, 0) : verl.klPenalty(x, logp, ref, est));
      const branch = (x: number) => {
        const d = x - ref;
        return `${Math.sign(d)}${d > 20}${d < -20}${Math.exp(-d) + d - 1 > 10}`;
      };
      if (branch(logp + H) !== branch(logp - H)) continue;
      expectNear(klGradValue(logp, ref, est), (value(logp + H) - value(logp - H)) / (2 * H), `${est} d=${logp - ref}`);
      checked++;
    }
    expect(checked).toBeGreaterThan(190);
  });
});
