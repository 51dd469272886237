// ppo.actorLoss (shaders/actor_loss.wgsl on WebGPU: log-softmax, gather, entropy, policy loss,
// entropy bonus, KL loss and ∂loss/∂logits in one pass) on both backends against its float64
// reference src/reference/actorLoss.ts, on fresh random inputs for every loss mode, aggregation,
// with and without TIS weights, entropy bonus and KL loss, plus the edges: an all-masked row, an
// all-masked batch, one action token, extreme logits at a low temperature, NaN under the mask.
// Tolerances (float32 against float64): log-probs 1e-5 relative element-wise (TOL.elem); the
// statistics and the gradient 1e-4 relative (TOL.reduce: sums over the batch and the vocabulary),
// the gradient's absolute term scaled by its largest entry (a norm-wise float32 bound).
// On the CPU backend actorLoss must equal, bit for bit, the per-op composition it replaced.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { LOSS_AGGS, NORM_SCALES } from '../../src/reference/aggregate.ts';
import type { ActorLossParams } from '../../src/reference/actorLoss.ts';
import type { LossMode } from '../../src/reference/policyLoss.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { actorLossRef } from '../../src/reference/actorLoss.ts';
import { logprobsRef } from '../../src/reference/logprobs.ts';
import { BACKENDS, cpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rightPaddedMask, rng, TOL } from '../helpers/random.ts';
import { actorLoss } from '../../src/ops/actorLoss.ts';
import { aggregate } from '../../src/ops/aggregate.ts';
import { kl, klGrad } from '../../src/ops/kl.ts';
import { logprobs, logprobsBackward } from '../../src/ops/logprobs.ts';
import { POLICY_STATS, policyLoss } from '../../src/ops/policyLoss.ts';

const f32 = (xs: ArrayLike<number>) => Float64Array.from(new Float32Array(Array.from(xs)));

interface Batch {
  B: number;
  S: number;
  A: number;
  V: number;
  start: number;
  T: number;
  logits: Float64Array;
  tokens: number[];
  old: Float64Array;
  adv: Float64Array;
  mask: Float64Array;
  isW: Float64Array;
  ref: Float64Array;
}

function randomBatch(salt: number, B: number, A: number, V: number, T = 1, start = 2, logitScale = 2): Batch {
  const r = rng(salt);
  const S = start + A + 1;
  const logits = f32(randn(r, B * S * V, logitScale));
  const tokens = Array.from({ length: B * A }, () => r.int(0, V));
  // old log-probs near the current ones: ratios inside and outside the clip range, some beyond
  const scored = new Float64Array(B * A * V);
  for (let b = 0; b < B; b++) for (let a = 0; a < A; a++) for (let v = 0; v < V; v++) scored[(b * A + a) * V + v] = logits[(b * S + start + a) * V + v];
  const logp = logprobsRef(scored, tokens, B, A, V, T).logprobs;
  // the dual-clip constant 3 (every 7th token); row 0 is shifted as a whole (ratio e^0.6) so that
  // GSPO's sequence ratio leaves the clip range too, whatever the seed
  const old = f32(Float64Array.from(logp, (l, i) => l - (i < A ? 0.6 : i % 7 === 0 ? 1.2 + r.next() : r.normal() * 0.4)));
  const adv = f32(randn(r, B * A));
  adv[0] = Math.fround(Math.abs(adv[0]) + 0.1); // positive at row 0's first token (never masked): clipped
  const mask = rightPaddedMask(r, B, A, 1);
  if (B > 2) for (let a = 0; a < A; a++) mask[(B - 1) * A + a] = 0; // an all-masked row
  const isW = f32(Float64Array.from({ length: B * A }, () => r.uniform(0.1, 3)));
  const ref = f32(Float64Array.from(logp, (l) => l + r.normal() * 0.5));
  for (let i = 0; i < B * A; i++) {
    if (!mask[i]) {
      old[i] = NaN; // garbage under the mask must not leak
      adv[i] = NaN;
      isW[i] = NaN;
    }
  }
  return { B, S, A, V, start, T, logits, tokens, old, adv, mask, isW, ref };
}

async function run(be: Backend, x: Batch, params: ActorLossParams, withIs: boolean) {
  const t = (d: Float64Array) => be.tensor(d, [x.B, x.A]);
  const out = actorLoss(be, {
    logits: be.tensor(x.logits, [x.B, x.S, x.V]),
    start: x.start,
    tokens: be.tensor(x.tokens, [x.B, x.A], 'i32'),
    temperature: x.T,
    oldLogprobs: t(x.old),
    advantages: t(x.adv),
    actionMask: t(x.mask),
    params,
    isWeights: withIs ? t(x.isW) : null,
    refLogprobs: params.kl ? t(x.ref) : null,
  });
  expect(out.gradLogits.shape).toEqual([x.B, x.S, x.V]);
  expect(out.logprobs.shape).toEqual([x.B, x.A]);
  const [grad, logprobs, policy, entropy, klLoss] = await be.readMany([out.gradLogits, out.logprobs, out.policy, out.entropy, out.klLoss]);
  return { grad, logprobs, policy, entropy: entropy[0], klLoss: klLoss[0] };
}

function expected(x: Batch, params: ActorLossParams, withIs: boolean) {
  return actorLossRef(
    x.logits,
    x.tokens,
    x.old,
    x.adv,
    x.mask,
    { B: x.B, S: x.S, A: x.A, V: x.V, start: x.start, temperature: x.T },
    params,
    withIs ? x.isW : null,
    params.kl ? x.ref : null,
  );
}

function compare(got: Awaited<ReturnType<typeof run>>, want: ReturnType<typeof actorLossRef>, what: string) {
  for (const [name, arr] of [
    ['grad', got.grad],
    ['logprobs', got.logprobs],
    ['policy', got.policy],
  ] as const) {
    expect(arr.every(Number.isFinite), `${what}: ${name} finite`).toBe(true);
  }
  expectClose(got.logprobs, want.logprobs, TOL.elem.rtol, TOL.elem.atol, `${what} logprobs`);
  expectClose(got.policy, want.policy, TOL.reduce.rtol, TOL.reduce.atol, `${what} policy stats`);
  expectClose([got.entropy, got.klLoss], [want.entropy, want.klLoss], TOL.reduce.rtol, TOL.reduce.atol, `${what} entropy, kl loss`);
  const scale = want.gradLogits.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  expectClose(got.grad, want.gradLogits, TOL.reduce.rtol, TOL.reduce.atol * Math.max(scale, 1e-3), `${what} gradLogits`);
}

const base = { clipLow: 0.2, clipHigh: 0.28, clipC: 3 as number | null };
const COV_KNOBS = { clipCovRatio: 0.1, clipCovLb: -2, clipCovUb: 2, klCovRatio: 0.1, ppoKlCoef: 0.7, covSeed: 5 };

describe.each(BACKENDS)('actorLoss on %s', (_name, makeBackend) => {
  // Every aggregation (both norm scales) for each loss mode, with TIS weights, entropy bonus and KL loss.
  // SAPO at temperatures away from verl's defaults (the uniform must carry them). Clip-Cov and
  // KL-Cov with knobs that pick several tokens (verl's 0.0002 picks one of these 54).
  const modes = (['vanilla', 'gspo', 'cispo', 'sapo', 'gpg', 'geo_mean', 'clip_cov', 'kl_cov'] as LossMode[]).flatMap((lossMode) =>
    LOSS_AGGS.flatMap((agg) =>
      (agg === 'seq-mean-token-sum-norm' ? NORM_SCALES : (['per_seq'] as const)).map((normScale) => ({
        lossMode,
        agg,
        normScale,
        ...(lossMode === 'sapo' ? { sapoTauPos: 0.6, sapoTauNeg: 2.5 } : {}),
        ...(lossMode === 'clip_cov' || lossMode === 'kl_cov' ? COV_KNOBS : {}),
      })),
    ),
  );
  it.each(modes)('random batch, all terms: %o', async (m) => {
    const be = await makeBackend();
    const x = randomBatch(11 + m.agg.length + m.lossMode.length, 6, 9, 13, 0.8);
    const params: ActorLossParams = { ...base, ...m, entropyCoef: 0.05, kl: { coef: 0.3, estimator: 'k3' } };
    const want = expected(x, params, true);
    compare(await run(be, x, params, true), want, `${m.lossMode} ${m.agg} ${m.normScale}`);
    if (m.lossMode !== 'sapo' && m.lossMode !== 'gpg' && m.lossMode !== 'kl_cov') expect(want.policy[POLICY_STATS.clipfrac]).toBeGreaterThan(0); // the batch exercises the clip (clip_cov: its picks)
  });

  it.each([
    { what: 'policy only (no TIS, entropy or KL), no dual clip', params: { ...base, clipC: null, agg: 'token-mean', entropyCoef: 0, kl: null }, withIs: false },
    { what: 'dual clip, entropy bonus only', params: { ...base, agg: 'seq-mean-token-mean', entropyCoef: 0.01, kl: null }, withIs: false },
    { what: 'KL loss k1+ (straight-through) and abs, TIS', params: { ...base, agg: 'token-mean', entropyCoef: 0, kl: { coef: 0.1, estimator: 'k1+' } }, withIs: true },
    { what: 'KL loss abs', params: { ...base, agg: 'seq-mean-token-sum', entropyCoef: 0, kl: { coef: 2, estimator: 'abs' } }, withIs: false },
  ] as { what: string; params: ActorLossParams; withIs: boolean }[])('$what', async ({ what, params, withIs }) => {
    const be = await makeBackend();
    const x = randomBatch(what.length, 16, 16, 32);
    compare(await run(be, x, params, withIs), expected(x, params, withIs), what);
  });

  it.each(['vanilla', 'sapo', 'gpg', 'geo_mean', 'clip_cov', 'kl_cov'] as LossMode[])(
    '%s: an all-masked batch gives zero statistics and a zero gradient; one action token; no NaN',
    async (lossMode) => {
      const be = await makeBackend();
      // Two valid tokens have equal covariances in exact arithmetic (±the same deviations), so a
      // top-1 would be decided by rounding: here clip_cov / kl_cov pick every candidate.
      const params: ActorLossParams = {
        ...base,
        agg: 'seq-mean-token-mean',
        entropyCoef: 0.05,
        kl: { coef: 0.3, estimator: 'k3' },
        lossMode,
        ...COV_KNOBS,
        clipCovRatio: 1,
        klCovRatio: 1,
      };
      const x = randomBatch(5, 3, 1, 7, 1, 0);
      compare(await run(be, x, params, true), expected(x, params, true), 'A = 1');
      x.mask.fill(0);
      x.old.fill(NaN);
      const got = await run(be, x, params, true);
      compare(got, expected(x, params, true), 'all masked');
      expect(Array.from(got.grad).every((g) => g === 0)).toBe(true);
      expect(Array.from(got.policy)).toEqual([0, 0, 0, 0]);
    },
  );

  it('extreme logits (±1e4) at temperature 0.05 stay finite and match', async () => {
    const be = await makeBackend();
    const x = randomBatch(9, 4, 5, 11, 0.05, 1, 2000);
    for (let i = 0; i < x.logits.length; i += 5) x.logits[i] = i % 2 ? 1e4 : -1e4;
    // The taken token holds the row's largest logit (1e4, tied with others in some rows), so its
    // log-prob is moderate (−log #ties) and the ratios to old are well conditioned in float32;
    // every other entry is ±1e4 or |z| ~ 6e4 away (exp underflows to 0).
    for (let b = 0; b < x.B; b++) for (let a = 0; a < x.A; a++) x.logits[(b * x.S + x.start + a) * x.V + x.tokens[b * x.A + a]] = 1e4;
    // recompute old from the new logits so that the ratios stay moderate
    const scored = new Float64Array(x.B * x.A * x.V);
    for (let b = 0; b < x.B; b++) for (let a = 0; a < x.A; a++) for (let v = 0; v < x.V; v++) scored[(b * x.A + a) * x.V + v] = x.logits[(b * x.S + x.start + a) * x.V + v];
    const lp = logprobsRef(scored, x.tokens, x.B, x.A, x.V, x.T).logprobs;
    for (let i = 0; i < lp.length; i++) if (x.mask[i]) x.old[i] = Math.fround(lp[i] - 0.1);
    const params: ActorLossParams = { ...base, agg: 'token-mean', entropyCoef: 0.05, kl: { coef: 0.3, estimator: 'k3' } };
    compare(await run(be, x, params, false), expected(x, params, false), 'extreme');
  });

  it('large batches and vocabularies (B > 256, V > 256: the per-op kernels on WebGPU) match too', async () => {
    const be = await makeBackend();
    for (const lossMode of ['vanilla', 'sapo', 'geo_mean'] as LossMode[]) {
      const params: ActorLossParams = { ...base, agg: 'token-mean', entropyCoef: 0.05, kl: { coef: 0.3, estimator: 'k3' }, lossMode, sapoTauPos: 0.6, sapoTauNeg: 2.5 };
      for (const [B, V] of [
        [257, 5],
        [3, 300],
      ]) {
        const x = randomBatch(B + V, B, 3, V, 0.9, 1);
        compare(await run(be, x, params, true), expected(x, params, true), `${lossMode} B ${B} V ${V}`);
      }
    }
  });

  it('refuses a KL loss without reference log-probs and action rows outside the logits', async () => {
    const be = await makeBackend();
    const t = (shape: number[]) => be.zeros(shape);
    const tok = be.zeros([2, 3], 'i32');
    const p: ActorLossParams = { ...base, agg: 'token-mean', entropyCoef: 0, kl: { coef: 1, estimator: 'k1' } };
    expect(() =>
      actorLoss(be, { logits: t([2, 5, 4]), start: 1, tokens: tok, temperature: 1, oldLogprobs: t([2, 3]), advantages: t([2, 3]), actionMask: t([2, 3]), params: p }),
    ).toThrow(/ref_logprobs/);
    expect(() =>
      actorLoss(be, {
        logits: t([2, 5, 4]),
        start: 3,
        tokens: tok,
        temperature: 1,
        oldLogprobs: t([2, 3]),
        advantages: t([2, 3]),
        actionMask: t([2, 3]),
        params: { ...p, kl: null },
      }),
    ).toThrow(/action rows \[3, 6\)/);
  });
});

// The CPU backend trains exactly as before the fused op: actorLoss = the per-op composition.
describe('actorLoss on cpu equals the per-op composition bit for bit', () => {
  it.each([
    { agg: 'token-mean', lossMode: 'vanilla', kl: { coef: 0.2, estimator: 'k3' } },
    { agg: 'seq-mean-token-mean', lossMode: 'gspo', kl: null },
    { agg: 'seq-mean-token-sum-norm', lossMode: 'cispo', kl: { coef: 0.5, estimator: 'k1+' } },
    { agg: 'seq-mean-token-sum', lossMode: 'sapo', kl: null },
    { agg: 'token-mean', lossMode: 'gpg', kl: { coef: 0.2, estimator: 'k3' } },
    { agg: 'token-mean', lossMode: 'geo_mean', kl: null },
    { agg: 'token-mean', lossMode: 'clip_cov', kl: null, ...COV_KNOBS },
    { agg: 'seq-mean-token-mean', lossMode: 'kl_cov', kl: { coef: 0.2, estimator: 'k3' }, ...COV_KNOBS },
  ] as Pick<ActorLossParams, 'agg' | 'lossMode' | 'kl'>[])('%o', async (m) => {
    const be = cpuBackend;
    const x = randomBatch(77, 5, 6, 9);
    const params: ActorLossParams = { ...base, ...m, entropyCoef: 0.03 };
    const t = (d: Float64Array) => be.tensor(d, [x.B, x.A]);
    const logits = be.tensor(x.logits, [x.B, x.S, x.V]);
    const tokens = be.tensor(x.tokens, [x.B, x.A], 'i32');
    const [old, adv, mask, isW, ref] = [x.old, x.adv, x.mask, x.isW, x.ref].map(t);
    const fused = actorLoss(be, {
      logits,
      start: x.start,
      tokens,
      temperature: x.T,
      oldLogprobs: old,
      advantages: adv,
      actionMask: mask,
      params,
      isWeights: isW,
      refLogprobs: params.kl ? ref : null,
    });
    // The composition actorStep ran before (src/rl/update.ts at the base of this change).
    const { nn } = be;
    const scored = nn.sliceSeq(logits, x.start, x.A);
    const { logprobs: logp, entropy } = logprobs(be, { logits: scored, tokens, temperature: x.T });
    const { stats: policy, gradLogprobs } = policyLoss(be, { oldLogprobs: old, logprobs: logp, advantages: adv, actionMask: mask, params, isWeights: isW });
    const ent = aggregate(be, { x: entropy, actionMask: mask, agg: params.agg, normScale: params.normScale });
    nn.scale(ent.weights, -params.entropyCoef);
    let klLoss: Tensor | null = null;
    if (params.kl) {
      const klArgs = { logprobs: logp, refLogprobs: ref, estimator: params.kl.estimator };
      const agg = aggregate(be, { x: kl(be, klArgs), actionMask: mask, agg: params.agg, normScale: params.normScale });
      klLoss = agg.value;
      const dKl = klGrad(be, klArgs);
      nn.scale(dKl, params.kl.coef);
      nn.axpy(1, nn.mul(agg.weights, dKl), gradLogprobs);
    }
    const grad = nn.sliceSeqBackward(logprobsBackward(be, { logits: scored, tokens, temperature: x.T, gradLogprobs, gradEntropy: ent.weights }), x.S, x.start);
    const bits = async (a: Tensor, b: Tensor) => expect(Array.from(await be.read(a))).toEqual(Array.from(await be.read(b)));
    await bits(fused.gradLogits, grad);
    await bits(fused.logprobs, logp);
    await bits(fused.policy, policy);
    await bits(fused.entropy, ent.value);
    if (klLoss) await bits(fused.klLoss, klLoss);
  });
});
