// The kernels against verl's own functions, transliterated op by op in float64
// (tests/helpers/verl.ts), on fresh random inputs (TEST_SEED) and edge cases, on both backends.
// Tolerances: losses and statistics are reductions (TOL.reduce: 1e-4 relative, 1e-5 absolute);
// element-wise outputs TOL.elem (1e-5 relative, 1e-6 absolute). Gradients are checked against
// finite differences of the same verl transliterations in tests/unit/ppo_grads.test.ts.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { LOSS_AGGS, type LossAgg } from '../../src/reference/aggregate.ts';
import { POLICY_STATS, policyLoss } from '../../src/ops/policyLoss.ts';
import type { LossMode, PolicyLossParams } from '../../src/reference/policyLoss.ts';
import { covHash, policyLossRef } from '../../src/reference/policyLoss.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import * as verl from '../helpers/verl.ts';
import { aggregate } from '../../src/ops/aggregate.ts';
import { kl } from '../../src/ops/kl.ts';
import { tisWeights } from '../../src/ops/tisWeights.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));

/** Right-padded mask with every row holding 1..A tokens (verl's seq-mean-token-mean is NaN on an empty row). */
function fullRowsMask(r: ReturnType<typeof rng>, B: number, A: number, lengths?: number[]): Float64Array {
  const m = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = lengths ? lengths[b] : r.int(1, A + 1);
    for (let a = 0; a < len; a++) m[b * A + a] = 1;
  }
  return m;
}

function policyBatch(salt: number, B: number, A: number, spread = 0.5) {
  const r = rng(salt);
  const old = f32(randn(r, B * A, 1.2).map((x) => -Math.abs(x) - 0.05));
  const logp = f32(Float64Array.from(old, (o) => o + r.normal() * spread));
  const adv = f32(randn(r, B * A));
  const mask = fullRowsMask(r, B, A);
  const isW = f32(Float64Array.from({ length: B * A }, () => r.uniform(0.2, 2)));
  // garbage under the mask: finite (verl multiplies by the mask, NaN·0 would poison it too)
  for (let i = 0; i < B * A; i++)
    if (!mask[i]) {
      old[i] = -7;
      logp[i] = 3;
    }
  return { old, logp, adv, mask, isW };
}

async function ours(be: Backend, x: ReturnType<typeof policyBatch>, B: number, A: number, params: PolicyLossParams, withIs: boolean) {
  const t = (v: Float64Array) => be.tensor(v, [B, A]);
  const out = policyLoss(be, { oldLogprobs: t(x.old), logprobs: t(x.logp), advantages: t(x.adv), actionMask: t(x.mask), params, isWeights: withIs ? t(x.isW) : null });
  const [stats] = await be.readMany([out.stats]);
  return stats;
}

// SAPO's temperatures in the parity cases: not verl's defaults (1.0, 1.05), so a swapped pair shows.
const TAU_POS = 0.7;
const TAU_NEG = 1.6;
// Clip-Cov / KL-Cov knobs that pick several tokens (verl's 0.0002 picks one at these sizes).
const COV = { clipCovRatio: 0.05, clipCovLb: 0.1, clipCovUb: 3, klCovRatio: 0.05, ppoKlCoef: 0.4, covSeed: 123 };

function theirs(mode: LossMode, x: ReturnType<typeof policyBatch>, B: number, A: number, agg: LossAgg, withIs: boolean) {
  const cfg: verl.VerlPolicyConfig = { clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3, lossAggMode: agg };
  const w = withIs ? x.isW : null;
  if (mode === 'sapo') return verl.policyLossSapo(x.old, x.logp, x.adv, x.mask, B, A, TAU_POS, TAU_NEG, w);
  if (mode === 'geo_mean') return verl.policyLossGeoMean(x.old, x.logp, x.adv, x.mask, B, A, cfg, w);
  // Clip-Cov: verl's torch.randperm replaced by the playground's seeded order (covHash), injected
  if (mode === 'clip_cov') {
    const order = (band: number[]) => [...band].sort((p, q) => covHash(q, COV.covSeed) - covHash(p, COV.covSeed) || p - q);
    return verl.policyLossClipCov(x.old, x.logp, x.adv, x.mask, B, A, cfg, { ratio: COV.clipCovRatio, lb: COV.clipCovLb, ub: COV.clipCovUb }, order, w);
  }
  if (mode === 'kl_cov') return verl.policyLossKlCov(x.old, x.logp, x.logp, x.adv, x.mask, B, A, agg, { ratio: COV.klCovRatio, coef: COV.ppoKlCoef }, w);
  // verl's GPG returns no metrics: the loss is compared; clip fractions must be 0, ppo_kl is vanilla's
  if (mode === 'gpg')
    return {
      ...verl.policyLossVanilla(x.old, x.logp, x.adv, x.mask, B, A, cfg, w),
      clipfrac: 0,
      clipfracLower: 0,
      loss: verl.policyLossGpg(x.logp, x.adv, x.mask, B, A, agg, w).loss,
    };
  if (mode === 'gspo') return verl.policyLossGspo(x.old, x.logp, x.logp, x.adv, x.mask, B, A, cfg, w);
  if (mode === 'cispo') return verl.policyLossCispo(x.old, x.logp, x.logp, x.adv, x.mask, B, A, cfg, w);
  return verl.policyLossVanilla(x.old, x.logp, x.adv, x.mask, B, A, cfg, w);
}

const asStats = (v: { loss: number; clipfrac: number; clipfracLower: number; ppoKl: number }) => [v.loss, v.clipfrac, v.clipfracLower, v.ppoKl];

describe.each(BACKENDS)('verl parity on %s', (_name, makeBackend) => {
  const modes: LossMode[] = ['vanilla', 'gspo', 'cispo', 'sapo', 'gpg', 'geo_mean', 'clip_cov', 'kl_cov'];
  const cases = modes.flatMap((mode) => LOSS_AGGS.flatMap((agg) => [false, true].map((withIs) => [mode, agg, withIs] as [LossMode, LossAgg, boolean])));
  for (const [B, A] of [
    [5, 8],
    [32, 47],
  ] as [number, number][]) {
    it.each(cases)(`policy loss %s, agg %s, is_weights %s at B=${B} A=${A}`, async (mode, agg, withIs) => {
      const be = await makeBackend();
      let x = policyBatch(B * A + modes.indexOf(mode), B, A);
      // Clip-Cov with no token in its covariance band is vanilla: a small batch without one is drawn again
      for (let k = 1; mode === 'clip_cov' && theirs(mode, x, B, A, agg, withIs).clipfrac === 0 && k < 20; k++) x = policyBatch(B * A + modes.indexOf(mode) + 7919 * k, B, A);
      // verl's seq-mean-token-sum-norm is Σ/A: our normScale 'verl'
      const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg, lossMode: mode, normScale: 'verl', sapoTauPos: TAU_POS, sapoTauNeg: TAU_NEG, ...COV };
      const got = await ours(be, x, B, A, params, withIs);
      const want = asStats(theirs(mode, x, B, A, agg, withIs));
      expectClose(got, want, TOL.reduce.rtol, TOL.reduce.atol, `${mode} ${agg} stats [loss, clipfrac, clipfrac_lower, ppo_kl]`);
      if (mode === 'vanilla' || mode === 'cispo' || mode === 'geo_mean') expect(want[POLICY_STATS.clipfrac]).toBeGreaterThan(0); // the batch reaches the clip
      if (mode === 'geo_mean') expect(want[POLICY_STATS.clipfracLower]).toBeGreaterThan(0);
      if (mode === 'clip_cov') expect(want[POLICY_STATS.clipfrac]).toBeGreaterThan(0); // some tokens zeroed
      // per_seq is verl's value ÷ B (the modes that read loss_agg_mode)
      if (agg === 'seq-mean-token-sum-norm' && (mode === 'vanilla' || mode === 'cispo' || mode === 'gpg')) {
        const perSeq = await ours(be, x, B, A, { ...params, normScale: 'per_seq' }, withIs);
        expectClose([perSeq[0]], [want[0] / B], TOL.reduce.rtol, TOL.reduce.atol, 'per_seq = verl / B');
      }
    });
  }

  it('GSPO reaches its clip on sequence ratios and clamps the log-ratio at 10 without NaN', async () => {
    const be = await makeBackend();
    const B = 4,
      A = 6;
    const x = policyBatch(91, B, A, 0.1);
    // row 0: every token +0.5 → s = 0.5, clipped for A > 0; row 1: +30 → s clamps at 10; row 2: −40
    for (let a = 0; a < A; a++) {
      x.logp[a] = Math.fround(x.old[a] + 0.5);
      x.adv[a] = 1;
      x.logp[A + a] = Math.fround(x.old[A + a] + 30);
      x.logp[2 * A + a] = Math.fround(x.old[2 * A + a] - 40);
    }
    for (let a = 0; a < A; a++) for (const b of [0, 1, 2]) x.mask[b * A + a] = 1;
    const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'gspo' };
    const t = (v: Float64Array) => be.tensor(v, [B, A]);
    const out = policyLoss(be, { oldLogprobs: t(x.old), logprobs: t(x.logp), advantages: t(x.adv), actionMask: t(x.mask), params });
    const [stats, grad] = await be.readMany([out.stats, out.gradLogprobs]);
    const want = asStats(verl.policyLossGspo(x.old, x.logp, x.logp, x.adv, x.mask, B, A, { clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3, lossAggMode: 'token-mean' }));
    expectClose(stats, want, TOL.reduce.rtol, TOL.reduce.atol, 'gspo extreme stats');
    expect(Array.from(grad.slice(0, A))).toEqual(new Array(A).fill(0)); // clipped row: no gradient
    for (const g of grad) expect(Number.isFinite(g)).toBe(true);
    expect(stats.every(Number.isFinite)).toBe(true);
  });

  it('length-1 responses, all-masked rows, extreme log-ratios: every mode finite, matching verl where verl is defined', async () => {
    const be = await makeBackend();
    const B = 4,
      A = 5;
    const x = policyBatch(93, B, A);
    x.mask.fill(0);
    x.mask[0] = 1; // row 0: one token
    x.mask[A] = 1;
    x.mask[A + 1] = 1; // row 1: two tokens
    // row 2, 3: all masked; extreme log-ratios on the live tokens
    x.logp[0] = Math.fround(x.old[0] + 60);
    x.logp[A + 1] = Math.fround(x.old[A + 1] - 60);
    for (const mode of modes) {
      for (const agg of LOSS_AGGS) {
        const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg, lossMode: mode, normScale: 'verl', sapoTauPos: TAU_POS, sapoTauNeg: TAU_NEG, ...COV };
        const t = (v: Float64Array) => be.tensor(v, [B, A]);
        const out = policyLoss(be, { oldLogprobs: t(x.old), logprobs: t(x.logp), advantages: t(x.adv), actionMask: t(x.mask), params, isWeights: t(x.isW) });
        const [stats, grad] = await be.readMany([out.stats, out.gradLogprobs]);
        expect([...stats, ...grad].every(Number.isFinite), `${mode} ${agg}`).toBe(true);
        // verl over the two non-empty rows only (its seq means are NaN / ÷B with empty rows);
        // GMPO over all four: verl's torch.mean counts the empty rows (each a loss of 0)
        const sub = { old: x.old.slice(0, 2 * A), logp: x.logp.slice(0, 2 * A), adv: x.adv.slice(0, 2 * A), mask: x.mask.slice(0, 2 * A), isW: x.isW.slice(0, 2 * A) };
        // Clip-Cov / KL-Cov: verl's have no ±20 clamp on the log-ratio (its e^60 is finite in
        // float64, not always in float32); the playground clamps as in vanilla (docs/algorithms.md),
        // so here the float64 reference is the oracle.
        const cov = mode === 'clip_cov' || mode === 'kl_cov';
        const want = cov
          ? Array.from(policyLossRef(x.old, x.logp, x.adv, x.mask, B, A, params, x.isW).stats)
          : mode === 'geo_mean'
            ? asStats(theirs(mode, x, B, A, agg, true))
            : asStats(theirs(mode, sub, 2, A, agg, true));
        expectClose(stats, want, TOL.reduce.rtol, TOL.reduce.atol, `${mode} ${agg} with empty rows`);
      }
    }
  });

  it.each(LOSS_AGGS)('agg_loss %s (norm_scale verl) on random inputs', async (agg) => {
    const be = await makeBackend();
    const r = rng(95 + LOSS_AGGS.indexOf(agg));
    const B = 23,
      A = 17;
    const x = f32(randn(r, B * A, 2));
    const mask = fullRowsMask(r, B, A);
    const out = aggregate(be, { x: be.tensor(x, [B, A]), actionMask: be.tensor(mask, [B, A]), agg, normScale: 'verl' });
    const [value] = await be.readMany([out.value]);
    expectClose(value, [verl.aggLoss(x, mask, B, A, agg)], TOL.reduce.rtol, TOL.reduce.atol, agg);
  });

  it.each(KL_ESTIMATORS.filter((e) => e !== 'k1_clamped'))('kl_penalty %s value on random and extreme inputs', async (est) => {
    const be = await makeBackend();
    const r = rng(97);
    const n = 64;
    const logp = f32(randn(r, n, 1.5).map((v) => -Math.abs(v)));
    const ref = f32(Float64Array.from(logp, (l) => l + r.normal()));
    logp[0] = -1;
    ref[0] = -40; // d = 39: k3 clamps
    logp[1] = -40;
    ref[1] = -1; // d = −39
    const got = await be.read(kl(be, { logprobs: be.tensor(logp, [8, 8]), refLogprobs: be.tensor(ref, [8, 8]), estimator: est }));
    expectClose(
      got,
      Array.from(logp, (l, i) => verl.klForward(l, ref[i], est)),
      TOL.elem.rtol,
      TOL.elem.atol,
      est,
    );
  });

  it('token TIS weights equal verl rollout correction (token, threshold), masked and extreme', async () => {
    const be = await makeBackend();
    const r = rng(99);
    const B = 7,
      A = 9;
    const old = f32(randn(r, B * A, 1).map((v) => -Math.abs(v)));
    const rollout = f32(Float64Array.from(old, (o) => o + r.normal() * 0.7));
    const mask = fullRowsMask(r, B, A);
    old[0] = 0;
    rollout[0] = -50; // ratio e^50 → capped
    old[1] = -50;
    rollout[1] = 0; // ratio → e^-20
    mask[0] = 1;
    mask[1] = 1;
    for (let i = 0; i < B * A; i++)
      if (!mask[i]) {
        old[i] = NaN;
        rollout[i] = Infinity;
      }
    for (const cap of [2, 1.2]) {
      const got = await be.read(tisWeights(be, { oldLogprobs: be.tensor(old, [B, A]), rolloutLogprobs: be.tensor(rollout, [B, A]), actionMask: be.tensor(mask, [B, A]), cap }));
      const clean = (v: Float64Array) => Float64Array.from(v, (x, i) => (mask[i] ? x : 0));
      expectClose(got, verl.tokenTis(clean(old), clean(rollout), mask, cap), TOL.elem.rtol, TOL.elem.atol, `tis cap ${cap}`);
      expect([Math.fround(cap), cap]).toContain(got[0]); // capped exactly (the cap as float32 on WebGPU)
      expect(Array.from(got).every((w, i) => (mask[i] ? w > 0 && w <= Math.fround(cap) : w === 0))).toBe(true);
    }
    expect(() => tisWeights(be, { oldLogprobs: be.tensor(old, [B, A]), rolloutLogprobs: be.tensor(rollout, [B, A]), actionMask: be.tensor(mask, [B, A]), cap: 0 })).toThrow(/cap/);
  });
});
