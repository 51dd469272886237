// policyLoss on both backends against the float64 reference (src/reference/policyLoss.ts).
// Tolerances: stats 1e-4 relative (reductions), gradLogprobs 1e-5 relative element-wise.
import { describe, expect, it } from 'vitest';
import { LOSS_AGGS, NORM_SCALES } from '../../src/reference/aggregate.ts';
import { POLICY_STATS, policyLoss } from '../../src/ops/policyLoss.ts';
import type { LossMode, PolicyLossParams } from '../../src/reference/policyLoss.ts';
import { COV_DEFAULTS, covSelectRef, LOG_RATIO_CLAMP, policyLossRef } from '../../src/reference/policyLoss.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL } from '../helpers/random.ts';
import { covSelect } from '../../src/ops/covSelect.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(xs));

describe.each(BACKENDS)('policyLoss on %s', (_name, makeBackend) => {
  async function check(
    old: Float64Array,
    logp: Float64Array,
    adv: Float64Array,
    mask: Float64Array,
    B: number,
    A: number,
    params: PolicyLossParams,
    what: string,
    isW: Float64Array | null = null,
  ) {
    const be = await makeBackend();
    const t = (x: Float64Array) => be.tensor(x, [B, A]);
    const out = policyLoss(be, { oldLogprobs: t(old), logprobs: t(logp), advantages: t(adv), actionMask: t(mask), params, isWeights: isW ? t(isW) : null });
    const [stats, grad] = await be.readMany([out.stats, out.gradLogprobs]);
    const want = policyLossRef(old, logp, adv, mask, B, A, params, isW);
    expect(out.stats.shape).toEqual([4]);
    expectClose(stats, want.stats, TOL.reduce.rtol, TOL.reduce.atol, `${what} stats`);
    expectClose(grad, want.gradLogprobs, TOL.elem.rtol, TOL.elem.atol, `${what} gradLogprobs`);
    return { stats, grad, want };
  }

  function randomBatch(salt: number, B: number, A: number) {
    const r = rng(salt);
    const old = f32(randn(r, B * A, 1.5).map((x) => -Math.abs(x) - 0.05));
    // ~half the ratios leave [0.8, 1.28]; every 7th is beyond c = 3 (d > ln 3) to reach the dual clip
    const logp = f32(Float64Array.from(old, (o, i) => o + (i % 7 === 0 ? 1.2 + r.next() : r.normal() * 0.4)));
    const adv = f32(randn(r, B * A));
    // token 0 (never masked: rows hold at least one token) has ratio > 3; with A > 0 it is always
    // clipped, so even the small batch exercises the clip whatever the seed
    adv[0] = Math.fround(Math.abs(adv[0]) + 0.1);
    // row 1's first token (never masked either) has ratio < e^-0.5 and A < 0: GMPO's lower clip
    // (d < −ε_low with A < 0) is exercised whatever the seed
    logp[A] = Math.fround(old[A] - 0.5 - r.next());
    adv[A] = Math.fround(-Math.abs(adv[A]) - 0.1);
    const mask = rightPaddedMask(r, B, A, 1);
    for (let a = 0; a < A; a++) mask[(B - 1) * A + a] = 0; // an all-masked row
    for (let i = 0; i < B * A; i++)
      if (!mask[i]) {
        old[i] = NaN;
        logp[i] = 1e30;
      } // garbage under the mask
    return { old, logp, adv, mask };
  }

  const sizes: [number, number][] = [
    [4, 9],
    [40, 70],
  ];
  const configs = LOSS_AGGS.flatMap((agg) => [null, 3].map((clipC) => ({ clipLow: 0.2, clipHigh: 0.28, clipC, agg })));
  for (const [B, A] of sizes) {
    it.each(configs)(`random batch B=${B} A=${A}: %o`, async (params) => {
      const { old, logp, adv, mask } = randomBatch(B * A, B, A);
      const { want } = await check(old, logp, adv, mask, B, A, params, `B${B}A${A}`);
      // the random batch must exercise the clip (and the dual clip when on)
      expect(want.stats[POLICY_STATS.clipfrac]).toBeGreaterThan(0);
      if (params.clipC !== null && B * A > 100) expect(want.stats[POLICY_STATS.clipfracLower]).toBeGreaterThan(0);
    });
  }

  // GSPO and CISPO (verl compute_policy_loss_gspo / _cispo), with and without rollout IS weights,
  // gradient included, garbage (NaN, 1e30) under the mask and an all-masked row.
  // SAPO, GPG and GMPO (verl compute_policy_loss_sapo / _gpg / _geo_mean) likewise; SAPO at verl's
  // default temperatures and at a far pair.
  const modern = (['gspo', 'cispo', 'sapo', 'gpg', 'geo_mean'] as LossMode[]).flatMap((lossMode) =>
    LOSS_AGGS.flatMap((agg) =>
      NORM_SCALES.map((normScale) => ({
        clipLow: 0.2,
        clipHigh: 0.28,
        clipC: 3,
        agg,
        lossMode,
        normScale,
        ...(lossMode === 'sapo' && normScale === 'verl' ? { sapoTauPos: 0.4, sapoTauNeg: 6 } : {}),
      })),
    ),
  );
  for (const [B, A] of sizes) {
    it.each(modern)(`GSPO / CISPO / SAPO / GPG / GMPO random batch B=${B} A=${A}: %o`, async (params) => {
      const { old, logp, adv, mask } = randomBatch(B * A + 1, B, A);
      const r = rng(B + A);
      const isW = f32(Float64Array.from({ length: B * A }, (_, i) => (mask[i] ? r.uniform(0.1, 3) : NaN)));
      const plain = await check(old, logp, adv, mask, B, A, params, `${params.lossMode} B${B}A${A}`);
      await check(old, logp, adv, mask, B, A, params, `${params.lossMode} B${B}A${A} with is_weights`, isW);
      if (params.lossMode === 'geo_mean')
        expect(plain.want.stats[POLICY_STATS.clipfracLower]).toBeGreaterThan(0); // GMPO's A < 0 clip
      else expect(plain.want.stats[POLICY_STATS.clipfracLower]).toBe(0); // none has a dual clip
      if (params.lossMode === 'cispo' || params.lossMode === 'geo_mean') expect(plain.want.stats[POLICY_STATS.clipfrac]).toBeGreaterThan(0);
      if (params.lossMode === 'sapo' || params.lossMode === 'gpg') expect(plain.want.stats[POLICY_STATS.clipfrac]).toBe(0); // no hard clip
      expect(Array.from(plain.grad).some((g) => g !== 0)).toBe(true);
    });
  }

  // Clip-Cov and KL-Cov (verl compute_policy_loss_clip_cov / _kl_cov): the batch-wide choice
  // (shaders/cov_select.wgsl) equals covSelectRef token for token, then values and gradients as
  // above; verl's defaults (one token at these sizes) and knobs that pick several.
  async function checkCov(...args: Parameters<typeof check>) {
    const [old, logp, adv, mask, B, A, params, what] = args;
    const be = await makeBackend();
    const t = (x: Float64Array) => be.tensor(x, [B, A]);
    const [sel] = await be.readMany([covSelect(be, { oldLogprobs: t(old), logprobs: t(logp), advantages: t(adv), actionMask: t(mask), params })]);
    const want = covSelectRef(old, logp, adv, mask, B, A, params);
    expect(Array.from(sel), `${what} picked`).toEqual(Array.from(want));
    const out = await check(...args);
    return { ...out, picked: want.reduce((s, x) => s + x, 0), selected: want };
  }
  /** Unclipped valid tokens whose covariance (A − Ā)(logπ − mean logπ) lies in (lb, ub), in float64. */
  function clipCovBandSize(old: Float64Array, logp: Float64Array, adv: Float64Array, mask: Float64Array, p: PolicyLossParams): number {
    const valid = Array.from(mask.keys()).filter((i) => mask[i] > 0);
    const meanA = valid.reduce((s, i) => s + adv[i], 0) / valid.length;
    const meanL = valid.reduce((s, i) => s + logp[i], 0) / valid.length;
    const lb = p.clipCovLb ?? COV_DEFAULTS.clipCovLb;
    const ub = p.clipCovUb ?? COV_DEFAULTS.clipCovUb;
    return valid.filter((i) => {
      const ratio = Math.exp(Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logp[i] - old[i])));
      const clipped = -adv[i] * Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio)) > -adv[i] * ratio;
      const cov = (adv[i] - meanA) * (logp[i] - meanL);
      return !clipped && cov > lb && cov < ub;
    }).length;
  }
  const covKnobSets = [
    {},
    { clipCovRatio: 0.02, clipCovLb: 0.05, clipCovUb: 3, klCovRatio: 0.03, ppoKlCoef: 0.5 },
    { clipCovRatio: 0.3, clipCovLb: -1, clipCovUb: 1, klCovRatio: 0.5, ppoKlCoef: 2 },
  ];
  const covCases = (['clip_cov', 'kl_cov'] as LossMode[]).flatMap((lossMode) =>
    LOSS_AGGS.flatMap((agg) => covKnobSets.map((k, j) => ({ clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg, lossMode, normScale: 'verl' as const, covSeed: 17 + j, ...k }))),
  );
  for (const [B, A] of sizes) {
    it.each(covCases)(`Clip-Cov / KL-Cov random batch B=${B} A=${A}: %o`, async (params) => {
      const { old, logp, adv, mask } = randomBatch(B * A + 2, B, A);
      const r = rng(B + A + 1);
      const isW = f32(Float64Array.from({ length: B * A }, (_, i) => (mask[i] ? r.uniform(0.1, 3) : NaN)));
      const plain = await checkCov(old, logp, adv, mask, B, A, params, `${params.lossMode} B${B}A${A}`);
      await checkCov(old, logp, adv, mask, B, A, params, `${params.lossMode} B${B}A${A} with is_weights`, isW);
      // how many tokens each mode picks, counted here from its definition: kl_cov the top
      // max(1, ⌊ratio·n⌋) of n valid tokens; clip_cov min(max(1, ⌊ratio·n⌋), |band|), where the band
      // (unclipped tokens with lb < cov < ub) can be empty on the small batch for any knob set
      const n = mask.reduce((s, m) => s + m, 0);
      const k = (ratio: number) => Math.max(1, Math.floor(ratio * n));
      if (params.lossMode === 'kl_cov') expect(plain.picked).toBe(k(params.klCovRatio ?? COV_DEFAULTS.klCovRatio));
      else {
        const band = clipCovBandSize(old, logp, adv, mask, params);
        expect(plain.picked).toBe(Math.min(k(params.clipCovRatio ?? COV_DEFAULTS.clipCovRatio), band));
        // the large batch always has tokens in the knob sets' bands, so their picks are exercised
        if (B * A > 1000 && params.clipCovRatio !== undefined) expect(band).toBeGreaterThan(1);
      }
      expect(plain.want.stats[POLICY_STATS.clipfracLower]).toBe(0);
      if (params.lossMode === 'kl_cov') expect(plain.want.stats[POLICY_STATS.clipfrac]).toBe(0);
      // A token carries gradient unless it is clipped, dual-clipped (A < 0, ratio > c) or, for
      // clip_cov, detached by the pick; kl_cov's picks carry their KL term. On the small batch every
      // token can be stopped for some seeds: the gradient must be all zero exactly then.
      const carriers = Array.from(mask.keys()).filter((i) => {
        if (!mask[i]) return false;
        const ratio = Math.exp(Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logp[i] - old[i])));
        const clipped = -adv[i] * Math.min(1 + params.clipHigh, Math.max(1 - params.clipLow, ratio)) > -adv[i] * ratio;
        const dual = adv[i] < 0 && params.clipC !== null && ratio > params.clipC;
        const free = !clipped && !dual;
        return params.lossMode === 'kl_cov' ? free || plain.selected[i] > 0 : free && plain.selected[i] === 0;
      }).length;
      expect(Array.from(plain.grad).some((g) => g !== 0)).toBe(carriers > 0);
      if (B * A > 1000) expect(carriers).toBeGreaterThan(0);
    });
  }

  it('Clip-Cov / KL-Cov: equal covariances go to the lower index; extreme log-ratios, length-1 rows, empty batches stay finite', async () => {
    // every valid token has cov = 1·1 exactly in float32 (Ā = 0, L̄ = −2): kl_cov's top 4 are tokens 0–3
    const B = 2,
      A = 5;
    const adv = f32([1, -1, 1, -1, 0, 1, -1, 1, -1, 0]);
    const logp = f32([-1, -3, -1, -3, 0, -1, -3, -1, -3, 0]);
    const mask = f32([1, 1, 1, 1, 0, 1, 1, 1, 1, 0]);
    const tie = await checkCov(logp, logp, adv, mask, B, A, { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'kl_cov', klCovRatio: 0.5 }, 'kl_cov ties');
    expect(tie.picked).toBe(4);
    const clipTie = await checkCov(
      logp,
      logp,
      adv,
      mask,
      B,
      A,
      { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean', lossMode: 'clip_cov', clipCovRatio: 0.5, clipCovLb: 0.5, clipCovUb: 2 },
      'clip_cov ties',
    );
    expect(clipTie.picked).toBe(4);
    // |d| up to 60 (ratio clamps at e^±20, gradient 0 there), a length-1 row, garbage under the mask
    const old = f32([0, 0, -40, 0, 0, -3, 0, 0, 0]);
    const lp = f32([50, -50, 0, -60, 19.5, -3, 60, NaN, 1e30]);
    const ad = f32([1, -1, -2, 0.5, -1, 1, -1, 0, 0]);
    const mk = f32([1, 1, 1, 1, 1, 0, 1, 0, 0]);
    for (const lossMode of ['clip_cov', 'kl_cov'] as LossMode[]) {
      for (const agg of LOSS_AGGS) {
        const params: PolicyLossParams = {
          clipLow: 0.2,
          clipHigh: 0.28,
          clipC: null,
          agg,
          lossMode,
          clipCovRatio: 0.5,
          clipCovLb: -1e4,
          clipCovUb: 1e4,
          klCovRatio: 0.5,
          ppoKlCoef: 0.3,
        };
        const { stats, grad } = await checkCov(old, lp, ad, mk, 3, 3, params, `${lossMode} extreme ${agg}`);
        expect([...stats, ...grad].every(Number.isFinite), `${lossMode} ${agg}`).toBe(true);
        expect(Array.from(grad.slice(0, 4))).toEqual([0, 0, 0, 0]); // |d| ≥ 20
      }
      const a1 = rng(5);
      await checkCov(
        f32(randn(a1, 6, 0.5)),
        f32(randn(a1, 6, 0.5)),
        f32(randn(a1, 6)),
        f32([1, 1, 0, 1, 1, 1]),
        6,
        1,
        { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'seq-mean-token-mean', lossMode, clipCovLb: -5, klCovRatio: 0.3 },
        `${lossMode} A=1`,
      );
      const empty = await checkCov(old, lp, ad, new Float64Array(9), 3, 3, { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode }, `${lossMode} all masked`);
      expect(empty.picked).toBe(0);
      expect(Array.from(empty.stats)).toEqual([0, 0, 0, 0]);
      expect(Array.from(empty.grad)).toEqual(new Array(9).fill(0));
    }
  });

  it('CISPO keeps the gradient of clipped tokens; GSPO shares one ratio per row', async () => {
    // CISPO: ratio 1.5 (clipped at 1.28) with A = 1 → g = −1.28/n, loss −1.28·1·logp; PPO would give 0.
    const old = [0, 0, -1, -1];
    const logp = [Math.log(1.5), Math.log(1.5), -1, -1.2];
    const adv = [1, -1, 2, 1];
    const mask = [1, 1, 1, 0];
    const cispo = await check(f32(old), f32(logp), f32(adv), f32(mask), 1, 4, { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'cispo' }, 'cispo hand');
    expectClose(cispo.grad, [-1.28 / 3, 1.28 / 3, -2 / 3, 0], 1e-6, 1e-7, 'cispo hand grads');
    // GSPO over two rows: s_0 = mean(d) over its 3 tokens, row 1 empty
    const s0 = (Math.log(1.5) * 2 + 0) / 3;
    const gspo = await check(
      f32([...old, 0, 0, 0, 0]),
      f32([...logp, 5, 5, 5, 5]),
      f32([...adv, 1, 1, 1, 1]),
      f32([...mask, 0, 0, 0, 0]),
      2,
      4,
      { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'gspo' },
      'gspo hand',
    );
    const ratio = Math.exp(s0); // ≈ 1.31 > 1.28: clipped for A > 0, live for A < 0
    expectClose(gspo.grad, [0, ratio / 3, 0, 0, 0, 0, 0, 0], 1e-5, 1e-7, 'gspo hand grads');
  });

  it('SAPO gates softly; GPG is −A·logπ; GMPO shares one clipped geometric-mean ratio per row', async () => {
    // SAPO, τ_pos = 2, τ_neg = 4, one row: r = 1 (A = 1): gate 2/τ = 1, g = −A = −1;
    // r = 1.5 (A = −1): σ = sigmoid(4·0.5), gate σ·4/4, g = 4·σ(1 − σ)·1.5; seq-mean-token-mean ÷ 2
    const sapo = await check(
      f32([0, 0]),
      f32([0, Math.log(1.5)]),
      f32([1, -1]),
      f32([1, 1]),
      1,
      2,
      { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'sapo', sapoTauPos: 2, sapoTauNeg: 4 },
      'sapo hand',
    );
    const sig = 1 / (1 + Math.exp(-2));
    expectClose([sapo.stats[0]], [(-1 + sig) / 2], 1e-5, 1e-7, 'sapo hand loss');
    expectClose(sapo.grad, [-1 / 2, (4 * sig * (1 - sig) * 1.5) / 2], 1e-5, 1e-7, 'sapo hand grads');
    // GPG: loss −A·logp, g = −A whatever the ratio (here e^50: no clamp, no clip)
    const gpg = await check(
      f32([0, -60]),
      f32([-0.5, -10]),
      f32([2, -1]),
      f32([1, 1]),
      1,
      2,
      { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'gpg' },
      'gpg hand',
    );
    expectClose([gpg.stats[0]], [(1 - 10) / 2], 1e-6, 1e-7, 'gpg hand loss');
    expectClose(gpg.grad, [-1, 0.5], 1e-6, 1e-7, 'gpg hand grads');
    // GMPO, row 0: d = [0.5 (A = 1, clipped to 0.28: dead), 0.1 (A = 1, live), −0.5 (A = −1, clipped to −0.2: dead)];
    // λ = (0.28 + 0.1 − 0.2)/3, Ā = 1/3, L_0 = −Ā·e^λ; row 1 empty: counted in the mean over B = 2
    const gmpo = await check(
      f32([0, 0, 0, 0, 0, 0]),
      f32([0.5, 0.1, -0.5, 9, 9, 9]),
      f32([1, 1, -1, 1, 1, 1]),
      f32([1, 1, 1, 0, 0, 0]),
      2,
      3,
      { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode: 'geo_mean' },
      'geo_mean hand',
    );
    const L0 = (-1 / 3) * Math.exp((0.28 + 0.1 - 0.2) / 3);
    expectClose([gmpo.stats[0], gmpo.stats[1], gmpo.stats[2]], [L0 / 2, 1 / 3, 1 / 3], 1e-5, 1e-7, 'geo_mean hand stats');
    expectClose(gmpo.grad, [0, L0 / 6, 0, 0, 0, 0], 1e-5, 1e-7, 'geo_mean hand grads');
  });

  it('SAPO, GPG and GMPO on extreme log-ratios, length-1 rows and empty rows: finite, as the reference', async () => {
    // |d| up to 60: SAPO's ratio clamps at e^±20 (gate saturates, gradient 0); GMPO's clipped
    // log-ratio stays within the clip where it binds and reaches λ = 60 (a ratio e^60) where it does
    // not. GMPO has no ratio clamp (verl's is commented out): λ beyond ~88 overflows float32 to ∞,
    // as it does in verl's float32.
    const old = [0, 0, -40, 0, 0, -3, 0, 0, 0];
    const logp = [50, -50, 0, -60, 19.5, -3, 60, 0, 0];
    const adv = [1, -1, -2, 0.5, -1, 1, -1, 0, 0];
    const mask = [1, 1, 1, 1, 1, 0, 1, 0, 0]; // rows: 3 tokens, 2 tokens, 1 token (A = 3, B = 3)
    for (const lossMode of ['sapo', 'gpg', 'geo_mean'] as LossMode[]) {
      for (const agg of LOSS_AGGS) {
        const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg, lossMode };
        const { stats, grad } = await check(f32(old), f32(logp), f32(adv), f32(mask), 3, 3, params, `${lossMode} extreme ${agg}`);
        expect([...stats, ...grad].every(Number.isFinite), `${lossMode} ${agg}`).toBe(true);
        if (lossMode === 'sapo') expect(Array.from(grad.slice(0, 3))).toEqual([0, 0, 0]); // |d| ≥ 20
      }
      const empty = await check(
        f32(old),
        f32(logp),
        f32(adv),
        new Float64Array(9),
        3,
        3,
        { clipLow: 0.2, clipHigh: 0.28, clipC: null, agg: 'token-mean', lossMode },
        `${lossMode} all masked`,
      );
      expect(Array.from(empty.stats)).toEqual([0, 0, 0, 0]);
      expect(Array.from(empty.grad)).toEqual(new Array(9).fill(0));
    }
  });

  it.each(LOSS_AGGS)('hand-computed tokens (%s)', async (agg) => {
    // ε = 0.2, c = 3. Tokens: (ratio 1.5, A = 1) clipped: L = −1.2, g = 0;
    // (ratio 1.5, A = −1) unclipped: L = 1.5, g = 1.5; (ratio e², A = −1) dual clip: L = 3, g = 0;
    // (ratio 1, A = 2): L = −2, g = −2.
    const old = [0, 0, 0, -1];
    const logp = [Math.log(1.5), Math.log(1.5), 2, -1];
    const adv = [1, -1, -1, 2];
    const mask = [1, 1, 1, 1];
    const params = { clipLow: 0.2, clipHigh: 0.2, clipC: 3, agg };
    const { stats, grad } = await check(f32(old), f32(logp), f32(adv), f32(mask), 1, 4, params, 'hand');
    // one row of 4 tokens: every mode divides by 4 except seq-mean-token-sum (the row's sum, ÷ 1 row)
    const n = agg === 'seq-mean-token-sum' ? 1 : 4;
    expectClose([stats[0]], [(-1.2 + 1.5 + 3 - 2) / n], TOL.reduce.rtol, TOL.reduce.atol, 'hand loss');
    expectClose([stats[1], stats[2]], [0.25, 0.25], 0, 1e-7, 'hand clip fractions'); // clipped: token 0; dual clip: token 2
    expectClose(grad, [0, 1.5 / n, 0, -2 / n], 1e-6, 1e-7, 'hand grads');
  });

  it('one-token responses, one unmasked token, and everything masked', async () => {
    const r = rng(11);
    const B = 5;
    const mk = () => f32(randn(r, B, 0.5));
    const params: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.2, clipC: 3, agg: 'seq-mean-token-mean' };
    await check(mk(), mk(), mk(), Float64Array.from([1, 1, 0, 1, 1]), B, 1, params, 'A=1');
    const one = new Float64Array(12);
    one[7] = 1;
    for (const agg of LOSS_AGGS) await check(f32(randn(r, 12)), f32(randn(r, 12)), f32(randn(r, 12)), one, 3, 4, { ...params, agg }, `one token ${agg}`);
    const { stats, grad } = await check(f32(randn(r, 12)), f32(randn(r, 12)), f32(randn(r, 12)), new Float64Array(12), 3, 4, params, 'all masked');
    expect(Array.from(stats)).toEqual([0, 0, 0, 0]);
    expect(Array.from(grad)).toEqual(new Array(12).fill(0));
  });

  it('huge logp − old differences: ratio clamps at e^±20, zero gradient, no NaN', async () => {
    const old = [0, 0, -1e4, 0, 0, -3];
    const logp = [50, -50, 0, -1e4, 19.5, -3];
    const adv = [1, -1, -2, 0.5, -1, 1];
    const mask = [1, 1, 1, 1, 1, 1];
    for (const clipC of [null, 3]) {
      const { grad } = await check(f32(old), f32(logp), f32(adv), f32(mask), 2, 3, { clipLow: 0.2, clipHigh: 0.2, clipC, agg: 'token-mean' }, `huge diff c=${clipC}`);
      expect(Array.from(grad.slice(0, 4))).toEqual([0, 0, 0, 0]);
    }
  });

  it('rejects c ≤ 1, non-positive clip ranges before any GPU work', async () => {
    const be = await makeBackend();
    const z = be.zeros([2, 3]);
    const before = be.counters().dispatches;
    const base: PolicyLossParams = { clipLow: 0.2, clipHigh: 0.2, clipC: 3, agg: 'token-mean' };
    expect(() => policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: z, params: { ...base, clipC: 1 } })).toThrow(/clipC must be .* > 1/);
    expect(() => policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: z, params: { ...base, clipC: 0.5 } })).toThrow(/clipC/);
    expect(() => policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: z, params: { ...base, clipC: NaN } })).toThrow(/clipC/);
    expect(() => policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: z, params: { ...base, clipLow: 0 } })).toThrow(/clipLow/);
    expect(() => policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: z, params: { ...base, clipHigh: -0.1 } })).toThrow(/clipHigh/);
    expect(() => policyLoss(be, { oldLogprobs: z, logprobs: z, advantages: z, actionMask: be.zeros([3, 2]), params: base })).toThrow(/action_mask/);
    expect(be.counters().dispatches).toBe(before);
  });
});
