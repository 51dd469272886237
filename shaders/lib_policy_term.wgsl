// The per-token policy term of vanilla PPO clip (with dual clip), GSPO, CISPO, SAPO, GPG, GMPO, Clip-Cov and KL-Cov, shared by
// policy_loss.wgsl and the fused actor_loss.wgsl (included with `// @include lib_policy_term`), so
// the two kernels cannot drift apart. Before the IS weight; the caller masks, weights and sums.
//
// Math (d = logp − old, dc = clamp(d, ±LOG_RATIO_CLAMP), A = advantage; docs/algorithms.md, Numerical conventions):
//   vanilla: ratio = exp(dc); pg1 = −A·ratio; pg2 = −A·clamp(ratio, 1 − clip_low, 1 + clip_high);
//            L = max(pg1, pg2); clipped = pg2 > pg1; with the dual clip (A < 0): pg3 = −A·clip_c,
//            lower = pg3 < L, L = min(L, pg3); g = −A·ratio unless clipped, lower or |d| ≥ clamp;
//            kl = −dc
//   GSPO:    as vanilla with ratio = exp(min(s_b, GSPO_LOG_RATIO_MAX)) for every token of the row
//            (s_b = the row's length-normalised log-ratio), no dual clip, g = 0 once s_b exceeds
//            the cap; kl = −d (unclamped)
//   CISPO:   r̂ = clamp(exp(dc), 1 − clip_low, 1 + clip_high) (stop-gradient); L = −r̂·A·logp;
//            g = −r̂·A; clipped = exp(dc) ≠ r̂; kl = −dc
//   SAPO:    r = exp(dc), τ = tau_pos if A > 0 else tau_neg, σ = sigmoid(τ(r − 1)); L = −A·σ·4/τ;
//            g = −A·4·σ·sigmoid(−τ(r − 1))·r (0 once |d| ≥ clamp); no clip flags; kl = −dc
//   GPG:     L = −A·logp; g = −A; no clip flags; kl = −dc
//   GMPO (geo_mean): the row's terms come from a row pass over geo_token_log_ratio (below):
//            λ_b = Σ m·ℓ_t/max(n_b, 1), Ā_b = Σ m·A/max(n_b, 1), w_b = exp(Σ m·log(w_is + 1e-10)/max(n_b, 1))
//            (verl divides by n_b + 1e-8: the same in f32); L = −Ā_b·exp(λ_b)·w_b on every token,
//            g = L where ℓ_t is live, else 0 (the caller's weight m/(n_b·B) makes it ∂/∂logp);
//            clipped = d ∉ [−clip_low, clip_high] and A > 0, lower = the same and A < 0; kl = −d.
//            policy_is_weight is 1 for GMPO: its IS weight is the row's geometric mean w_b.
//   Clip-Cov: vanilla without the dual clip, then on a picked token (cov_select.wgsl) L = 0, g = 0;
//            clipped = picked (verl's pg_clipfrac counts the zeroed tokens), lower = 0; kl = −dc
//   KL-Cov:  r = exp(dc); L = −A·r + κ·|dc|·picked; g = −A·r + κ·sgn(d)·picked (0 once |d| ≥ clamp),
//            κ = ppo_kl_coef; no clip flags; kl = |dc| (verl's ppo_kl for kl_cov)
// Reference: src/reference/policyLoss.ts (policyTokenRef, gspoTokenRef, cispoTokenRef, sapoTokenRef,
// gpgTokenRef, geoTokenLogRatio, geoRowsRef, geoMeanTokenRef, clipCovTokenRef, klCovTokenRef).
// The LOSS_MODE_* codes and the clamps are generated from src/reference/ by the shader loader.

struct PolicyClip {
  mode: u32,
  clip_low: f32,
  clip_high: f32,
  clip_c: f32,
  has_dual: bool,
  tau_pos: f32, // SAPO
  tau_neg: f32, // SAPO
  ppo_kl_coef: f32, // KL-Cov
}

/** The row's shared terms: GSPO's s_b (log_ratio); GMPO's λ_b (log_ratio), Ā_b (adv), w_b (is_w). */
struct PolicyRow {
  log_ratio: f32,
  adv: f32,
  is_w: f32,
}

/** GMPO's token log-ratio clipped in log space by sgn(A): sgn·min(sgn·d, sgn·clamp(d, −lo, hi)). */
fn geo_token_log_ratio(clip: PolicyClip, old: f32, logp: f32, adv: f32) -> f32 {
  let d = logp - old;
  let sgn = sign(adv);
  return sgn * min(sgn * d, sgn * clamp(d, -clip.clip_low, clip.clip_high));
}

/** The per-token IS weight the caller applies: w_is, or 1 for GMPO (its row weight is inside L). */
fn policy_is_weight(mode: u32, w_is: f32) -> f32 {
  return select(w_is, 1.0, mode == LOSS_MODE_GEO_MEAN);
}

struct PolicyTerm {
  loss: f32,
  clipped: f32, // 1 or 0
  lower: f32,   // 1 or 0 (dual clip active; vanilla only)
  kl: f32,
  g: f32,       // ∂loss/∂logp
}

/** `picked`: the token is one cov_select.wgsl chose (read by Clip-Cov and KL-Cov only). */
fn policy_term(clip: PolicyClip, old: f32, logp: f32, adv: f32, row: PolicyRow, picked: bool) -> PolicyTerm {
  let d = logp - old;
  let dc = clamp(d, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
  var t = PolicyTerm(0.0, 0.0, 0.0, -dc, 0.0);
  if (clip.mode == LOSS_MODE_KL_COV) {
    let ratio = exp(dc);
    let coef = select(0.0, clip.ppo_kl_coef, picked);
    t.loss = -adv * ratio + coef * abs(dc);
    if (abs(d) < LOG_RATIO_CLAMP) { t.g = -adv * ratio + coef * sign(d); }
    t.kl = abs(dc);
    return t;
  }
  if (clip.mode == LOSS_MODE_GPG) {
    t.loss = -logp * adv;
    t.g = -adv;
    return t;
  }
  if (clip.mode == LOSS_MODE_SAPO) {
    let ratio = exp(dc);
    let tau = select(clip.tau_neg, clip.tau_pos, adv > 0.0);
    let x = tau * (ratio - 1.0);
    let sig = 1.0 / (1.0 + exp(-x));
    let sig_neg = 1.0 / (1.0 + exp(x)); // 1 − σ without cancellation
    t.loss = -adv * sig * (4.0 / tau);
    if (abs(d) < LOG_RATIO_CLAMP) { t.g = -adv * 4.0 * sig * sig_neg * ratio; }
    return t;
  }
  if (clip.mode == LOSS_MODE_GEO_MEAN) {
    let c = clamp(d, -clip.clip_low, clip.clip_high);
    let live = (adv > 0.0 && d <= clip.clip_high) || (adv < 0.0 && d >= -clip.clip_low);
    t.loss = -row.adv * exp(row.log_ratio) * row.is_w;
    if (live) { t.g = t.loss; }
    t.clipped = select(0.0, 1.0, d != c && adv > 0.0);
    t.lower = select(0.0, 1.0, d != c && adv < 0.0);
    t.kl = -d;
    return t;
  }
  if (clip.mode == LOSS_MODE_CISPO) {
    let ratio = exp(dc);
    let r = clamp(ratio, 1.0 - clip.clip_low, 1.0 + clip.clip_high);
    t.loss = -r * adv * logp;
    t.g = -r * adv;
    t.clipped = select(0.0, 1.0, ratio != r);
    return t;
  }
  var ratio = exp(dc);
  var grad_ok = abs(d) < LOG_RATIO_CLAMP;
  if (clip.mode == LOSS_MODE_GSPO) {
    ratio = exp(min(row.log_ratio, GSPO_LOG_RATIO_MAX));
    grad_ok = row.log_ratio <= GSPO_LOG_RATIO_MAX;
    t.kl = -d;
  }
  let pg1 = -adv * ratio;
  let pg2 = -adv * clamp(ratio, 1.0 - clip.clip_low, 1.0 + clip.clip_high);
  let clip_max = max(pg1, pg2);
  let clipped = pg2 > pg1;
  var lower = false;
  t.loss = clip_max;
  if (clip.mode == LOSS_MODE_VANILLA && clip.has_dual && adv < 0.0) {
    let pg3 = -adv * clip.clip_c;
    lower = pg3 < clip_max;
    t.loss = min(clip_max, pg3);
  }
  if (!clipped && !lower && grad_ok) { t.g = -adv * ratio; }
  t.clipped = select(0.0, 1.0, clipped);
  t.lower = select(0.0, 1.0, lower);
  if (clip.mode == LOSS_MODE_CLIP_COV) {
    // verl's corr: the picked tokens' loss (and gradient) times 0; pg_clipfrac is their fraction
    if (picked) {
      t.loss = 0.0;
      t.g = 0.0;
    }
    t.clipped = select(0.0, 1.0, picked);
  }
  return t;
}
