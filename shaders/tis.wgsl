// Token-level truncated importance sampling weights for the rollout-vs-old mismatch
// ("three policies"; verl rollout correction, token TIS, rollout_is_weights).
//
// Math per token (m = mask ∈ {0,1}):
//   w = m · min(exp(clamp(old − rollout, −20, 20)), cap)      (0 where m = 0, whatever the inputs hold)
// The weights are constants for the loss (stop-gradient): policy_loss.wgsl multiplies them in.
// Reference: src/reference/policyLoss.ts (tisWeightsRef).
//
// Bindings: 0 uniform P {n: element count, cap: f32 > 0}, 1 old_logprobs (n) f32,
//           2 rollout_logprobs (n) f32, 3 mask (n) f32, 4 weights (n) f32 out
// Layout: one thread per element, WG threads per workgroup, 1-D grid.

const WG: u32 = 64u;

struct Params {
  n: u32,
  cap: f32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> rollout_logprobs: array<f32>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> weights: array<f32>;

@compute @workgroup_size(WG)
fn tis_weights(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= P.n) { return; }
  let m = mask[i];
  var w = 0.0;
  if (m != 0.0) {
    let d = clamp(old_logprobs[i] - rollout_logprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    w = m * min(exp(d), P.cap);
  }
  weights[i] = w;
}

// ---------------------------------------------------------------------------------------------
// rollout_correction: verl's rollout correction (verl-project/verl v0.9.0,
// verl/trainer/ppo/rollout_corr_helper.py) and OpenRLHF's TIS lower bound, one workgroup per row.
// Reference: src/reference/rolloutCorrection.ts (rolloutCorrectionRef), whose header cites the lines.
//
// Math per row b, lr_t = old_t − rollout_t over the row's tokens with m_t ≠ 0:
//   IS weights (is_level ≠ IS_LEVEL_OFF), written to `weights`:
//     ρ_t = m_t·exp(clamp(lr_t, ±20))             (IS_LEVEL_TOKEN)
//     ρ_t = m_t·exp(clamp(Σ_s m_s·lr_s, ±20))     (IS_LEVEL_SEQUENCE: the product of the token ratios)
//     w_t = ρ_t·[is_lower ≤ ρ_t ≤ is_upper]       (has_is_lower: IcePop band, 0 outside)
//     w_t = clamp(ρ_t, tis_lower, is_upper)       (otherwise: TIS; tis_lower = 0 unless OpenRLHF's low bound)
//   Rejection (rs_count ≤ 4 criteria, all must pass), written to `keep` = m_t · Π_j pass_j:
//     lr' = clamp(lr, ±20); k1 = −lr'; k2 = ½·lr'²; k3 = exp(lr') − 1 − lr'
//     token_k*: the token's k; seq_sum_k*: Σ m·k; seq_mean_k*: Σ m·k / (Σ m + 1e-8);
//     seq_max_k*: max k over the row's tokens (0 on an empty row)
//     k1 options pass when lo_j ≤ stat ≤ hi_j (lo_j, hi_j = log of the ratio bounds, from the host);
//     k2 / k3 options when stat ≤ hi_j.
// Masked positions get weight 0 and keep 0 whatever the inputs hold (NaN/Inf never read).
//
// Bindings: 0 uniform RcParams (below), 1 old_logprobs (B, A) f32, 2 rollout_logprobs (B, A) f32,
//           3 mask (B, A) f32, 4 weights (B, A) f32 out (not written when is_level = IS_LEVEL_OFF),
//           5 keep (B, A) f32 out
// Layout: one workgroup of WG threads per row (grid B); each thread walks a strided slice of the
// row, and fixed-order tree reductions (lib_tree_sum, and tree_max below on the same array) give
// the row's sums and maxima, so the result is deterministic.

struct RcParams {
  B: u32,
  A: u32,
  is_level: u32,
  is_upper: f32,
  is_lower: f32,
  has_is_lower: u32,
  tis_lower: f32,
  rs_count: u32,
  rs0: u32,
  rs1: u32,
  rs2: u32,
  rs3: u32,
  lo0: f32,
  lo1: f32,
  lo2: f32,
  lo3: f32,
  hi0: f32,
  hi1: f32,
  hi2: f32,
  hi3: f32,
}

@group(0) @binding(0) var<uniform> R: RcParams;
@group(0) @binding(5) var<storage, read_write> keep: array<f32>;

// @include lib_tree_sum

const RS_MAX: u32 = 4u;

fn rs_code(j: u32) -> u32 {
  return select(select(select(R.rs3, R.rs2, j == 2u), R.rs1, j == 1u), R.rs0, j == 0u);
}
fn rs_lo(j: u32) -> f32 {
  return select(select(select(R.lo3, R.lo2, j == 2u), R.lo1, j == 1u), R.lo0, j == 0u);
}
fn rs_hi(j: u32) -> f32 {
  return select(select(select(R.hi3, R.hi2, j == 2u), R.hi1, j == 1u), R.hi0, j == 0u);
}

// exp(l) − 1 − l with l = lr' clamped: below |l| = 0.5 by its Taylor series to l⁸ (relative error
// < 1e-6), since the direct form loses every digit to cancellation in float32 for |l| ≲ 1e-3, where
// rejection thresholds on seq_mean_k3 sit.
fn rs_k3(l: f32) -> f32 {
  if (abs(l) < 0.5) {
    return l * l * (0.5 + l * (1.0 / 6.0 + l * (1.0 / 24.0 + l * (1.0 / 120.0 + l * (1.0 / 720.0 + l * (1.0 / 5040.0 + l / 40320.0))))));
  }
  return exp(l) - 1.0 - l;
}

/** The divergence an option reads for one token's log-ratio. */
fn rs_divergence(code: u32, lr: f32) -> f32 {
  let l = clamp(lr, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
  switch code {
    case RS_TOKEN_K1, RS_SEQ_SUM_K1, RS_SEQ_MEAN_K1: { return -l; }
    case RS_TOKEN_K2, RS_SEQ_SUM_K2, RS_SEQ_MEAN_K2, RS_SEQ_MAX_K2: { return 0.5 * l * l; }
    default: { return rs_k3(l); }
  }
}

fn rs_is_k1(code: u32) -> bool {
  return code == RS_TOKEN_K1 || code == RS_SEQ_SUM_K1 || code == RS_SEQ_MEAN_K1;
}

fn rs_pass(j: u32, stat: f32) -> bool {
  if (rs_is_k1(rs_code(j))) { return stat >= rs_lo(j) && stat <= rs_hi(j); }
  return stat <= rs_hi(j);
}

@compute @workgroup_size(WG)
fn rollout_correction(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * R.A;
  // Pass 1: the row's Σ m·lr (sequence IS), Σ m, and per criterion Σ m·k and max k.
  var seq = 0.0;
  var cnt = 0.0;
  var sums: array<f32, RS_MAX>;
  var maxes: array<f32, RS_MAX>;
  for (var j = 0u; j < RS_MAX; j++) { maxes[j] = -3.4e38; }
  for (var a = lid; a < R.A; a += WG) {
    let m = mask[base + a];
    if (m != 0.0) {
      let lr = old_logprobs[base + a] - rollout_logprobs[base + a];
      seq += m * lr;
      cnt += m;
      for (var j = 0u; j < R.rs_count; j++) {
        let v = rs_divergence(rs_code(j), lr);
        sums[j] += m * v;
        maxes[j] = max(maxes[j], v);
      }
    }
  }
  let seq_total = tree_sum(lid, seq);
  let cnt_total = tree_sum(lid, cnt);
  var row_stat: array<f32, RS_MAX>;
  for (var j = 0u; j < R.rs_count; j++) {
    let s = tree_sum(lid, sums[j]);
    let mx = tree_max(lid, maxes[j]);
    switch rs_code(j) {
      case RS_SEQ_SUM_K1, RS_SEQ_SUM_K2, RS_SEQ_SUM_K3: { row_stat[j] = s; }
      case RS_SEQ_MEAN_K1, RS_SEQ_MEAN_K2, RS_SEQ_MEAN_K3: { row_stat[j] = s / (cnt_total + 1e-8); }
      case RS_SEQ_MAX_K2, RS_SEQ_MAX_K3: { row_stat[j] = select(0.0, mx, cnt_total > 0.0); }
      default: { row_stat[j] = 0.0; } // token level: read per token below
    }
  }
  // Pass 2: each token's weight and keep.
  for (var a = lid; a < R.A; a += WG) {
    let i = base + a;
    let m = mask[i];
    var w = 0.0;
    var k = 0.0;
    if (m != 0.0) {
      let lr = old_logprobs[i] - rollout_logprobs[i];
      let log_rho = select(select(0.0, seq_total, R.is_level == IS_LEVEL_SEQUENCE), lr, R.is_level == IS_LEVEL_TOKEN);
      let rho = m * exp(clamp(log_rho, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP));
      if (R.has_is_lower != 0u) {
        w = select(0.0, rho, rho >= R.is_lower && rho <= R.is_upper);
      } else {
        w = max(min(rho, R.is_upper), R.tis_lower);
      }
      k = m;
      for (var j = 0u; j < R.rs_count; j++) {
        let code = rs_code(j);
        let token_level = code == RS_TOKEN_K1 || code == RS_TOKEN_K2 || code == RS_TOKEN_K3;
        let stat = select(row_stat[j], rs_divergence(code, lr), token_level);
        if (!rs_pass(j, stat)) { k = 0.0; }
      }
    }
    if (R.is_level != IS_LEVEL_OFF) { weights[i] = w; }
    keep[i] = k;
  }
}
