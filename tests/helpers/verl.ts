// Test oracle: float64 transliterations of verl's own functions (verl/trainer/ppo/core_algos.py),
// written op by op in the order the PyTorch code applies them, independently of src/reference/.
// Stop-gradient (`.detach()`) operands are explicit arguments (`…Sg`), so a finite difference over
// the live operand with the `Sg` ones held fixed is exactly what autograd gives verl.
// Sources read (volcengine/verl and forks carrying the newer functions): agg_loss, kl_penalty /
// kl_penalty_forward, compute_policy_loss_vanilla / _gspo / _cispo (rollout_is_weights multiplied
// into pg_losses before agg_loss), rollout correction token TIS (exp of the ±20-clamped log-ratio,
// times the response mask, clamped at the threshold), compute_grpo_outcome_advantage,
// compute_rloo_outcome_advantage, compute_reinforce_plus_plus_outcome_advantage,
// compute_reinforce_plus_plus_baseline_outcome_advantage, verl_F.masked_mean / masked_whiten;
// from verl-project/verl v0.9.0 core_algos.py: compute_opo_outcome_advantage (640–690),
// compute_grpo_passk_outcome_advantage (472–536), compute_remax_outcome_advantage (735–769).

type Arr = ArrayLike<number>;
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** verl_F.masked_mean: Σ m·x / (Σ m + 1e-8). */
export function maskedMean(x: Arr, m: Arr): number {
  let s = 0,
    n = 0;
  for (let i = 0; i < x.length; i++) {
    s += m[i] === 0 ? 0 : x[i] * m[i];
    n += m[i];
  }
  return s / (n + 1e-8);
}

/** verl_F.masked_whiten (shift_mean): (x − mean)·rsqrt(unbiased var + 1e-8). */
export function maskedWhiten(x: Arr, m: Arr): Float64Array {
  const mean = maskedMean(x, m);
  let n = 0,
    ss = 0;
  for (let i = 0; i < x.length; i++)
    if (m[i] !== 0) {
      n += m[i];
      ss += m[i] * (x[i] - mean) ** 2;
    }
  const varUnbiased = (ss / n) * (n / (n - 1));
  return Float64Array.from(x, (v) => (v - mean) / Math.sqrt(varUnbiased + 1e-8));
}

/**
 * agg_loss of volcengine/verl core_algos.py (the version without global_batch_info):
 * token-mean = masked_mean; seq-mean-token-sum = mean over all B rows of the row sums;
 * seq-mean-token-mean = mean over B rows of row sum / row count (NaN for an empty row, as in torch);
 * seq-mean-token-sum-norm = Σ row sums / A.
 */
export function aggLoss(loss: Arr, m: Arr, B: number, A: number, mode: string): number {
  const rowSum = (b: number) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += m[b * A + a] === 0 ? 0 : loss[b * A + a] * m[b * A + a];
    return s;
  };
  const rowCount = (b: number) => {
    let n = 0;
    for (let a = 0; a < A; a++) n += m[b * A + a];
    return n;
  };
  let total = 0;
  switch (mode) {
    case 'token-mean':
      return maskedMean(loss, m);
    case 'seq-mean-token-sum':
      for (let b = 0; b < B; b++) total += rowSum(b);
      return total / B;
    case 'seq-mean-token-mean':
      for (let b = 0; b < B; b++) total += rowSum(b) / rowCount(b);
      return total / B;
    case 'seq-mean-token-sum-norm':
      for (let b = 0; b < B; b++) total += rowSum(b);
      return total / A;
  }
  throw new Error(`agg_loss: unknown mode ${mode}`);
}

/** kl_penalty_forward per token. */
export function klForward(logp: number, ref: number, name: string): number {
  const base = name.endsWith('+') ? name.slice(0, -1) : name;
  if (base === 'k1' || base === 'kl') return logp - ref;
  if (base === 'abs') return Math.abs(logp - ref);
  if (base === 'k2' || base === 'mse') return 0.5 * (logp - ref) ** 2;
  if (base === 'k3' || base === 'low_var_kl') {
    const kl = clamp(ref - logp, -20, 20);
    return clamp(Math.exp(kl) - kl - 1, -10, 10);
  }
  throw new Error(`kl_penalty: unknown ${name}`);
}

/**
 * kl_penalty with its straight-through "+" form: ½(logp − ref)² − sg(½(logp − ref)²) + sg(forward);
 * logpSg is the detached copy of logp. Without "+" (or for k2) the plain forward value.
 */
export function klPenalty(logp: number, logpSg: number, ref: number, name: string): number {
  if (!name.endsWith('+') || name === 'k2') return klForward(logp, ref, name);
  const back = 0.5 * (logp - ref) ** 2;
  const backSg = 0.5 * (logpSg - ref) ** 2;
  return back - backSg + klForward(logpSg, ref, name);
}

export interface VerlPolicyConfig {
  clipRatioLow: number;
  clipRatioHigh: number;
  /** vanilla's clip_ratio_c (verl default 3.0). */
  clipRatioC: number;
  lossAggMode: string;
}

/** compute_policy_loss_vanilla (+ rollout_is_weights). */
export function policyLossVanilla(old: Arr, logp: Arr, adv: Arr, m: Arr, B: number, A: number, cfg: VerlPolicyConfig, isW: Arr | null = null) {
  const n = B * A;
  const pg = new Float64Array(n),
    gt = new Float64Array(n),
    lower = new Float64Array(n),
    negKl = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const nak = clamp(logp[i] - old[i], -20, 20);
    negKl[i] = -nak;
    const ratio = Math.exp(nak);
    const pg1 = -adv[i] * ratio;
    const pg2 = -adv[i] * clamp(ratio, 1 - cfg.clipRatioLow, 1 + cfg.clipRatioHigh);
    const cp1 = Math.max(pg1, pg2);
    gt[i] = pg2 > pg1 ? 1 : 0;
    const pg3 = -adv[i] * cfg.clipRatioC;
    const cp2 = Math.min(pg3, cp1);
    lower[i] = cp1 > pg3 && adv[i] < 0 ? 1 : 0;
    pg[i] = (adv[i] < 0 ? cp2 : cp1) * (isW ? isW[i] : 1);
  }
  return { loss: aggLoss(pg, m, B, A, cfg.lossAggMode), clipfrac: maskedMean(gt, m), ppoKl: maskedMean(negKl, m), clipfracLower: maskedMean(lower, m) };
}

/** compute_policy_loss_gspo (+ rollout_is_weights); logpSg is log_prob.detach(). Aggregation forced to seq-mean-token-mean. */
export function policyLossGspo(old: Arr, logp: Arr, logpSg: Arr, adv: Arr, m: Arr, B: number, A: number, cfg: VerlPolicyConfig, isW: Arr | null = null) {
  const n = B * A;
  const seqNak = new Float64Array(B); // negative_approx_kl_seq, from the detached log-probs
  for (let b = 0; b < B; b++) {
    let s = 0,
      len = 0;
    for (let a = 0; a < A; a++) {
      const i = b * A + a;
      s += m[i] === 0 ? 0 : (logpSg[i] - old[i]) * m[i];
      len += m[i];
    }
    seqNak[b] = s / Math.max(len, 1);
  }
  const pg = new Float64Array(n),
    gt = new Float64Array(n),
    negKl = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    negKl[i] = -(logp[i] - old[i]);
    const logRatio = Math.min(logp[i] - logpSg[i] + seqNak[Math.floor(i / A)], 10);
    const ratio = Math.exp(logRatio);
    const pg1 = -adv[i] * ratio;
    const pg2 = -adv[i] * clamp(ratio, 1 - cfg.clipRatioLow, 1 + cfg.clipRatioHigh);
    gt[i] = pg2 > pg1 ? 1 : 0;
    pg[i] = Math.max(pg1, pg2) * (isW ? isW[i] : 1);
  }
  return { loss: aggLoss(pg, m, B, A, 'seq-mean-token-mean'), clipfrac: maskedMean(gt, m), ppoKl: maskedMean(negKl, m), clipfracLower: 0 };
}

/** compute_policy_loss_cispo (+ rollout_is_weights); logpSg is log_prob.detach(). */
export function policyLossCispo(old: Arr, logp: Arr, logpSg: Arr, adv: Arr, m: Arr, B: number, A: number, cfg: VerlPolicyConfig, isW: Arr | null = null) {
  const n = B * A;
  const pg = new Float64Array(n),
    ne = new Float64Array(n),
    negKl = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const nak = clamp(logp[i] - old[i], -20, 20);
    negKl[i] = -nak;
    const ratio = Math.exp(nak);
    const clipped = clamp(ratio, 1 - cfg.clipRatioLow, 1 + cfg.clipRatioHigh);
    ne[i] = ratio !== clipped ? 1 : 0;
    const clippedSg = clamp(Math.exp(clamp(logpSg[i] - old[i], -20, 20)), 1 - cfg.clipRatioLow, 1 + cfg.clipRatioHigh);
    pg[i] = -clippedSg * adv[i] * logp[i] * (isW ? isW[i] : 1);
  }
  return { loss: aggLoss(pg, m, B, A, cfg.lossAggMode), clipfrac: maskedMean(ne, m), ppoKl: maskedMean(negKl, m), clipfracLower: 0 };
}

// verl-project/verl v0.9.0 (commit 483b8a0), verl/trainer/ppo/core_algos.py: the three below.

/** compute_policy_loss_sapo (core_algos.py L1621–1703, + rollout_is_weights); aggregation forced to seq-mean-token-mean. */
export function policyLossSapo(old: Arr, logp: Arr, adv: Arr, m: Arr, B: number, A: number, tauPos: number, tauNeg: number, isW: Arr | null = null) {
  const n = B * A;
  const gate = (x: number, tau: number) => (1 / (1 + Math.exp(-(tau * (x - 1.0))))) * (4.0 / tau); // torch.sigmoid(tau * (x - 1.0)) * (4.0 / tau)
  const pg = new Float64Array(n),
    negKl = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const nak = clamp(logp[i] - old[i], -20, 20);
    negKl[i] = -nak;
    const ratio = Math.exp(nak);
    const tau = adv[i] > 0 ? tauPos : tauNeg; // torch.where(advantages > 0, tau_pos, tau_neg)
    pg[i] = -gate(ratio, tau) * adv[i] * (isW ? isW[i] : 1);
  }
  return { loss: aggLoss(pg, m, B, A, 'seq-mean-token-mean'), clipfrac: 0, ppoKl: maskedMean(negKl, m), clipfracLower: 0 };
}

/** compute_policy_loss_gpg (core_algos.py L1706–1739, + rollout_is_weights): −log_prob·A, agg_loss(loss_agg_mode); verl returns no metrics. */
export function policyLossGpg(logp: Arr, adv: Arr, m: Arr, B: number, A: number, lossAggMode: string, isW: Arr | null = null) {
  const pg = Float64Array.from(logp, (l, i) => -l * adv[i] * (isW ? isW[i] : 1));
  return { loss: aggLoss(pg, m, B, A, lossAggMode) };
}

/**
 * compute_policy_loss_geo_mean (core_algos.py L1927–2010, + rollout_is_weights): GMPO. loss_agg_mode
 * unused; torch.mean over all B rows. `(x * response_mask).sum(dim=-1)` skips masked positions here
 * (as maskedMean does) so garbage under the mask cannot poison the row.
 */
export function policyLossGeoMean(old: Arr, logp: Arr, adv: Arr, m: Arr, B: number, A: number, cfg: VerlPolicyConfig, isW: Arr | null = null) {
  const n = B * A;
  const nak = Float64Array.from(logp, (l, i) => l - old[i]); // no clamp (commented out in verl)
  const negKl = Float64Array.from(nak, (x) => -x);
  const nakClamp = Float64Array.from(nak, (x) => clamp(x, -cfg.clipRatioLow, cfg.clipRatioHigh));
  const nakMin = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const sgn = Math.sign(adv[i]);
    nakMin[i] = sgn * Math.min(sgn * nak[i], sgn * nakClamp[i]);
  }
  let total = 0;
  for (let b = 0; b < B; b++) {
    let msum = 0,
      lr = 0,
      a = 0,
      lw = 0;
    for (let t = 0; t < A; t++) {
      const i = b * A + t;
      msum += m[i];
      if (m[i] === 0) continue;
      lr += nakMin[i] * m[i];
      a += adv[i] * m[i];
      if (isW) lw += Math.log(isW[i] + 1e-10) * m[i];
    }
    const ratio = Math.exp(lr / (msum + 1e-8));
    const advantage = a / (msum + 1e-8);
    let pgB = -advantage * ratio;
    if (isW) pgB *= Math.exp(lw / (msum + 1e-8));
    total += pgB;
  }
  const clipHigh = Float64Array.from(nak, (x, i) => (x !== nakClamp[i] && adv[i] > 0 ? 1 : 0));
  const clipLow = Float64Array.from(nak, (x, i) => (x !== nakClamp[i] && adv[i] < 0 ? 1 : 0));
  return { loss: total / B, clipfrac: maskedMean(clipHigh, m), ppoKl: maskedMean(negKl, m), clipfracLower: maskedMean(clipLow, m) };
}

/** Rollout correction, token level: clamp(exp(clamp(old − rollout, ±20)) · mask, max = threshold). */
export function tokenTis(old: Arr, rollout: Arr, m: Arr, threshold: number): Float64Array {
  return Float64Array.from(old, (o, i) => Math.min(Math.exp(clamp(o - rollout[i], -20, 20)) * m[i], threshold));
}

/**
 * The token rewards verl's outcome estimators read when the KL is in the reward: the reward manager
 * puts each score on the last valid response token (token_level_scores), then apply_kl_penalty
 * (verl/trainer/ppo/ray_trainer.py at verl-project/verl v0.9.0, commit 483b8a0; the V1 trainer,
 * verl/trainer/ppo/v1/trainer_base.py, calls the same function) subtracts β·kld with
 * kld = kl_penalty(old_log_probs, ref_log_prob) · response_mask. compute_grpo_outcome_advantage,
 * compute_rloo_outcome_advantage and compute_reinforce_plus_plus_baseline_outcome_advantage then sum
 * these over the response (below): the KL enters each score before the group statistics.
 */
export function applyKlPenalty(scores: Arr, old: Arr, ref: Arr, m: Arr, B: number, A: number, beta: number, klName: string): Float64Array {
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    let last = -1;
    for (let a = 0; a < A; a++) if (m[b * A + a] !== 0) last = a;
    for (let a = 0; a < A; a++) {
      const i = b * A + a;
      const tokenScore = a === last ? scores[b] : 0;
      out[i] = tokenScore - beta * (klForward(old[i], ref[i], klName) * m[i]);
    }
  }
  return out;
}

/** compute_grpo_outcome_advantage (norm_adv_by_std_in_grpo true/false), from token-level rewards. */
export function grpoAdvantage(tokenRewards: Arr, m: Arr, index: Arr, B: number, A: number, normByStd: boolean, epsilon = 1e-6): Float64Array {
  const scores = Array.from({ length: B }, (_, b) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += tokenRewards[b * A + a];
    return s;
  });
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const g = scores.filter((_, j) => index[j] === index[b]);
    let mean = 0,
      std = 1;
    if (g.length > 1) {
      mean = g.reduce((s, x) => s + x, 0) / g.length;
      std = Math.sqrt(g.reduce((s, x) => s + (x - mean) ** 2, 0) / (g.length - 1));
    }
    const adv = normByStd ? (scores[b] - mean) / (std + epsilon) : scores[b] - mean;
    for (let a = 0; a < A; a++) out[b * A + a] = adv * m[b * A + a];
  }
  return out;
}

/** compute_rloo_outcome_advantage. */
export function rlooAdvantage(tokenRewards: Arr, m: Arr, index: Arr, B: number, A: number): Float64Array {
  const scores = Array.from({ length: B }, (_, b) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += tokenRewards[b * A + a];
    return s;
  });
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const g = scores.filter((_, j) => index[j] === index[b]);
    const n = g.length;
    const mean = n > 1 ? g.reduce((s, x) => s + x, 0) / n : 0;
    const adv = n > 1 ? (scores[b] * n) / (n - 1) - (mean * n) / (n - 1) : scores[b];
    for (let a = 0; a < A; a++) out[b * A + a] = adv * m[b * A + a];
  }
  return out;
}

/** compute_reinforce_plus_plus_outcome_advantage: discounted returns reset after EOS, whitened, × mask. */
export function reinforcePlusPlusAdvantage(tokenRewards: Arr, m: Arr, B: number, A: number, gamma: number) {
  const returns = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    let running = 0;
    for (let t = A - 1; t >= 0; t--) {
      running = tokenRewards[b * A + t] + gamma * running;
      returns[b * A + t] = running;
      running = running * m[b * A + t];
    }
  }
  const adv = maskedWhiten(returns, m);
  for (let i = 0; i < adv.length; i++) adv[i] *= m[i];
  return { advantages: adv, returns };
}

/** compute_reinforce_plus_plus_baseline_outcome_advantage: (score − group mean) tiled × mask, whitened, × mask. */
export function reinforcePlusPlusBaselineAdvantage(tokenRewards: Arr, m: Arr, index: Arr, B: number, A: number): Float64Array {
  const scores = Array.from({ length: B }, (_, b) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += tokenRewards[b * A + a];
    return s;
  });
  const tiled = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const g = scores.filter((_, j) => index[j] === index[b]);
    const mean = g.length > 1 ? g.reduce((s, x) => s + x, 0) / g.length : 0;
    for (let a = 0; a < A; a++) tiled[b * A + a] = (scores[b] - mean) * m[b * A + a];
  }
  const adv = maskedWhiten(tiled, m);
  for (let i = 0; i < adv.length; i++) adv[i] *= m[i];
  return adv;
}

/** Σ_t of the token rewards per row: verl's `scores = token_level_rewards.sum(dim=-1)`. */
function rowSums(tokenRewards: Arr, B: number, A: number): number[] {
  return Array.from({ length: B }, (_, b) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += tokenRewards[b * A + a];
    return s;
  });
}

/**
 * compute_opo_outcome_advantage: baseline = Σ len·score / Σ len over the group (len = Σ_t mask),
 * 0 for a group of one; (score − baseline) × mask.
 */
export function opoAdvantage(tokenRewards: Arr, m: Arr, index: Arr, B: number, A: number): Float64Array {
  const scores = rowSums(tokenRewards, B, A);
  const len = rowSums(m, B, A);
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const members = Array.from({ length: B }, (_, j) => j).filter((j) => index[j] === index[b]);
    let bsl = 0;
    if (members.length > 1) {
      let num = 0,
        den = 0;
      for (const j of members) {
        num += len[j] * scores[j];
        den += len[j];
      }
      bsl = num / den;
    }
    for (let a = 0; a < A; a++) out[b * A + a] = (scores[b] - bsl) * m[b * A + a];
  }
  return out;
}

/**
 * compute_grpo_passk_outcome_advantage: per group, topk(2) → r_max − r_second_max for the top
 * member only, ÷ (torch.std (unbiased) + epsilon) when norm_adv_by_std_in_grpo; × mask. Groups of
 * one raise. torch.topk's pick among equal maxima is unspecified; the first is taken here, and with
 * equal maxima the advantage is 0 whichever is picked.
 */
export function grpoPasskAdvantage(tokenRewards: Arr, m: Arr, index: Arr, B: number, A: number, normByStd = true, epsilon = 1e-6): Float64Array {
  const scores = rowSums(tokenRewards, B, A);
  const adv = new Float64Array(B);
  const seen = new Set<number>();
  for (let b = 0; b < B; b++) {
    if (seen.has(index[b])) continue;
    seen.add(index[b]);
    const ids = Array.from({ length: B }, (_, j) => j).filter((j) => index[j] === index[b]);
    if (ids.length < 2) throw new Error(`Pass@k requires at least 2 samples per group. Got ${ids.length}`);
    const order = [...ids].sort((i, j) => scores[j] - scores[i] || i - j); // stable: first of equals
    const iMax = order[0];
    let a = scores[order[0]] - scores[order[1]];
    if (normByStd) {
      const r = ids.map((j) => scores[j]);
      const mean = r.reduce((s, x) => s + x, 0) / r.length;
      const std = Math.sqrt(r.reduce((s, x) => s + (x - mean) ** 2, 0) / (r.length - 1));
      a = a / (std + epsilon);
    }
    adv[iMax] = a;
  }
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) for (let t = 0; t < A; t++) out[b * A + t] = adv[b] * m[b * A + t];
  return out;
}

/**
 * compute_remax_outcome_advantage: returns = flip-cumsum-flip of token_level_rewards·mask (γ = 1,
 * no reset at masked positions), advantages = returns − reward_baselines·mask (not masked further).
 */
export function remaxAdvantage(tokenRewards: Arr, baselines: Arr, m: Arr, B: number, A: number) {
  const returns = new Float64Array(B * A);
  const advantages = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    let acc = 0;
    for (let t = A - 1; t >= 0; t--) {
      acc += tokenRewards[b * A + t] * m[b * A + t];
      returns[b * A + t] = acc;
    }
    for (let t = 0; t < A; t++) advantages[b * A + t] = returns[b * A + t] - baselines[b] * m[b * A + t];
  }
  return { advantages, returns };
}

/**
 * compute_policy_loss_clip_cov (verl-project/verl v0.9.0 core_algos.py L1742–1840, + rollout_is_weights).
 * torch.randperm is the one random draw: `randperm(band)` receives the band's flat indices in
 * torch.nonzero order (row-major) and returns them in the order the permutation takes them, so a
 * test injects the selection it compares against. No clamp on the log-ratio (verl has none here).
 */
export function policyLossClipCov(
  old: Arr,
  logp: Arr,
  adv: Arr,
  m: Arr,
  B: number,
  A: number,
  cfg: VerlPolicyConfig,
  cov: { ratio: number; lb: number; ub: number },
  randperm: (band: number[]) => number[],
  isW: Arr | null = null,
) {
  const n = B * A;
  const nak = Float64Array.from(logp, (l, i) => l - old[i]);
  const ratio = Float64Array.from(nak, (x) => Math.exp(x));
  const ppoKl = maskedMean(
    Float64Array.from(nak, (x) => -x),
    m,
  );
  const pg1 = Float64Array.from(ratio, (r, i) => -adv[i] * r);
  const pg2 = Float64Array.from(ratio, (r, i) => -adv[i] * clamp(r, 1 - cfg.clipRatioLow, 1 + cfg.clipRatioHigh));
  const corr = new Float64Array(n).fill(1);
  const meanA = maskedMean(adv, m);
  const meanL = maskedMean(logp, m);
  const covAll = Float64Array.from(adv, (a, i) => (a - meanA) * (logp[i] - meanL));
  for (let i = 0; i < n; i++) {
    if (m[i] === 0) covAll[i] = -Infinity;
    if (pg2[i] > pg1[i] && m[i] > 0) covAll[i] = -Infinity; // clip_by_origin
  }
  let msum = 0;
  for (let i = 0; i < n; i++) msum += m[i];
  const clipNum = Math.max(Math.trunc(cov.ratio * msum), 1);
  const band: number[] = [];
  for (let i = 0; i < n; i++) if (covAll[i] < cov.ub && covAll[i] > cov.lb && m[i] > 0) band.push(i);
  if (band.length > 0) for (const i of randperm(band).slice(0, Math.min(clipNum, band.length))) corr[i] = 0;
  const clipfrac = maskedMean(
    Float64Array.from(corr, (c) => (c === 0 ? 1 : 0)),
    m,
  );
  const pg = Float64Array.from(pg1, (p1, i) => Math.max(p1, pg2[i]) * corr[i] * (isW ? isW[i] : 1));
  return { loss: aggLoss(pg, m, B, A, cfg.lossAggMode), clipfrac, ppoKl, clipfracLower: 0, picked: Uint8Array.from(corr, (c) => (c === 0 ? 1 : 0)) };
}

/**
 * compute_policy_loss_kl_cov (v0.9.0 core_algos.py L1843–1924, + rollout_is_weights). torch.topk's
 * order among equal covariances is unspecified; here ties go to the lower index (a stable sort).
 * The covariance uses the detached log-probs (logpSg), as verl's `.detach()` does.
 */
export function policyLossKlCov(
  old: Arr,
  logp: Arr,
  logpSg: Arr,
  adv: Arr,
  m: Arr,
  B: number,
  A: number,
  lossAggMode: string,
  cov: { ratio: number; coef: number },
  isW: Arr | null = null,
) {
  const n = B * A;
  const nak = Float64Array.from(logp, (l, i) => l - old[i]);
  const absKl = Float64Array.from(nak, (x) => Math.abs(x));
  const ppoKlAbs = maskedMean(absKl, m);
  const pg = Float64Array.from(nak, (x, i) => -adv[i] * Math.exp(x));
  const validIdx: number[] = [];
  for (let i = 0; i < n; i++) if (m[i] > 0) validIdx.push(i);
  const k = Math.min(cov.ratio, validIdx.length);
  const picked = new Uint8Array(n);
  if (k !== 0) {
    const aV = validIdx.map((i) => adv[i]);
    const lV = validIdx.map((i) => logpSg[i]);
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    const mA = mean(aV),
      mL = mean(lV);
    const covLst = aV.map((a, j) => (a - mA) * (lV[j] - mL));
    const kNums = Math.max(1, Math.trunc(covLst.length * cov.ratio));
    const order = covLst.map((_, j) => j).sort((x, y) => covLst[y] - covLst[x] || x - y);
    for (const j of order.slice(0, kNums)) {
      const i = validIdx[j];
      picked[i] = 1;
      pg[i] = -adv[i] * Math.exp(nak[i]) + cov.coef * absKl[i];
    }
  }
  if (isW) for (let i = 0; i < n; i++) pg[i] *= isW[i];
  return { loss: aggLoss(pg, m, B, A, lossAggMode), clipfrac: 0, ppoKl: ppoKlAbs, clipfracLower: 0, picked };
}

// ---- Rollout correction (verl-project/verl v0.9.0, commit 483b8a0, verl/trainer/ppo/rollout_corr_helper.py) ----
// Tensors are (B, A) row-major; masked_sum / masked_mean as verl_F (verl/utils/torch_functional.py
// L273–308): where(mask, x, 0)·mask summed, ÷ (Σmask + 1e-8).

const SAFETY_BOUND = 20;
function rowMaskedSum(x: Arr, m: Arr, B: number, A: number): Float64Array {
  return Float64Array.from({ length: B }, (_, b) => {
    let s = 0;
    for (let a = 0; a < A; a++) s += m[b * A + a] !== 0 ? x[b * A + a] * m[b * A + a] : 0;
    return s;
  });
}
function rowMaskedMean(x: Arr, m: Arr, B: number, A: number): Float64Array {
  const s = rowMaskedSum(x, m, B, A);
  return s.map((v, b) => v / (rowMaskedSum(new Float64Array(A * B).fill(1), m, B, A)[b] + 1e-8));
}
const mean = (x: Arr) => Array.from(x).reduce((s, v) => s + v, 0) / x.length;

/** _parse_rollout_is_threshold (L84–121): a number → TIS upper; "lower_upper" → IcePop. */
export function parseRolloutIsThreshold(spec: number | string): { upper: number; lower: number | null } {
  let upper: number;
  let lower: number | null = null;
  if (typeof spec === 'number') upper = spec;
  else if (spec.includes('_')) {
    const [l, u] = spec.split('_', 2);
    lower = Number(l);
    upper = Number(u);
  } else upper = Number(spec);
  if (!(upper > 0)) throw new Error('rollout_is_threshold upper bound must be positive');
  if (lower !== null && (!(lower > 0) || lower > upper)) throw new Error('bad rollout_is_threshold lower bound');
  return { upper, lower };
}

/** compute_rollout_correction_weights (L437–560) with compute_is_metrics (L563–690); no batch normalisation. */
export function rolloutCorrectionWeights(logRatio: Arr, m: Arr, B: number, A: number, level: 'token' | 'sequence', thresholdSpec: number | string) {
  const { upper, lower } = parseRolloutIsThreshold(thresholdSpec);
  const n = B * A;
  let forMetrics: Float64Array;
  let raw: Float64Array;
  if (level === 'token') {
    forMetrics = Float64Array.from(logRatio);
    raw = Float64Array.from(logRatio, (x) => Math.exp(clamp(x, -SAFETY_BOUND, SAFETY_BOUND)));
  } else {
    forMetrics = rowMaskedSum(logRatio, m, B, A); // (B, 1)
    raw = Float64Array.from({ length: n }, (_, i) => Math.exp(clamp(forMetrics[Math.floor(i / A)], -SAFETY_BOUND, SAFETY_BOUND)));
  }
  raw = raw.map((w, i) => w * m[i]);
  const weights = lower === null ? raw.map((w) => Math.min(w, upper)) : raw.map((w) => (w >= lower && w <= upper ? w : 0));
  const metrics: Record<string, number> = {};
  const lowerM = lower === null ? 1 / upper : lower;
  if (level === 'sequence') {
    metrics.rollout_is_max = Math.exp(Math.min(Math.max(...forMetrics), SAFETY_BOUND));
    metrics.rollout_is_min = Math.exp(Math.min(...forMetrics));
    metrics.rollout_is_mean = maskedMean(weights, m);
    metrics.rollout_is_ratio_fraction_high = mean(forMetrics.map((x) => (x > Math.log(upper) ? 1 : 0)));
    metrics.rollout_is_ratio_fraction_low = mean(forMetrics.map((x) => (x < Math.log(lowerM) ? 1 : 0)));
  } else {
    metrics.rollout_is_mean = maskedMean(weights, m);
    metrics.rollout_is_ratio_fraction_high = maskedMean(
      raw.map((w) => (w > upper ? 1 : 0)),
      m,
    );
    metrics.rollout_is_ratio_fraction_low = maskedMean(
      raw.map((w) => (w < lowerM ? 1 : 0)),
      m,
    );
    metrics.rollout_is_max = Math.max(...Array.from(weights, (w, i) => (m[i] ? w : Number.NEGATIVE_INFINITY)));
    metrics.rollout_is_min = Math.min(...Array.from(weights, (w, i) => (m[i] ? w : Number.POSITIVE_INFINITY)));
  }
  const maskCount = Array.from(m).reduce((s, v) => s + v, 0);
  const forStd = weights.map((w) => clamp(w, 0, upper));
  const meanClamped = maskedMean(forStd, m);
  metrics.rollout_is_std =
    maskCount > 1
      ? Math.sqrt(
          Math.max(
            maskedMean(
              forStd.map((w) => w * w),
              m,
            ) -
              meanClamped ** 2,
            0,
          ),
        )
      : 0;
  const normalized = forStd.map((w) => w / (meanClamped + 1e-8));
  metrics.rollout_is_eff_sample_size =
    1 /
    maskedMean(
      normalized.map((w) => w * w),
      m,
    );
  if (lower !== null) {
    metrics.rollout_is_oob_ratio = maskedMean(
      raw.map((w) => (w < lower || w > upper ? 1 : 0)),
      m,
    );
  }
  return { weights, metrics };
}

const RS_OPTIONS = ['token_k1', 'token_k2', 'token_k3', 'seq_sum_k1', 'seq_sum_k2', 'seq_sum_k3', 'seq_mean_k1', 'seq_mean_k2', 'seq_mean_k3', 'seq_max_k2', 'seq_max_k3'];

/** _parse_rollout_rs_thresholds (L124–190). */
export function parseRolloutRsThresholds(options: string[], spec: number | string): Record<string, { lower: number | null; upper: number }> {
  let raw =
    typeof spec === 'number'
      ? [String(spec)]
      : spec
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s);
  if (raw.length !== 1 && raw.length !== options.length) throw new Error('rollout_rs_threshold count');
  if (raw.length === 1 && options.length > 1) raw = options.map(() => raw[0]);
  const out: Record<string, { lower: number | null; upper: number }> = {};
  options.forEach((o, j) => {
    const s = raw[j];
    if (o.endsWith('k1')) {
      const [l, u] = s.includes('_') ? s.split('_', 2) : [String(1 / Number(s)), s];
      out[o] = { lower: Number(l), upper: Number(u) };
    } else {
      if (s.includes('_')) throw new Error(`${o} takes one upper bound`);
      out[o] = { lower: null, upper: Number(s) };
    }
  });
  return out;
}

/** compute_rollout_rejection_mask (L193–400): the modified response mask and its masked fractions. */
export function rolloutRejectionMask(logRatio: Arr, m: Arr, B: number, A: number, rolloutRs: string, thresholdSpec: number | string) {
  const options = [
    ...new Set(
      rolloutRs
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s),
    ),
  ];
  for (const o of options) if (!RS_OPTIONS.includes(o)) throw new Error(`Invalid rollout_rs option: ${o}`);
  const th = parseRolloutRsThresholds(options, thresholdSpec);
  const safe = Float64Array.from(logRatio, (x) => clamp(x, -SAFETY_BOUND, SAFETY_BOUND));
  const k = { k1: safe.map((x) => -x), k2: safe.map((x) => 0.5 * x ** 2), k3: safe.map((x) => Math.exp(x) - 1 - x) };
  const seqValid = Array.from({ length: B }, (_, b) => Array.from({ length: A }, (_, a) => m[b * A + a]).reduce((s, v) => s + v, 0) > 0);
  const combined = new Float64Array(B * A).fill(1);
  const metrics: Record<string, number> = {};
  const seqMax = (x: Float64Array) =>
    Float64Array.from({ length: B }, (_, b) => {
      let mx = Number.NEGATIVE_INFINITY;
      for (let a = 0; a < A; a++) if (m[b * A + a]) mx = Math.max(mx, x[b * A + a]);
      return mx === Number.NEGATIVE_INFINITY ? 0 : mx;
    });
  for (const o of options) {
    const kk = k[o.slice(-2) as 'k1' | 'k2' | 'k3'];
    const { lower, upper } = th[o];
    const isK1 = o.endsWith('k1');
    const pass = (s: number) => (isK1 ? s >= Math.log(lower as number) && s <= Math.log(upper) : s <= upper);
    let tokenKeep: boolean[];
    if (o.startsWith('token')) tokenKeep = Array.from(kk, pass);
    else {
      const seq = o.startsWith('seq_sum') ? rowMaskedSum(kk, m, B, A) : o.startsWith('seq_mean') ? rowMaskedMean(kk, m, B, A) : seqMax(kk);
      tokenKeep = Array.from({ length: B * A }, (_, i) => pass(seq[Math.floor(i / A)]));
    }
    const keepF = Float64Array.from(tokenKeep, (x) => (x ? 1 : 0));
    for (let i = 0; i < B * A; i++) combined[i] *= keepF[i];
    const seqKeep = Array.from({ length: B }, (_, b) => Array.from({ length: A }, (_, a) => tokenKeep[b * A + a] || !m[b * A + a]).every((x) => x));
    metrics[`rollout_rs_${o}_masked_fraction`] = maskedMean(
      keepF.map((x) => 1 - x),
      m,
    );
    const nValid = seqValid.filter((x) => x).length;
    metrics[`rollout_rs_${o}_seq_masked_fraction`] = nValid > 0 ? seqKeep.reduce((s, kp, b) => s + (kp ? 0 : 1) * (seqValid[b] ? 1 : 0), 0) / nValid : 0;
  }
  metrics.rollout_rs_masked_fraction = maskedMean(
    combined.map((x) => 1 - x),
    m,
  );
  const seqHasMasked = Array.from({ length: B }, (_, b) => Array.from({ length: A }, (_, a) => !(combined[b * A + a] > 0.5 && m[b * A + a]) && !!m[b * A + a]).some((x) => x));
  metrics.rollout_rs_seq_masked_fraction = mean(seqHasMasked.map((x) => (x ? 1 : 0)));
  return { mask: Float64Array.from(m, (v, i) => v * combined[i]), metrics };
}

/** compute_offpolicy_metrics (L785–900): the KL, k3 KL and χ² diagnostics. */
export function offpolicyMetrics(old: Arr, rollout: Arr, m: Arr, B: number, A: number): Record<string, number> {
  const lr = Float64Array.from(old, (o, i) => o - rollout[i]);
  const rhoSq = lr.map((x) => Math.exp(clamp(x, -SAFETY_BOUND, SAFETY_BOUND)) ** 2);
  const seq = rowMaskedSum(lr, m, B, A);
  return {
    kl: maskedMean(
      Float64Array.from(rollout, (r, i) => r - old[i]),
      m,
    ),
    k3_kl: maskedMean(
      lr.map((x) => Math.exp(x) - x - 1),
      m,
    ),
    chi2_token: maskedMean(rhoSq, m) - 1,
    chi2_seq: mean(seq.map((s) => Math.exp(2 * clamp(s, -SAFETY_BOUND, SAFETY_BOUND)))) - 1,
  };
}

/**
 * OpenRLHF v0.11.0 (commit 3c3be62) openrlhf/models/loss.py PolicyLoss.forward L197–214, type "tis":
 * vllm_is = exp(old − rollout).clamp(min=low, max=high) (no ±20 clamp of the log-ratio); "icepop":
 * exp(old − rollout)·[low ≤ · ≤ high]. The loss is multiplied by the action mask afterwards.
 */
export function openrlhfIsCorrection(old: Arr, rollout: Arr, type: 'tis' | 'icepop', low: number, high: number): Float64Array {
  return Float64Array.from(old, (o, i) => {
    const r = Math.exp(o - rollout[i]);
    return type === 'tis' ? clamp(r, low, high) : r >= low && r <= high ? r : 0;
  });
}
