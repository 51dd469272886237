// The actor's loss step on its logits in one pass: temperature log-softmax gathered at the action
// tokens, entropy, the policy loss (vanilla PPO clip with dual clip, GSPO, CISPO, SAPO, GPG, GMPO; token TIS
// weights), the entropy bonus, the KL loss, their statistics, and the gradient wrt the logits.
// Replaces logprobs_forward → policy_rows → agg_finalize (×2 or ×3) → kl/kl_backward/mul/axpy →
// logprobs_backward and the two slices around them (8 to 15 dispatches) by pack_inputs + actor_loss.
//
// Math, row r of the logits for action a of sequence b (r = b·S + start + a), z = logits[r,:]/T
// (the formulas of logprobs.wgsl: m = max logit, d_v = (logits_v − m)/T, s = Σ exp(d_v),
// s1 = Σ exp(d_v)·d_v):
//   logp = d_tok − log s;  H = log s − s1/s
//   per token, where mask ≠ 0: the policy term (L, clipped, lower, kl, g = ∂L/∂logp) of
//     lib_policy_term.wgsl for U.mode (GSPO's s_b = Σ_a m·(logp − old)/max(n_b, 1) over the row,
//     GMPO's λ_b, Ā_b, w_b likewise); L ← w·L, g ← w·g with w = policy_is_weight (w_is; 1 for GMPO)
//   aggregation weights (aggregate.wgsl): w_pol with U.agg_pol (GSPO, SAPO: seq-mean-token-mean;
//     GMPO: seq-mean-token-mean-all-rows),
//     w with U.agg (entropy and KL); n_b = Σ_a m, N = Σ_b n_b, R = #{b : n_b > 0}
//   loss = Σ w_pol·L + kl_coef·Σ w·KL(logp − ref) − ent_coef·Σ w·H
//   gLogp = w_pol·g + w·(kl_grad·kl_coef) (has_kl);  gH = w·(−ent_coef) (ent_coef > 0)
//   grad[r,v] = (1/T)·[gLogp·(onehot_tok − p_v) − gH·p_v·(d_v − s1/s)]  (1 − p_tok as Σ_{v≠tok}e/s)
//   masked tokens and the rows outside the action window get a zero gradient.
//   policy_stats = [Σ w_pol·L, Σ m·clipped/N, Σ m·lower/N, Σ m·kl/N]; entropy = Σ w·H;
//   kl_loss = Σ w·KL (0 without has_kl); every statistic is 0 when N = 0.
// Reference: src/reference/actorLoss.ts (actorLossRef), composed of logprobsRef, policyLossRef,
//   aggregateRef, klRef, klGradRef, logprobsBackwardRef.
//
// Bindings, pack_inputs: 0 uniform K {n = B·A, has_is, has_ref}; 1 old_logprobs, 2 advantages,
//   3 action_mask, 4 is_weights (read when has_is), 5 ref_logprobs (read when has_ref), all (B,A)
//   f32; 6 packed (B,A,5) f32 rw = [old, adv, mask, w_is (1 without), ref (0 without)].
//   One thread per token.
// Bindings, actor_loss: 0 uniform U (below); 1 logits (B,S,V) f32; 2 tokens (B,A) i32;
//   3 packed (B,A,5) f32; 4 grad_logits (B,S,V) f32 rw; 5 logprobs (B,A) f32 rw;
//   6 policy_stats (4) f32 rw; 7 entropy (1) f32 rw; 8 kl_loss (1) f32 rw.
// Layout, actor_loss: ONE workgroup of WG threads, thread b owns sequence b (B ≤ WG, checked on
//   the host): its A tokens' softmax rows serially (v in order), so the row sums (n_b, GSPO's s_b)
//   need no reduction; N and R, then the statistics, are summed over b in order by thread 0
//   between barriers (deterministic), one quantity at a time through `part` (WG floats): workgroup
//   memory is zero-initialised, and SwiftShader compiles that per word (8·WG words took 1.7 s of
//   this kernel's 1.9 s to build). Used for V ≤ 256 and B ≤ WG; otherwise the host composes the
//   per-op kernels. Clip-Cov and KL-Cov also take the per-op kernels: their token choice
//   (cov_select.wgsl) needs every row's new log-prob before any row's loss, and this kernel
//   finishes each row in one thread (it passes picked = false; the host never sends those modes).

const WG: u32 = 256u;
const IN_STRIDE: u32 = 5u;
const IN_OLD: u32 = 0u;
const IN_ADV: u32 = 1u;
const IN_MASK: u32 = 2u;
const IN_IS: u32 = 3u;
const IN_REF: u32 = 4u;
const NPART: u32 = 8u; // row partials: n_b, has tokens, Σw_pol·L, Σm·clipped, Σm·lower, Σm·kl, Σw·H, Σw·KL

struct PackParams {
  n: u32,
  has_is: u32,
  has_ref: u32,
}

struct LossParams {
  B: u32,
  S: u32,
  A: u32,
  V: u32,
  start: u32,
  temperature: f32,
  mode: u32,
  agg_pol: u32,
  agg: u32,
  clip_low: f32,
  clip_high: f32,
  clip_c: f32,
  has_dual: u32,
  ent_coef: f32,
  has_kl: u32,
  kl_coef: f32,
  kl_est: u32,
  tau_pos: f32,
  tau_neg: f32,
}

@group(0) @binding(0) var<uniform> K: PackParams;
@group(0) @binding(0) var<uniform> U: LossParams;
// pack_inputs
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> advantages: array<f32>;
@group(0) @binding(3) var<storage, read> action_mask: array<f32>;
@group(0) @binding(4) var<storage, read> is_weights: array<f32>;
@group(0) @binding(5) var<storage, read> ref_logprobs: array<f32>;
@group(0) @binding(6) var<storage, read_write> packed_out: array<f32>;
// actor_loss
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> tokens: array<i32>;
@group(0) @binding(3) var<storage, read> packed: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_logits: array<f32>;
@group(0) @binding(5) var<storage, read_write> logprobs: array<f32>;
@group(0) @binding(6) var<storage, read_write> policy_stats: array<f32>;
@group(0) @binding(7) var<storage, read_write> entropy_out: array<f32>;
@group(0) @binding(8) var<storage, read_write> kl_out: array<f32>;

// @include lib_kl

@compute @workgroup_size(64)
fn pack_inputs(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= K.n) { return; }
  let o = i * IN_STRIDE;
  packed_out[o + IN_OLD] = old_logprobs[i];
  packed_out[o + IN_ADV] = advantages[i];
  packed_out[o + IN_MASK] = action_mask[i];
  packed_out[o + IN_IS] = select(1.0, is_weights[i], K.has_is == 1u);
  packed_out[o + IN_REF] = select(0.0, ref_logprobs[i], K.has_ref == 1u);
}

var<workgroup> part: array<f32, WG>; // one row partial per thread, one quantity at a time
var<workgroup> totals: array<f32, 2>; // N, R

/** Σ_b part[b] over the B rows in order, by thread 0 (the others return 0). */
fn sum_rows(b: u32, x: f32) -> f32 {
  part[b] = x;
  workgroupBarrier();
  var s = 0.0;
  if (b == 0u) {
    for (var r = 0u; r < U.B; r++) { s += part[r]; }
  }
  workgroupBarrier();
  return s;
}

// @include lib_row_stats

/** ∂aggregate/∂x at a token with mask m in a row of n_b tokens (aggregate.wgsl's weights). */
fn agg_weight(agg: u32, m: f32, n_b: f32) -> f32 {
  if (m == 0.0 || n_b == 0.0) { return 0.0; }
  switch agg {
    case AGG_TOKEN_MEAN: { return m / totals[0]; }
    case AGG_SEQ_MEAN_TOKEN_MEAN: { return m / (n_b * totals[1]); }
    case AGG_SEQ_MEAN_TOKEN_SUM: { return m / totals[1]; }
    case AGG_SEQ_MEAN_TOKEN_SUM_NORM: { return m / f32(U.B * U.A); }
    case AGG_SEQ_MEAN_TOKEN_MEAN_ALL_ROWS: { return m / (n_b * f32(U.B)); }
    case AGG_SEQ_MEAN_TOKEN_SUM_NORM_VERL, default: { return m / f32(U.A); }
  }
}

// @include lib_policy_term

fn zero_row(r: u32) {
  for (var v = 0u; v < U.V; v++) { grad_logits[r * U.V + v] = 0.0; }
}

@compute @workgroup_size(WG)
fn actor_loss(@builtin(local_invocation_index) b: u32) {
  let A = U.A;
  let V = U.V;
  let T = U.temperature;
  let owns = b < U.B;
  // Pass 1: log-probs of the row's tokens, n_b and GSPO's / GMPO's row sums.
  let clip = PolicyClip(U.mode, U.clip_low, U.clip_high, U.clip_c, U.has_dual != 0u, U.tau_pos, U.tau_neg, 0.0);
  let geo = U.mode == LOSS_MODE_GEO_MEAN;
  var n_b = 0.0;
  var lr = 0.0;
  var adv_sum = 0.0;
  var log_w = 0.0;
  if (owns) {
    for (var a = 0u; a < A; a++) {
      let i = b * A + a;
      let base = (b * U.S + U.start + a) * V;
      let tok = u32(clamp(tokens[i], 0, i32(V) - 1));
      let st = row_stats_serial(base, tok, U.V, U.temperature);
      let lp = (logits[base + tok] - st.m) / T - log(st.s);
      logprobs[i] = lp;
      let m = packed[i * IN_STRIDE + IN_MASK];
      if (m != 0.0) {
        let old = packed[i * IN_STRIDE + IN_OLD];
        n_b += m;
        if (geo) {
          let adv = packed[i * IN_STRIDE + IN_ADV];
          lr += m * geo_token_log_ratio(clip, old, lp, adv);
          adv_sum += m * adv;
          log_w += m * log(packed[i * IN_STRIDE + IN_IS] + 1e-10);
        } else {
          lr += m * (lp - old);
        }
      }
    }
  }
  let n_total = sum_rows(b, n_b);
  let rows_total = sum_rows(b, select(0.0, 1.0, n_b > 0.0));
  if (b == 0u) {
    totals[0] = n_total;
    totals[1] = rows_total;
  }
  workgroupBarrier();
  // Pass 2: the loss terms, their row sums, and the gradient rows.
  var acc: array<f32, NPART>;
  if (owns) {
    let n1 = max(n_b, 1.0);
    let row = PolicyRow(lr / n1, adv_sum / n1, select(1.0, exp(log_w / n1), geo));
    for (var t = 0u; t < U.start; t++) { zero_row(b * U.S + t); }
    for (var t = U.start + A; t < U.S; t++) { zero_row(b * U.S + t); }
    for (var a = 0u; a < A; a++) {
      let i = b * A + a;
      let r = b * U.S + U.start + a;
      let base = r * V;
      let m = packed[i * IN_STRIDE + IN_MASK];
      if (m == 0.0) {
        zero_row(r);
        continue;
      }
      let tok = u32(clamp(tokens[i], 0, i32(V) - 1));
      let st = row_stats_serial(base, tok, U.V, U.temperature);
      let lp = logprobs[i];
      let ent = log(st.s) - st.s1 / st.s;
      let pt = policy_term(clip, packed[i * IN_STRIDE + IN_OLD], lp, packed[i * IN_STRIDE + IN_ADV], row, false);
      let w_is = policy_is_weight(U.mode, packed[i * IN_STRIDE + IN_IS]);
      let w_pol = agg_weight(U.agg_pol, m, n_b);
      let w = agg_weight(U.agg, m, n_b);
      acc[2] += w_pol * (w_is * pt.loss);
      acc[3] += m * pt.clipped;
      acc[4] += m * pt.lower;
      acc[5] += m * pt.kl;
      acc[6] += w * ent;
      var g_logp = w_pol * (w_is * pt.g);
      if (U.has_kl != 0u) {
        let d = lp - packed[i * IN_STRIDE + IN_REF];
        acc[7] += w * kl_value(d, U.kl_est);
        g_logp += w * (kl_grad(d, U.kl_est) * U.kl_coef);
      }
      var g_ent = 0.0;
      if (U.ent_coef > 0.0) { g_ent = w * -U.ent_coef; }
      let mean_d = st.s1 / st.s;
      for (var v = 0u; v < V; v++) {
        let d = (logits[base + v] - st.m) / T;
        let p = exp(d) / st.s;
        var onehot_minus_p = -p;
        if (v == tok) { onehot_minus_p = st.other / st.s; }
        grad_logits[base + v] = (g_logp * onehot_minus_p - g_ent * p * (d - mean_d)) / T;
      }
    }
  }
  var sum: array<f32, NPART>;
  for (var k = 2u; k < NPART; k++) { sum[k] = sum_rows(b, acc[k]); }
  if (b == 0u) {
    let n = totals[0];
    let inv_n = select(0.0, 1.0 / n, n > 0.0);
    policy_stats[0] = sum[2];
    policy_stats[1] = sum[3] * inv_n;
    policy_stats[2] = sum[4] * inv_n;
    policy_stats[3] = sum[5] * inv_n;
    entropy_out[0] = sum[6];
    kl_out[0] = sum[7];
  }
}
