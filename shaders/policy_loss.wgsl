// Policy loss per token (vanilla PPO clip, GSPO, CISPO) fused with the per-row masked sums that
// agg_finalize (aggregate.wgsl) turns into [loss, clipfrac, clipfrac_lower, ppo_kl] and the weighted
// gradient. Mirrors verl verl/trainer/ppo/core_algos.py compute_policy_loss_{vanilla,gspo,cispo}.
//
// Math per token (d = logp − old, A = advantage, w_is = is_weights or 1, docs/algorithms.md, Numerical conventions):
//  LOSS_MODE_VANILLA: ratio = exp(clamp(d, −20, 20));  pg1 = −A·ratio;  pg2 = −A·clamp(ratio, 1 − clip_low, 1 + clip_high)
//     L = max(pg1, pg2);  clipped = pg2 > pg1
//     dual clip (has_dual, c > 1), A < 0: pg3 = −A·c;  lower = pg3 < max(pg1, pg2);  L = min(L, pg3)
//     g = ∂L/∂logp = −A·ratio where neither clipped nor lower and |d| < 20, else 0;  kl = −clamp(d, ±20)
//  LOSS_MODE_GSPO: s_b = Σ_t m·d / max(n_b, 1) (row pass first); ratio = exp(min(s_b, 10)) for every token
//     of the row (value of exp(logp − sg(logp) + sg(s_b)) clamped at 10); pg1, pg2, L, clipped as
//     vanilla with this ratio, no dual clip; g = −A·ratio where not clipped and s_b ≤ 10, else 0;
//     kl = −d (unclamped). The aggregation is forced to seq-mean-token-mean by the host.
//  LOSS_MODE_CISPO: ratio = exp(clamp(d, ±20)); r̂ = clamp(ratio, 1 − clip_low, 1 + clip_high) (stop-gradient)
//     L = −r̂·A·logp;  g = −r̂·A;  clipped = ratio ≠ r̂;  kl = −clamp(d, ±20)
//  every mode: L ← w_is·L, g ← w_is·g (stop-gradient weights); lower = false except vanilla.
// Masked positions write g = 0 and add nothing (they may hold any value, NaN included).
// Row partials (B, 5) = [n_b, Σ m·L, Σ m·clipped, Σ m·lower, Σ m·kl] (aggregate.wgsl layout);
// agg_finalize with K = 4 then scales g in place by the aggregation weights.
// Reference: src/reference/policyLoss.ts (policyTokenRef, gspoTokenRef, cispoTokenRef, policyLossRef).
// The LOSS_MODE_* codes are generated from src/reference/kernelCodes.ts by the shader loader.
//
// Bindings: 0 uniform P, 1 old_logprobs (B,A) f32, 2 logprobs (B,A) f32, 3 advantages (B,A) f32,
//           4 action_mask (B,A) f32, 5 is_weights (B,A) f32 (read only when has_is = 1),
//           6 grad_logprobs (B,A) f32 rw (unweighted g), 7 rows (B,5) f32 rw
// Layout: one workgroup of WG threads (a power of two) per row b (grid B); threads stride over A,
//         then a deterministic tree reduction in workgroup memory (GSPO runs one extra reduction
//         for s_b before the token pass).

override WG: u32 = 64;
const ROW_STRIDE: u32 = 5u;

struct Params {
  B: u32,
  A: u32,
  clip_low: f32,
  clip_high: f32,
  clip_c: f32,
  has_dual: u32,
  mode: u32,
  has_is: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> logprobs: array<f32>;
@group(0) @binding(3) var<storage, read> advantages: array<f32>;
@group(0) @binding(4) var<storage, read> action_mask: array<f32>;
@group(0) @binding(5) var<storage, read> is_weights: array<f32>;
@group(0) @binding(6) var<storage, read_write> grad_logprobs: array<f32>;
@group(0) @binding(7) var<storage, read_write> rows: array<f32>;

// @include lib_tree_sum

@compute @workgroup_size(WG)
fn policy_rows(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  // GSPO: the row's length-normalised log-ratio s_b, shared by every token of the row.
  var seq_log_ratio = 0.0;
  if (P.mode == LOSS_MODE_GSPO) {
    var pre: array<f32, ROW_STRIDE>;
    for (var a = lid; a < P.A; a += WG) {
      let i = b * P.A + a;
      let m = action_mask[i];
      if (m != 0.0) {
        pre[0] += m;
        pre[1] += m * (logprobs[i] - old_logprobs[i]);
      }
    }
    let n = tree_sum(lid, pre[0]);
    seq_log_ratio = tree_sum(lid, pre[1]) / max(n, 1.0);
  }
  var acc: array<f32, ROW_STRIDE>;
  for (var a = lid; a < P.A; a += WG) {
    let i = b * P.A + a;
    let m = action_mask[i];
    var g = 0.0;
    if (m != 0.0) {
      let old = old_logprobs[i];
      let logp = logprobs[i];
      let adv = advantages[i];
      let d = logp - old;
      let dc = clamp(d, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
      var loss = 0.0;
      var clipped = false;
      var lower = false;
      var kl = -dc;
      if (P.mode == LOSS_MODE_CISPO) {
        let ratio = exp(dc);
        let r = clamp(ratio, 1.0 - P.clip_low, 1.0 + P.clip_high);
        loss = -r * adv * logp;
        g = -r * adv;
        clipped = ratio != r;
      } else {
        var ratio = exp(dc);
        var grad_ok = abs(d) < LOG_RATIO_CLAMP;
        if (P.mode == LOSS_MODE_GSPO) {
          ratio = exp(min(seq_log_ratio, GSPO_LOG_RATIO_MAX));
          grad_ok = seq_log_ratio <= GSPO_LOG_RATIO_MAX;
          kl = -d;
        }
        let pg1 = -adv * ratio;
        let pg2 = -adv * clamp(ratio, 1.0 - P.clip_low, 1.0 + P.clip_high);
        let clip_max = max(pg1, pg2);
        clipped = pg2 > pg1;
        loss = clip_max;
        if (P.mode == LOSS_MODE_VANILLA && P.has_dual != 0u && adv < 0.0) {
          let pg3 = -adv * P.clip_c;
          lower = pg3 < clip_max;
          loss = min(clip_max, pg3);
        }
        if (!clipped && !lower && grad_ok) { g = -adv * ratio; }
      }
      if (P.has_is != 0u) {
        let w = is_weights[i];
        loss = w * loss;
        g = w * g;
      }
      acc[0] += m;
      acc[1] += m * loss;
      acc[2] += m * select(0.0, 1.0, clipped);
      acc[3] += m * select(0.0, 1.0, lower);
      acc[4] += m * kl;
    }
    grad_logprobs[i] = g;
  }
  for (var j = 0u; j < ROW_STRIDE; j++) {
    let total = tree_sum(lid, acc[j]);
    if (lid == 0u) { rows[b * ROW_STRIDE + j] = total; }
  }
}
