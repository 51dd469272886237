// The per-token policy term of vanilla PPO clip (with dual clip), GSPO and CISPO, shared by
// policy_loss.wgsl and the fused actor_loss.wgsl (included with `// @include lib_policy_term`), so
// the two kernels cannot drift apart. Before the IS weight; the caller masks, weights and sums.
//
// Math (d = logp − old, dc = clamp(d, ±LOG_RATIO_CLAMP), A = advantage; README: Numerical conventions):
//   vanilla: ratio = exp(dc); pg1 = −A·ratio; pg2 = −A·clamp(ratio, 1 − clip_low, 1 + clip_high);
//            L = max(pg1, pg2); clipped = pg2 > pg1; with the dual clip (A < 0): pg3 = −A·clip_c,
//            lower = pg3 < L, L = min(L, pg3); g = −A·ratio unless clipped, lower or |d| ≥ clamp;
//            kl = −dc
//   GSPO:    as vanilla with ratio = exp(min(s_b, GSPO_LOG_RATIO_MAX)) for every token of the row
//            (s_b = the row's length-normalised log-ratio), no dual clip, g = 0 once s_b exceeds
//            the cap; kl = −d (unclamped)
//   CISPO:   r̂ = clamp(exp(dc), 1 − clip_low, 1 + clip_high) (stop-gradient); L = −r̂·A·logp;
//            g = −r̂·A; clipped = exp(dc) ≠ r̂; kl = −dc
// Reference: src/reference/policyLoss.ts (policyTokenRef, gspoTokenRef, cispoTokenRef).
// The LOSS_MODE_* codes and the clamps are generated from src/reference/ by the shader loader.

struct PolicyClip {
  mode: u32,
  clip_low: f32,
  clip_high: f32,
  clip_c: f32,
  has_dual: bool,
}

struct PolicyTerm {
  loss: f32,
  clipped: f32, // 1 or 0
  lower: f32,   // 1 or 0 (dual clip active; vanilla only)
  kl: f32,
  g: f32,       // ∂loss/∂logp
}

fn policy_term(clip: PolicyClip, old: f32, logp: f32, adv: f32, seq_log_ratio: f32) -> PolicyTerm {
  let d = logp - old;
  let dc = clamp(d, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
  var t = PolicyTerm(0.0, 0.0, 0.0, -dc, 0.0);
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
    ratio = exp(min(seq_log_ratio, GSPO_LOG_RATIO_MAX));
    grad_ok = seq_log_ratio <= GSPO_LOG_RATIO_MAX;
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
  return t;
}
