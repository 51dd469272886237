// Masked loss aggregation: per-row partial sums, then one finalising workgroup that turns them into
// the aggregate (channel 0), masked token means (channels 1..K−1) and the weights ∂aggregate/∂x.
//
// Math (mask m (B,A), per-token channels x_k (B,A)):
//   n_b = Σ_a m[b,a],  c_k[b] = Σ_a m[b,a]·x_k[b,a],  N = Σ_b n_b,  S = #{b : n_b > 0}
//   AGG_TOKEN_MEAN:               value = Σ_b c_0[b] / N,               w[b,a] = m[b,a] / N
//   AGG_SEQ_MEAN_TOKEN_MEAN:      value = Σ_{n_b>0} c_0[b]/n_b / S,     w[b,a] = m[b,a] / (n_b·S)
//   AGG_SEQ_MEAN_TOKEN_SUM_NORM:  value = Σ_b c_0[b] / (B·A),           w[b,a] = m[b,a] / (B·A)   (norm_scale per_seq)
//   AGG_SEQ_MEAN_TOKEN_SUM:       value = Σ_b c_0[b] / S,               w[b,a] = m[b,a] / S
//   AGG_SEQ_MEAN_TOKEN_SUM_NORM_VERL: value = Σ_b c_0[b] / A,          w[b,a] = m[b,a] / A       (norm_scale verl)
//   AGG_SEQ_MEAN_TOKEN_MEAN_ALL_ROWS: value = Σ_{n_b>0} c_0[b]/n_b / B, w[b,a] = m[b,a] / (n_b·B) (geo_mean: every row counted)
//   stats[0] = value; stats[k] = Σ_b c_k[b] / N for k ≥ 1 (clip fractions, approx KL);
//   every statistic and weight is 0 when its denominator is 0 (nothing unmasked).
// Masked positions contribute exactly 0 even when x holds NaN or Inf there.
// The AGG_* codes are generated from src/reference/kernelCodes.ts (AGG_CODE, aggCode) by the shader
// loader; verl core_algos.agg_loss is the source of the modes.
// Reference: src/reference/aggregate.ts (aggWeights, aggregateRef, maskedMeanRef).
//
// Row partials (B, ROW_STRIDE) f32 = [n_b, c_0[b], c_1[b], c_2[b], c_3[b]] (K ≤ 4 channels) are the
// contract with the loss kernels (policy_loss.wgsl, value_loss.wgsl), which write them fused with
// their per-token math; agg_rows writes them for a plain aggregate (K = 1).
//
// Bindings, agg_rows:     0 uniform R {B, A}, 1 x (B,A) f32, 2 mask (B,A) f32, 3 rows (B,5) f32 rw
// Bindings, agg_finalize: 0 uniform F {B, A, K, agg, scale_in_place}, 1 rows (B,5) f32,
//                         2 mask (B,A) f32, 3 stats (K) f32 rw,
//                         4 weighted (B,A) f32 rw: receives w (scale_in_place = 0), or is multiplied
//                           by w in place (scale_in_place = 1: a per-token gradient becomes ∂loss/∂x)
// Layout: agg_rows: one workgroup of WG threads per row (grid B), tree reduction over A.
//         agg_finalize: a single workgroup of WG_FINAL threads; tree reduction over B, then all
//         threads write the B·A weights. Both WG sizes must be powers of two.

const WG: u32 = 64u;
const WG_FINAL: u32 = 256u;
const ROW_STRIDE: u32 = 5u;

struct RowParams {
  B: u32,
  A: u32,
}

struct FinalParams {
  B: u32,
  A: u32,
  K: u32,
  agg: u32,
  scale_in_place: u32,
}

@group(0) @binding(0) var<uniform> R: RowParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> row_mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> rows_out: array<f32>;

// @include lib_tree_sum

@compute @workgroup_size(WG)
fn agg_rows(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  var n = 0.0;
  var c = 0.0;
  for (var a = lid; a < R.A; a += WG) {
    let m = row_mask[b * R.A + a];
    if (m != 0.0) {
      n += m;
      c += m * x[b * R.A + a];
    }
  }
  let total_n = tree_sum(lid, n);
  let total_c = tree_sum(lid, c);
  if (lid == 0u) {
    rows_out[b * ROW_STRIDE] = total_n;
    rows_out[b * ROW_STRIDE + 1u] = total_c;
  }
}

@group(0) @binding(0) var<uniform> F: FinalParams;
@group(0) @binding(1) var<storage, read> rows: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>;
@group(0) @binding(4) var<storage, read_write> weighted: array<f32>;

// Sums over rows: 0 N, 1 S (rows with tokens), 2 Σ row means of channel 0, 3..6 Σ c_k, reduced
// one at a time through `red` (WG_FINAL floats): workgroup memory is zero-initialised, and
// SwiftShader compiles that per word (7·WG_FINAL words took 1.3 s of this kernel's build).
const SUMS: u32 = 7u;
var<workgroup> red: array<f32, WG_FINAL>;
var<workgroup> scale: array<f32, 5>; // [1/N or 0, 1/S or 0, 1/(B·A), 1/A, 1/B]

/** lib_tree_sum's tree_sum over agg_finalize's WG_FINAL threads; every thread gets it. */
fn final_sum(lid: u32, x: f32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var stride = WG_FINAL / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { red[lid] += red[lid + stride]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(WG_FINAL)
fn agg_finalize(@builtin(local_invocation_index) lid: u32) {
  var acc: array<f32, SUMS>;
  for (var b = lid; b < F.B; b += WG_FINAL) {
    let n = rows[b * ROW_STRIDE];
    acc[0] += n;
    if (n > 0.0) {
      acc[1] += 1.0;
      acc[2] += rows[b * ROW_STRIDE + 1u] / n;
    }
    for (var k = 0u; k < F.K; k++) { acc[3u + k] += rows[b * ROW_STRIDE + 1u + k]; }
  }
  var total: array<f32, SUMS>;
  for (var j = 0u; j < min(SUMS, 3u + F.K); j++) { total[j] = final_sum(lid, acc[j]); }
  if (lid == 0u) {
    let inv_n = select(0.0, 1.0 / total[0], total[0] > 0.0);
    let inv_s = select(0.0, 1.0 / total[1], total[1] > 0.0);
    let inv_ba = select(0.0, 1.0 / f32(F.B * F.A), F.B * F.A > 0u);
    scale[0] = inv_n;
    scale[1] = inv_s;
    let inv_a = select(0.0, 1.0 / f32(F.A), F.A > 0u);
    scale[2] = inv_ba;
    scale[3] = inv_a;
    let inv_b = select(0.0, 1.0 / f32(F.B), F.B > 0u);
    scale[4] = inv_b;
    var value: f32;
    switch F.agg {
      case AGG_SEQ_MEAN_TOKEN_MEAN: { value = total[2] * inv_s; }
      case AGG_SEQ_MEAN_TOKEN_SUM_NORM: { value = total[3] * inv_ba; }
      case AGG_SEQ_MEAN_TOKEN_SUM: { value = total[3] * inv_s; }
      case AGG_SEQ_MEAN_TOKEN_SUM_NORM_VERL: { value = total[3] * inv_a; }
      case AGG_SEQ_MEAN_TOKEN_MEAN_ALL_ROWS: { value = total[2] * inv_b; }
      case AGG_TOKEN_MEAN, default: { value = total[3] * inv_n; }
    }
    stats[0] = value;
    for (var k = 1u; k < F.K; k++) { stats[k] = total[3u + k] * inv_n; }
  }
  workgroupBarrier();
  let inv_n = scale[0];
  let inv_s = scale[1];
  let inv_ba = scale[2];
  let inv_a = scale[3];
  let inv_b = scale[4];
  for (var i = lid; i < F.B * F.A; i += WG_FINAL) {
    let m = mask[i];
    var w = 0.0;
    if (m != 0.0) {
      switch F.agg {
        case AGG_SEQ_MEAN_TOKEN_MEAN: { w = m * inv_s / rows[(i / F.A) * ROW_STRIDE]; }
        case AGG_SEQ_MEAN_TOKEN_SUM_NORM: { w = m * inv_ba; }
        case AGG_SEQ_MEAN_TOKEN_SUM: { w = m * inv_s; }
        case AGG_SEQ_MEAN_TOKEN_SUM_NORM_VERL: { w = m * inv_a; }
        case AGG_SEQ_MEAN_TOKEN_MEAN_ALL_ROWS: { w = m * inv_b / rows[(i / F.A) * ROW_STRIDE]; }
        case AGG_TOKEN_MEAN, default: { w = m * inv_n; }
      }
    }
    if (F.scale_in_place != 0u) {
      // select, not w·g: a masked position must come out 0 whatever the gradient buffer held there
      weighted[i] = select(0.0, w * weighted[i], w != 0.0);
    } else {
      weighted[i] = w;
    }
  }
}
