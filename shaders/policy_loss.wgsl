// Policy loss per token (vanilla PPO clip, GSPO, CISPO, SAPO, GPG, GMPO, Clip-Cov, KL-Cov) fused with the per-row masked sums that
// agg_finalize (aggregate.wgsl) turns into [loss, clipfrac, clipfrac_lower, ppo_kl] and the weighted
// gradient. Mirrors verl verl/trainer/ppo/core_algos.py
// compute_policy_loss_{vanilla,gspo,cispo,sapo,gpg,geo_mean,clip_cov,kl_cov}.
//
// Math per token (d = logp − old, A = advantage, w_is = is_weights or 1; docs/algorithms.md, Numerical conventions): the policy term
//  (L, clipped, lower, kl, g = ∂L/∂logp) of lib_policy_term.wgsl for P.mode, where GSPO's
//  s_b = Σ_t m·d / max(n_b, 1) comes from a row pass first (the aggregation is forced to
//  seq-mean-token-mean by the host, as for SAPO), as do GMPO's λ_b, Ā_b and w_b (aggregation
//  forced to seq-mean-token-mean-all-rows); then L ← w·L, g ← w·g with w = policy_is_weight
//  (w_is, or 1 for GMPO whose row weight is inside L; stop-gradient weights). Clip-Cov and KL-Cov
//  read their batch-wide token choice from cov_sel, written by cov_select.wgsl just before.
// Masked positions write g = 0 and add nothing (they may hold any value, NaN included).
// Row partials (B, 5) = [n_b, Σ m·L, Σ m·clipped, Σ m·lower, Σ m·kl] (aggregate.wgsl layout);
// agg_finalize with K = 4 then scales g in place by the aggregation weights.
// Reference: src/reference/policyLoss.ts (policyLossRef).
//
// Bindings: 0 uniform P, 1 old_logprobs (B,A) f32, 2 logprobs (B,A) f32, 3 advantages (B,A) f32,
//           4 action_mask (B,A) f32, 5 is_weights (B,A) f32 (read only when has_is = 1),
//           6 grad_logprobs (B,A) f32 rw (unweighted g), 7 rows (B,5) f32 rw,
//           8 cov_sel (B,A) f32 (1 = picked; read only for clip_cov / kl_cov)
// Layout: one workgroup of WG threads (a power of two) per row b (grid B); threads stride over A,
//         then a deterministic tree reduction in workgroup memory (GSPO and GMPO run extra
//         reductions for their row terms before the token pass).

const WG: u32 = 64u;
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
  tau_pos: f32,
  tau_neg: f32,
  ppo_kl_coef: f32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> logprobs: array<f32>;
@group(0) @binding(3) var<storage, read> advantages: array<f32>;
@group(0) @binding(4) var<storage, read> action_mask: array<f32>;
@group(0) @binding(5) var<storage, read> is_weights: array<f32>;
@group(0) @binding(6) var<storage, read_write> grad_logprobs: array<f32>;
@group(0) @binding(7) var<storage, read_write> rows: array<f32>;
@group(0) @binding(8) var<storage, read> cov_sel: array<f32>;

// @include lib_tree_sum
// @include lib_policy_term

@compute @workgroup_size(WG)
fn policy_rows(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  let clip = PolicyClip(P.mode, P.clip_low, P.clip_high, P.clip_c, P.has_dual != 0u, P.tau_pos, P.tau_neg, P.ppo_kl_coef);
  let cov = P.mode == LOSS_MODE_CLIP_COV || P.mode == LOSS_MODE_KL_COV;
  // GSPO: the row's length-normalised log-ratio s_b; GMPO: λ_b, Ā_b, w_b; shared by the row's tokens.
  var row = PolicyRow(0.0, 0.0, 1.0);
  if (P.mode == LOSS_MODE_GSPO || P.mode == LOSS_MODE_GEO_MEAN) {
    let geo = P.mode == LOSS_MODE_GEO_MEAN;
    var pre: array<f32, 4>;
    for (var a = lid; a < P.A; a += WG) {
      let i = b * P.A + a;
      let m = action_mask[i];
      if (m != 0.0) {
        pre[0] += m;
        if (geo) {
          pre[1] += m * geo_token_log_ratio(clip, old_logprobs[i], logprobs[i], advantages[i]);
          pre[2] += m * advantages[i];
          if (P.has_is != 0u) { pre[3] += m * log(is_weights[i] + 1e-10); }
        } else {
          pre[1] += m * (logprobs[i] - old_logprobs[i]);
        }
      }
    }
    let n = max(tree_sum(lid, pre[0]), 1.0);
    row.log_ratio = tree_sum(lid, pre[1]) / n;
    if (geo) {
      row.adv = tree_sum(lid, pre[2]) / n;
      row.is_w = exp(tree_sum(lid, pre[3]) / n);
    }
  }
  var acc: array<f32, ROW_STRIDE>;
  for (var a = lid; a < P.A; a += WG) {
    let i = b * P.A + a;
    let m = action_mask[i];
    var g = 0.0;
    if (m != 0.0) {
      let picked = cov && cov_sel[i] != 0.0;
      let pt = policy_term(clip, old_logprobs[i], logprobs[i], advantages[i], row, picked);
      var loss = pt.loss;
      g = pt.g;
      if (P.has_is != 0u) {
        let w = policy_is_weight(P.mode, is_weights[i]);
        loss = w * loss;
        g = w * g;
      }
      acc[0] += m;
      acc[1] += m * loss;
      acc[2] += m * pt.clipped;
      acc[3] += m * pt.lower;
      acc[4] += m * pt.kl;
    }
    grad_logprobs[i] = g;
  }
  for (var j = 0u; j < ROW_STRIDE; j++) {
    let total = tree_sum(lid, acc[j]);
    if (lid == 0u) { rows[b * ROW_STRIDE + j] = total; }
  }
}
