// The clipping view's SAPO and GMPO curves (src/ui/teach/clipping.ts, drawn in the ratio r) against
// the float64 policy-loss reference (src/reference/policyLoss.ts, written in log-probs): at
// logp − old = log r each curve must equal the reference's −loss and −∂loss/∂logp, and GMPO's token
// term its clipped log-ratio. A second formula is not re-derived here: the reference is the oracle.
import { describe, expect, it } from 'vitest';
import { geoMeanTokenRef, geoTokenLogRatio, sapoTokenRef, type PolicyLossParams } from '../../src/reference/policyLoss.ts';
import { gmpoIsClipped, gmpoLogRatio, gmpoObjective, ppoGradWeight, sapoGradWeight, sapoObjective, type ClipParams } from '../../src/ui/teach/clipping.ts';

// A seeded LCG so a failure names its inputs and reruns the same.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const clips: ClipParams[] = [
  { clipLow: 0.2, clipHigh: 0.2, dualClip: null },
  { clipLow: 0.2, clipHigh: 0.28, dualClip: 3 },
  { clipLow: 0.4, clipHigh: 0.4, dualClip: null },
];
const temps = [
  { tauPos: 1, tauNeg: 1.05 },
  { tauPos: 0.5, tauNeg: 2 },
  { tauPos: 10, tauNeg: 0.1 },
];
// ratios over the view's x range (0, 5], the clip and gate edges, and extremes
const edges = [1e-6, 0.01, 0.5, 0.8, 0.8187307530779818, 1, 1.2, 1.2214027581601699, 1.28, 3, 5, 50];
const advs = [1, -1, 0.37, -2.5, 0];

function params(p: ClipParams, t: { tauPos: number; tauNeg: number }): PolicyLossParams {
  return { clipLow: p.clipLow, clipHigh: p.clipHigh, clipC: p.dualClip, agg: 'token-mean', lossMode: 'sapo', sapoTauPos: t.tauPos, sapoTauNeg: t.tauNeg };
}

function cases(): { r: number; a: number; p: ClipParams; t: { tauPos: number; tauNeg: number } }[] {
  const out = [];
  const u = rng(25);
  for (const p of clips)
    for (const t of temps) {
      for (const r of edges) for (const a of advs) out.push({ r, a, p, t });
      for (let k = 0; k < 40; k++) out.push({ r: Math.exp(6 * u() - 3), a: 6 * u() - 3, p, t });
    }
  return out;
}

const close = (got: number, want: number, tol: number) => Math.abs(got - want) <= tol * Math.max(1, Math.abs(want));

describe('clipping view: SAPO curves equal the reference sapoTokenRef', () => {
  it('objective = −loss and gradient weight = −∂loss/∂logp at logp − old = log r (rel. 1e-12)', () => {
    const bad: string[] = [];
    for (const { r, a, p, t } of cases()) {
      const ref = sapoTokenRef(0, Math.log(r), a, params(p, t));
      const obj = sapoObjective(r, a, t);
      const grad = sapoGradWeight(r, a, t);
      if (!close(obj, -ref.loss, 1e-12) || !close(grad, -ref.grad, 1e-12)) bad.push(`r=${r} A=${a} τ=${t.tauPos}/${t.tauNeg}: ${obj}/${grad} vs ${-ref.loss}/${-ref.grad}`);
    }
    expect(bad).toEqual([]);
  });

  it('at r = 1 pushes as PPO does; where PPO clips to 0 SAPO keeps a smaller, non-zero weight', () => {
    const p = clips[0];
    const t = temps[0];
    expect(sapoGradWeight(1, 1, t)).toBeCloseTo(ppoGradWeight(1, 1, p), 12);
    expect(sapoGradWeight(1, -1, t)).toBeCloseTo(ppoGradWeight(1, -1, p), 12);
    for (const r of [1.3, 1.6, 2, 3]) {
      expect(ppoGradWeight(r, 1, p)).toBe(0);
      const w = sapoGradWeight(r, 1, t);
      expect(w).toBeGreaterThan(0);
      expect(w).toBeLessThan(r);
    }
    // its factor on PPO's r·A, 4σ(1 − σ), falls smoothly from 1 as r leaves 1 (a fade, not a cliff);
    // at τ = 1 the weight itself still rises to its peak at r ≈ 2.06 before it decays towards 0
    const factor = (r: number) => sapoGradWeight(r, 1, t) / r;
    const rs = [1, 1.3, 1.6, 2, 3, 5];
    for (let i = 1; i < rs.length; i++) expect(factor(rs[i])).toBeLessThan(factor(rs[i - 1]));
    expect(sapoGradWeight(2, 1, t)).toBeGreaterThan(sapoGradWeight(1.6, 1, t));
    expect(sapoGradWeight(2.06, 1, t)).toBeGreaterThan(sapoGradWeight(2, 1, t));
    expect(sapoGradWeight(2.06, 1, t)).toBeGreaterThan(sapoGradWeight(2.12, 1, t));
    expect(sapoGradWeight(10, 1, t)).toBeLessThan(0.01);
  });
});

describe('clipping view: GMPO curves equal the reference geoTokenLogRatio / geoMeanTokenRef', () => {
  it('ℓ(r) is the clipped log-ratio and A·exp(ℓ) the loss of a one-token row (rel. 1e-12)', () => {
    const bad: string[] = [];
    for (const { r, a, p, t } of cases()) {
      const pp = { ...params(p, t), lossMode: 'geo_mean' as const };
      const tok = geoTokenLogRatio(0, Math.log(r), a, pp);
      const row = { logRatio: tok.value, adv: a, isW: 1 };
      const ref = geoMeanTokenRef(0, Math.log(r), a, row, pp);
      const l = gmpoLogRatio(r, a, p);
      const obj = gmpoObjective(r, a, p);
      // flat ⇔ the reference's ℓ does not move with logp (its `live`; A = 0 has no term to move).
      // Not the reference's clipped/lower flags: verl's pg_clipfrac also counts a token clamped on
      // the side its min() discards (A < 0 with log r > ε_high), whose ℓ still carries gradient.
      const flat = gmpoIsClipped(r, a, p);
      const refFlat = a !== 0 && !tok.live;
      if (!close(l, tok.value, 1e-12) || !close(obj, -ref.loss, 1e-12) || flat !== refFlat)
        bad.push(`r=${r} A=${a} ε=${p.clipLow}/${p.clipHigh}: ℓ=${l} vs ${tok.value}, J=${obj} vs ${-ref.loss}, flat=${flat} vs ${refFlat}`);
    }
    expect(bad).toEqual([]);
  });

  it('clips in log space: the bounds are e^(−ε_low) and e^(ε_high), not 1 ∓ ε', () => {
    const p = clips[0];
    expect(gmpoObjective(1.2, 1, p)).toBeCloseTo(1.2, 12); // inside e^0.2 ≈ 1.2214, where PPO already clips
    expect(gmpoObjective(3, 1, p)).toBeCloseTo(Math.exp(0.2), 12);
    expect(gmpoObjective(0.1, -1, p)).toBeCloseTo(-Math.exp(-0.2), 12);
    expect(gmpoIsClipped(1.21, 1, p)).toBe(false);
    expect(gmpoIsClipped(1.23, 1, p)).toBe(true);
  });
});
