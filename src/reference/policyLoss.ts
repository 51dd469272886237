// float64 reference: the policy-loss family, mirroring verl verl/trainer/ppo/core_algos.py
//   'vanilla' compute_policy_loss_vanilla: PPO clipped surrogate, asymmetric clip, dual clip (docs/algorithms.md, Numerical conventions)
//   'gspo'    compute_policy_loss_gspo:    sequence-level ratio with a stop-gradient token combination
//   'cispo'   compute_policy_loss_cispo:   stop-gradient clipped IS weight × A × logπ
//   'sapo'    compute_policy_loss_sapo:    soft sigmoid gate on the token ratio instead of the clip
//   'gpg'     compute_policy_loss_gpg:     −A·logπ, no ratio, no clip
//   'geo_mean' compute_policy_loss_geo_mean: GMPO, the geometric mean of the row's token ratios
//              (each clipped in log space by the sign of its advantage) × the row's mean advantage
//   'clip_cov' compute_policy_loss_clip_cov (L1742–1840): PPO clip whose loss is zeroed on a few
//              tokens picked batch-wide by the covariance of (A − Ā)·(logp − mean logp)
//   'kl_cov'   compute_policy_loss_kl_cov (L1843–1924): −A·ratio, plus ppo_kl_coef·|logp − old| on
//              the top-k covariance tokens (covSelectRef picks both modes' tokens)
// each multiplied, when given, by per-token stop-gradient weights (verl rollout_is_weights;
// geo_mean by their per-row geometric mean, as verl does).
// Source: verl-project/verl v0.9.0 (commit 483b8a0), verl/trainer/ppo/core_algos.py.
// Matches shaders/lib_policy_term.wgsl (per token), policy_loss.wgsl and aggregate.wgsl (agg_finalize).
import { aggWeights, maskedMeanRef, type LossAgg, type NormScale, type PolicyAgg } from './aggregate.ts';

/**
 * Policy-loss family: 'vanilla' PPO clip (verl compute_policy_loss_vanilla), 'gspo' sequence-level
 * ratio (compute_policy_loss_gspo), 'cispo' stop-gradient clipped IS weight × A × logπ
 * (compute_policy_loss_cispo), 'sapo' soft gate (compute_policy_loss_sapo), 'gpg' −A·logπ
 * (compute_policy_loss_gpg), 'geo_mean' GMPO (compute_policy_loss_geo_mean). The exact math is below.
 */
export type LossMode = 'vanilla' | 'gspo' | 'cispo' | 'sapo' | 'gpg' | 'geo_mean' | 'clip_cov' | 'kl_cov';
export const LOSS_MODES: readonly LossMode[] = ['vanilla', 'gspo', 'cispo', 'sapo', 'gpg', 'geo_mean', 'clip_cov', 'kl_cov'];

/** Modes whose tokens are picked batch-wide by covSelectRef (shaders/cov_select.wgsl). */
export const COV_LOSS_MODES: readonly LossMode[] = ['clip_cov', 'kl_cov'];

/** verl's PolicyLossConfig defaults (actor_rollout_ref.actor.policy_loss.*, _generated_ppo_trainer.yaml). */
export const COV_DEFAULTS = { clipCovRatio: 0.0002, clipCovLb: 1.0, clipCovUb: 5.0, klCovRatio: 0.0002, ppoKlCoef: 0.1 } as const;

/** The covariance knobs, the seed of clip_cov's choice. */
export interface CovParams {
  clipCovRatio: number;
  clipCovLb: number;
  clipCovUb: number;
  klCovRatio: number;
  ppoKlCoef: number;
}

/** The covariance knobs from a config that may carry them (verl's defaults when it does not). */
export function covKnobs(c: object): CovParams {
  const k = c as Partial<Record<keyof CovParams, unknown>>;
  const pick = (key: keyof CovParams) => (typeof k[key] === 'number' ? (k[key] as number) : COV_DEFAULTS[key]);
  return { clipCovRatio: pick('clipCovRatio'), clipCovLb: pick('clipCovLb'), clipCovUb: pick('clipCovUb'), klCovRatio: pick('klCovRatio'), ppoKlCoef: pick('ppoKlCoef') };
}

/** verl's ActorConfig defaults for SAPO's temperatures (actor_rollout_ref.actor.tau_pos / tau_neg). */
export const SAPO_TAU_POS_DEFAULT = 1.0;
export const SAPO_TAU_NEG_DEFAULT = 1.05;

/**
 * SAPO's temperatures from a config that may carry the knobs `sapoTauPos` / `sapoTauNeg`
 * (verl's defaults when it does not), so the trainer, the inspect tab and the export read them
 * the same way.
 */
export function sapoTemperatures(c: object): { sapoTauPos: number; sapoTauNeg: number } {
  const k = c as { sapoTauPos?: unknown; sapoTauNeg?: unknown };
  return {
    sapoTauPos: typeof k.sapoTauPos === 'number' ? k.sapoTauPos : SAPO_TAU_POS_DEFAULT,
    sapoTauNeg: typeof k.sapoTauNeg === 'number' ? k.sapoTauNeg : SAPO_TAU_NEG_DEFAULT,
  };
}

export interface PolicyLossParams {
  /** ε_low > 0: ratio is clipped below at 1 − ε_low. */
  clipLow: number;
  /** ε_high > 0: ratio is clipped above at 1 + ε_high. */
  clipHigh: number;
  /** Dual-clip constant c > 1 for A < 0, or null for no dual clip. */
  clipC: number | null;
  /**
   * Ignored by 'gspo' and 'sapo', which always aggregate seq-mean-token-mean, and by 'geo_mean',
   * which takes the mean over all B rows of its per-row losses (as verl does; policyAgg).
   */
  agg: LossAgg;
  /** Default 'vanilla'. Dual clip (clipC) applies to vanilla only; 'gpg' reads no clip parameter. */
  lossMode?: LossMode;
  /** SAPO's gate temperature τ for tokens with A > 0 (verl actor.tau_pos); default 1.0. */
  sapoTauPos?: number;
  /** SAPO's gate temperature τ for tokens with A ≤ 0 (verl actor.tau_neg); default 1.05. */
  sapoTauNeg?: number;
  /** Default 'per_seq'; only read with agg = 'seq-mean-token-sum-norm'. */
  normScale?: NormScale;
  /** clip_cov: fraction of valid tokens zeroed (verl policy_loss.clip_cov_ratio, 0.0002). */
  clipCovRatio?: number;
  /** clip_cov: open covariance band (lb, ub) a token must lie in (verl clip_cov_lb / clip_cov_ub, 1 and 5). */
  clipCovLb?: number;
  clipCovUb?: number;
  /** kl_cov: fraction of valid tokens penalised (verl policy_loss.kl_cov_ratio, 0.0002). */
  klCovRatio?: number;
  /** kl_cov: coefficient of |logp − old| on the picked tokens (verl policy_loss.ppo_kl_coef, 0.1). */
  ppoKlCoef?: number;
  /**
   * clip_cov: seed (u32) of the choice among the tokens in the band. verl draws torch.randperm; the
   * playground ranks the band's tokens by covHash(index, seed) instead, so the kernels and the
   * reference pick the same tokens (a deliberate deviation; docs/algorithms.md). Default 0.
   */
  covSeed?: number;
}

/** verl clamps GSPO's log sequence ratio from above at 10 before exp. */
export const GSPO_LOG_RATIO_MAX = 10;
/** verl clamps the token log-ratio to ±20 before exp (vanilla, CISPO). */
export const LOG_RATIO_CLAMP = 20;

/** Throws before any GPU work when the clip parameters make no sense. */
export function validatePolicyLossParams(p: PolicyLossParams): void {
  if (!(Number.isFinite(p.clipLow) && p.clipLow > 0)) throw new Error(`policyLoss: clipLow must be a finite number > 0, got ${p.clipLow}`);
  if (!(Number.isFinite(p.clipHigh) && p.clipHigh > 0)) throw new Error(`policyLoss: clipHigh must be a finite number > 0, got ${p.clipHigh}`);
  if (p.clipC !== null && !(Number.isFinite(p.clipC) && p.clipC > 1)) {
    throw new Error(`policyLoss: dual-clip constant clipC must be a finite number > 1 (or null for no dual clip), got ${p.clipC}`);
  }
  const modes = LOSS_MODES;
  for (const [name, v] of [
    ['sapoTauPos', p.sapoTauPos],
    ['sapoTauNeg', p.sapoTauNeg],
    ['clipCovRatio', p.clipCovRatio],
    ['klCovRatio', p.klCovRatio],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new Error(`policyLoss: ${name} must be a finite number > 0, got ${v}`);
  }
  for (const [name, v] of [
    ['clipCovLb', p.clipCovLb],
    ['clipCovUb', p.clipCovUb],
  ] as const) {
    if (v !== undefined && !Number.isFinite(v)) throw new Error(`policyLoss: ${name} must be a finite number, got ${v}`);
  }
  if (p.ppoKlCoef !== undefined && !(Number.isFinite(p.ppoKlCoef) && p.ppoKlCoef >= 0)) throw new Error(`policyLoss: ppoKlCoef must be a finite number ≥ 0, got ${p.ppoKlCoef}`);
  if (p.covSeed !== undefined && !(Number.isInteger(p.covSeed) && p.covSeed >= 0 && p.covSeed <= 0xffffffff))
    throw new Error(`policyLoss: covSeed must be a u32, got ${p.covSeed}`);
  if (p.lossMode !== undefined && !modes.includes(p.lossMode)) throw new Error(`policyLoss: lossMode must be one of ${modes.join(', ')}, got ${String(p.lossMode)}`);
  if (p.normScale !== undefined && p.normScale !== 'per_seq' && p.normScale !== 'verl') {
    throw new Error(`policyLoss: normScale must be per_seq or verl, got ${String(p.normScale)}`);
  }
}

/** A per-token result: loss, clip flags, ppo_kl term and ∂loss/∂logp (before weights). */
export interface PolicyToken {
  loss: number;
  clipped: boolean;
  lower: boolean;
  /** The token's contribution to ppo_kl (old − logp, clamped as verl clamps it). */
  kl: number;
  grad: number;
}

/** Vanilla PPO per token (verl compute_policy_loss_vanilla). */
export function policyTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams): PolicyToken {
  const d = logp - old;
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d));
  const ratio = Math.exp(dc);
  const pg1 = -adv * ratio;
  const pg2 = -adv * Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  const clipMax = Math.max(pg1, pg2);
  const clipped = pg2 > pg1;
  let loss = clipMax;
  let lower = false;
  if (p.clipC !== null && adv < 0) {
    const pg3 = -adv * p.clipC;
    lower = pg3 < clipMax;
    loss = Math.min(clipMax, pg3);
  }
  // Only the unclipped branch depends on logp, and only inside the ±20 ratio clamp.
  const grad = clipped || lower || !(Math.abs(d) < LOG_RATIO_CLAMP) ? 0 : -adv * ratio;
  return { loss, clipped, lower, kl: -dc, grad };
}

/**
 * CISPO per token: r = exp(clamp(d, ±20)), r̂ = sg(clamp(r, 1 − ε_low, 1 + ε_high));
 * loss = −r̂·A·logp, ∂/∂logp = −r̂·A (every token keeps its gradient); clipped = r ≠ r̂.
 */
export function cispoTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams): PolicyToken {
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logp - old));
  const ratio = Math.exp(dc);
  const r = Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  return { loss: -r * adv * logp, clipped: ratio !== r, lower: false, kl: -dc, grad: -r * adv };
}

/**
 * GSPO per token given its row's length-normalised log-ratio s_b = Σ_t m·(logp − old) / max(n_b, 1):
 * log s_{b,t} = logp − sg(logp) + sg(s_b), clamped above at 10, so the value is ratio = exp(min(s_b, 10))
 * and ∂ratio/∂logp_t = ratio (0 once the clamp binds); loss = max(−A·ratio, −A·clamp(ratio, 1 ± ε)),
 * ∂loss/∂logp_t = −A·ratio on the unclipped branch, else 0. ppo_kl uses the unclamped old − logp.
 */
export function gspoTokenRef(old: number, logp: number, adv: number, seqLogRatio: number, p: PolicyLossParams): PolicyToken {
  const ratio = Math.exp(Math.min(seqLogRatio, GSPO_LOG_RATIO_MAX));
  const pg1 = -adv * ratio;
  const pg2 = -adv * Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  const clipped = pg2 > pg1;
  const grad = clipped || seqLogRatio > GSPO_LOG_RATIO_MAX ? 0 : -adv * ratio;
  return { loss: Math.max(pg1, pg2), clipped, lower: false, kl: old - logp, grad };
}

/** s_b per row (B): masked mean of logp − old over the row, 0 for a row with no token. */
export function gspoSeqLogRatios(old: ArrayLike<number>, logp: ArrayLike<number>, mask: ArrayLike<number>, B: number, A: number): Float64Array {
  const s = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let sum = 0;
    let n = 0;
    for (let a = 0; a < A; a++) {
      const i = b * A + a;
      if (mask[i] === 0) continue;
      sum += mask[i] * (logp[i] - old[i]);
      n += mask[i];
    }
    s[b] = sum / Math.max(n, 1);
  }
  return s;
}

/**
 * SAPO per token: r = exp(clamp(d, ±20)), τ = τ_pos if A > 0 else τ_neg, σ = sigmoid(τ·(r − 1)),
 * gate = σ·4/τ; loss = −gate·A; ∂loss/∂logp = −A·4·σ·(1 − σ)·r (0 outside the ±20 clamp).
 * No clip: clipped = lower = false (verl reports pg_clipfrac = 0); kl = −dc.
 */
export function sapoTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams): PolicyToken {
  const d = logp - old;
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d));
  const ratio = Math.exp(dc);
  const tau = adv > 0 ? (p.sapoTauPos ?? SAPO_TAU_POS_DEFAULT) : (p.sapoTauNeg ?? SAPO_TAU_NEG_DEFAULT);
  const x = tau * (ratio - 1);
  const sig = 1 / (1 + Math.exp(-x));
  const sigNeg = 1 / (1 + Math.exp(x)); // 1 − σ without cancellation
  const gate = sig * (4 / tau);
  const grad = Math.abs(d) < LOG_RATIO_CLAMP ? -adv * 4 * sig * sigNeg * ratio : 0;
  return { loss: -gate * adv, clipped: false, lower: false, kl: -dc, grad };
}

/**
 * GPG per token: loss = −logp·A, ∂loss/∂logp = −A. No ratio, no clip (verl returns no metric;
 * clip fractions are 0 and kl is vanilla's −clamp(d, ±20), the playground's approx-KL readout).
 */
export function gpgTokenRef(old: number, logp: number, adv: number): PolicyToken {
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logp - old));
  return { loss: -logp * adv, clipped: false, lower: false, kl: -dc, grad: -adv };
}

/**
 * GMPO's token log-ratio, clipped in log space by the sign of its advantage (verl geo_mean):
 * d = logp − old (no ±20 clamp), c = clamp(d, −ε_low, ε_high), value = sgn(A)·min(sgn(A)·d, sgn(A)·c)
 * (0 when A = 0). live = the value moves with logp (A > 0 and d ≤ ε_high, or A < 0 and d ≥ −ε_low;
 * at a tie torch splits the min's gradient in halves that add back to 1). clipped = d ≠ c.
 */
export function geoTokenLogRatio(old: number, logp: number, adv: number, p: PolicyLossParams): { value: number; live: boolean; clipped: boolean } {
  const d = logp - old;
  const c = Math.min(p.clipHigh, Math.max(-p.clipLow, d));
  const sgn = Math.sign(adv);
  const value = sgn * Math.min(sgn * d, sgn * c);
  const live = (adv > 0 && d <= p.clipHigh) || (adv < 0 && d >= -p.clipLow);
  return { value: value === 0 ? 0 : value, live, clipped: d !== c };
}

/** GMPO's per-row terms: log of the geometric-mean ratio, mean advantage, and IS weight (B each). */
export interface GeoRows {
  logRatio: Float64Array;
  adv: Float64Array;
  isW: Float64Array;
}

/**
 * Per row b with n_b = Σ m: logRatio = Σ m·geoTokenLogRatio / (n_b + 1e-8), adv = Σ m·A / (n_b + 1e-8),
 * isW = exp(Σ m·log(w + 1e-10) / (n_b + 1e-8)) (1 without weights): verl's expressions, 1e-8 included.
 */
export function geoRowsRef(
  old: ArrayLike<number>,
  logp: ArrayLike<number>,
  adv: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  p: PolicyLossParams,
  isWeights: ArrayLike<number> | null,
): GeoRows {
  const out = { logRatio: new Float64Array(B), adv: new Float64Array(B), isW: new Float64Array(B) };
  for (let b = 0; b < B; b++) {
    let n = 0,
      lr = 0,
      a = 0,
      lw = 0;
    for (let t = 0; t < A; t++) {
      const i = b * A + t;
      const m = mask[i];
      if (m === 0) continue;
      n += m;
      lr += m * geoTokenLogRatio(old[i], logp[i], adv[i], p).value;
      a += m * adv[i];
      if (isWeights) lw += m * Math.log(isWeights[i] + 1e-10);
    }
    out.logRatio[b] = lr / (n + 1e-8);
    out.adv[b] = a / (n + 1e-8);
    out.isW[b] = isWeights ? Math.exp(lw / (n + 1e-8)) : 1;
  }
  return out;
}

/**
 * GMPO per token of row b: the row's loss L_b = −Ā_b·exp(logRatio_b)·isW_b on every token (the
 * all-rows seq-mean-token-mean weight m/(n_b·B) turns Σ into verl's (1/B)·Σ_b L_b), its gradient
 * ∂L_b/∂logp_t·n_b = L_b when the token's clipped log-ratio is live, else 0 (the IS weight is inside).
 * clipped = d outside [−ε_low, ε_high] with A > 0, lower = the same with A < 0 (verl's
 * pg_clipfrac / pg_clipfrac_lower); kl = −d (no clamp).
 */
export function geoMeanTokenRef(old: number, logp: number, adv: number, row: { logRatio: number; adv: number; isW: number }, p: PolicyLossParams): PolicyToken {
  const t = geoTokenLogRatio(old, logp, adv, p);
  const loss = -row.adv * Math.exp(row.logRatio) * row.isW;
  return { loss, clipped: t.clipped && adv > 0, lower: t.clipped && adv < 0, kl: old - logp, grad: t.live ? loss : 0 };
}

/** Chris Wellons' lowbias32 integer hash (u32 → u32); shaders/cov_select.wgsl computes the same bits. */
export function lowbias32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d) >>> 0;
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** clip_cov's rank of token i (flat index in (B, A)) under a seed: the larger, the earlier picked. */
export function covHash(i: number, seed: number): number {
  return lowbias32((i ^ lowbias32(seed >>> 0)) >>> 0);
}

/**
 * clip_cov's seed for one minibatch step (run seed, iteration, epoch, minibatch index), so a run
 * replays the same choice and no two steps share one (verl draws torch.randperm instead).
 */
export function covStepSeed(seed: number, iter: number, epoch: number, minibatch: number): number {
  return lowbias32(seed ^ lowbias32(iter ^ lowbias32(((epoch & 0xffff) << 16) ^ (minibatch & 0xffff))));
}

/**
 * The k candidates with the largest key, ties to the lower index (every candidate when there are
 * at most k): the order the kernel's bisection reproduces.
 */
function topK(cands: number[], key: (i: number) => number, k: number): number[] {
  if (cands.length <= k) return cands;
  return [...cands].sort((x, y) => key(y) - key(x) || x - y).slice(0, k);
}

/**
 * The tokens clip_cov or kl_cov act on, batch-wide over the (B, A) the loss sees (verl's micro-batch):
 *   clip_cov (verl L1796–1819): n = Σ m, Ā = Σ m·A/(n + 1e-8), L̄ = Σ m·logp/(n + 1e-8);
 *     cov_t = (A_t − Ā)·(logp_t − L̄); a token is in the band when m > 0, PPO's clip does not
 *     already bind (pg2 > pg1 false) and clip_cov_lb < cov_t < clip_cov_ub; k = max(⌊ratio·n⌋, 1)
 *     of them are picked, by covHash(t, covSeed) (largest first) where verl draws torch.randperm.
 *   kl_cov (verl L1885–1897): over the valid tokens (m > 0, count n_v): Ā, L̄ plain means,
 *     cov_t as above; the k = max(1, ⌊n_v·ratio⌋) largest cov_t (torch.topk; ties to the lower
 *     index here); nothing when n_v = 0.
 * Returns 1 at a picked token, else 0; all 0 for the other modes.
 */
export function covSelectRef(
  oldLogprobs: ArrayLike<number>, // (B, A)
  logprobs: ArrayLike<number>, // (B, A)
  advantages: ArrayLike<number>, // (B, A)
  mask: ArrayLike<number>, // (B, A)
  B: number,
  A: number,
  params: PolicyLossParams,
): Uint8Array {
  const mode = params.lossMode ?? 'vanilla';
  const n = B * A;
  const sel = new Uint8Array(n);
  if (mode !== 'clip_cov' && mode !== 'kl_cov') return sel;
  const valid: number[] = [];
  let msum = 0,
    aSum = 0,
    lSum = 0,
    aValid = 0,
    lValid = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue; // masked positions may hold anything
    msum += mask[i];
    aSum += mask[i] * advantages[i];
    lSum += mask[i] * logprobs[i];
    if (mask[i] > 0) {
      valid.push(i);
      aValid += advantages[i];
      lValid += logprobs[i];
    }
  }
  let picked: number[];
  if (mode === 'clip_cov') {
    const meanA = aSum / (msum + 1e-8);
    const meanL = lSum / (msum + 1e-8);
    const lb = params.clipCovLb ?? COV_DEFAULTS.clipCovLb;
    const ub = params.clipCovUb ?? COV_DEFAULTS.clipCovUb;
    const band = valid.filter((i) => {
      const ratio = Math.exp(Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, logprobs[i] - oldLogprobs[i])));
      const pg1 = -advantages[i] * ratio;
      const pg2 = -advantages[i] * Math.min(1 + params.clipHigh, Math.max(1 - params.clipLow, ratio));
      const cov = (advantages[i] - meanA) * (logprobs[i] - meanL);
      return !(pg2 > pg1) && cov > lb && cov < ub;
    });
    const k = Math.max(Math.floor((params.clipCovRatio ?? COV_DEFAULTS.clipCovRatio) * msum), 1);
    const seed = params.covSeed ?? 0;
    picked = topK(band, (i) => covHash(i, seed), k);
  } else {
    if (valid.length === 0) return sel;
    const meanA = aValid / valid.length;
    const meanL = lValid / valid.length;
    const k = Math.max(1, Math.floor(valid.length * (params.klCovRatio ?? COV_DEFAULTS.klCovRatio)));
    picked = topK(valid, (i) => (advantages[i] - meanA) * (logprobs[i] - meanL), k);
  }
  for (const i of picked) sel[i] = 1;
  return sel;
}

/**
 * clip_cov per token: vanilla's clip (no dual clip; the ±20 clamp kept, where verl's clip_cov has
 * none, so f32 cannot overflow) with the loss and its gradient zeroed on a picked token (verl's
 * corr = 0). clipped = picked (verl's pg_clipfrac is the picked fraction); kl = −dc.
 */
export function clipCovTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams, picked: boolean): PolicyToken {
  const t = policyTokenRef(old, logp, adv, { ...p, clipC: null });
  return picked ? { loss: 0, clipped: true, lower: false, kl: t.kl, grad: 0 } : { ...t, clipped: false };
}

/**
 * kl_cov per token: ratio = exp(dc), L = −A·ratio (no clip) + ppo_kl_coef·|dc| on a picked token;
 * g = −A·ratio + ppo_kl_coef·sgn(d) (torch's |x|′ = 0 at 0), 0 outside the ±20 clamp. No clip
 * flags (verl reports none); kl = |dc| (verl's ppo_kl for kl_cov is the mean |logp − old|).
 */
export function klCovTokenRef(old: number, logp: number, adv: number, p: PolicyLossParams, picked: boolean): PolicyToken {
  const d = logp - old;
  const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d));
  const ratio = Math.exp(dc);
  const coef = picked ? (p.ppoKlCoef ?? COV_DEFAULTS.ppoKlCoef) : 0;
  const grad = Math.abs(d) < LOG_RATIO_CLAMP ? -adv * ratio + coef * Math.sign(d) : 0;
  return { loss: -adv * ratio + coef * Math.abs(dc), clipped: false, lower: false, kl: Math.abs(dc), grad };
}

/** The aggregation a loss mode uses: params.agg, except where verl forces one. */
export function policyAgg(params: PolicyLossParams): PolicyAgg {
  const mode = params.lossMode ?? 'vanilla';
  if (mode === 'gspo' || mode === 'sapo') return 'seq-mean-token-mean';
  if (mode === 'geo_mean') return 'seq-mean-token-mean-all-rows';
  return params.agg;
}

/**
 * Every unmasked token's policy term under params.lossMode (null under the mask) and whether the
 * caller multiplies it by the token's IS weight (geo_mean folds the row's weight in instead).
 */
export function policyTokensRef(
  oldLogprobs: ArrayLike<number>,
  logprobs: ArrayLike<number>,
  advantages: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  params: PolicyLossParams,
  isWeights: ArrayLike<number> | null = null,
): { tokens: (PolicyToken | null)[]; tokenIs: boolean; covSel: Uint8Array } {
  const mode = params.lossMode ?? 'vanilla';
  const covSel = covSelectRef(oldLogprobs, logprobs, advantages, mask, B, A, params);
  const seq = mode === 'gspo' ? gspoSeqLogRatios(oldLogprobs, logprobs, mask, B, A) : null;
  const geo = mode === 'geo_mean' ? geoRowsRef(oldLogprobs, logprobs, advantages, mask, B, A, params, isWeights) : null;
  const tokens: (PolicyToken | null)[] = [];
  for (let i = 0; i < B * A; i++) {
    if (mask[i] === 0) {
      tokens.push(null); // masked positions may hold anything; they contribute nothing
      continue;
    }
    const o = oldLogprobs[i];
    const l = logprobs[i];
    const a = advantages[i];
    const b = Math.floor(i / A);
    switch (mode) {
      case 'gspo':
        tokens.push(gspoTokenRef(o, l, a, seq![b], params));
        break;
      case 'cispo':
        tokens.push(cispoTokenRef(o, l, a, params));
        break;
      case 'sapo':
        tokens.push(sapoTokenRef(o, l, a, params));
        break;
      case 'gpg':
        tokens.push(gpgTokenRef(o, l, a));
        break;
      case 'geo_mean':
        tokens.push(geoMeanTokenRef(o, l, a, { logRatio: geo!.logRatio[b], adv: geo!.adv[b], isW: geo!.isW[b] }, params));
        break;
      case 'clip_cov':
        tokens.push(clipCovTokenRef(o, l, a, params, covSel[i] === 1));
        break;
      case 'kl_cov':
        tokens.push(klCovTokenRef(o, l, a, params, covSel[i] === 1));
        break;
      default:
        tokens.push(policyTokenRef(o, l, a, params));
    }
  }
  return { tokens, tokenIs: mode !== 'geo_mean', covSel };
}

export function policyLossRef(
  oldLogprobs: ArrayLike<number>, // (B, A)
  logprobs: ArrayLike<number>, // (B, A)
  advantages: ArrayLike<number>, // (B, A)
  mask: ArrayLike<number>, // (B, A)
  B: number,
  A: number,
  params: PolicyLossParams,
  isWeights: ArrayLike<number> | null = null, // (B, A) or none
): { stats: Float64Array; gradLogprobs: Float64Array } {
  validatePolicyLossParams(params);
  const n = B * A;
  // GSPO and SAPO aggregate seq-mean-token-mean, GMPO over all rows, whatever params.agg says (as verl does).
  const w = aggWeights(mask, B, A, policyAgg(params), params.normScale ?? 'per_seq');
  const { tokens, tokenIs } = policyTokensRef(oldLogprobs, logprobs, advantages, mask, B, A, params, isWeights);
  const clippedF = new Float64Array(n);
  const lowerF = new Float64Array(n);
  const kl = new Float64Array(n);
  const gradLogprobs = new Float64Array(n);
  let loss = 0;
  for (let i = 0; i < n; i++) {
    const t = tokens[i];
    if (t === null) continue;
    const is = isWeights && tokenIs ? isWeights[i] : 1;
    loss += w[i] * is * t.loss;
    clippedF[i] = t.clipped ? 1 : 0;
    lowerF[i] = t.lower ? 1 : 0;
    kl[i] = t.kl;
    gradLogprobs[i] = w[i] * is * t.grad;
  }
  const stats = Float64Array.of(loss, maskedMeanRef(clippedF, mask), maskedMeanRef(lowerF, mask), maskedMeanRef(kl, mask));
  return { stats, gradLogprobs };
}

/**
 * Token-level truncated importance sampling (verl rollout correction, token TIS):
 * w = mask · min(exp(clamp(old − rollout, ±20)), cap). (B,A) each → (B,A).
 */
export function tisWeightsRef(old: ArrayLike<number>, rollout: ArrayLike<number>, mask: ArrayLike<number>, cap: number): Float64Array {
  validateTisCap(cap);
  const out = new Float64Array(old.length);
  for (let i = 0; i < out.length; i++) {
    if (mask[i] === 0) continue;
    const d = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, old[i] - rollout[i]));
    out[i] = mask[i] * Math.min(Math.exp(d), cap);
  }
  return out;
}

export function validateTisCap(cap: number): void {
  if (!(Number.isFinite(cap) && cap > 0)) throw new Error(`tisWeights: cap must be a finite number > 0, got ${cap}`);
}
