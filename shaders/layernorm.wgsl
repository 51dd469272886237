// LayerNorm over the last dim D of x (M,D), and its backward.
//
// Math: mean = Σ_d x/D; var = Σ_d (x − mean)²/D (biased, two passes for accuracy);
//   rstd = 1/sqrt(var + eps); x̂ = (x − mean)·rstd; y = x̂·gamma + beta.
// Backward with g = gradY·gamma:
//   gradX = rstd·(g − mean_d(g) − x̂·mean_d(g·x̂)), written, or added to grad_x when accumulate = 1
//   (the residual stream's gradient: the same bits as a separate axpy(1, gradX, grad_x));
//   gradGamma[d] += Σ_rows gradY·x̂; gradBeta[d] += Σ_rows gradY (fixed row order: deterministic).
// Reference: src/reference/nn/layernorm.ts (layerNormRef, layerNormBackwardRef).
//
// Bindings (all uniform P at 0):
//   layernorm_forward:   1 x (M,D), 2 gamma (D), 3 beta (D), 4 mean_out (M) rw, 5 rstd_out (M) rw, 6 y (M,D) rw
//   layernorm_backward:  1 x (M,D), 2 gamma (D), 3 grad_y (M,D), 4 mean (M), 5 rstd (M), 6 grad_x (M,D) rw
//   layernorm_params:    1 x (M,D), 2 grad_gamma (D) rw, 3 grad_y (M,D), 4 mean (M), 5 rstd (M), 6 grad_beta (D) rw
//   all f32.
// Layout: forward/backward: one workgroup of WG threads per row (grid M); threads stride over D
//   and reduce through workgroup memory with a fixed tree. params: COLS×LANES threads, one column
//   per x-thread, lanes stride over rows then a fixed tree over lanes (grid ceil(D/COLS)).
//   params_serial (CPU adapters, where barriers cost more than the work): one thread per column
//   sums the rows in order, WG threads per group, grid ceil(D/WG); same bindings as params.

const WG: u32 = 64u; // a power of two (tree reduction)
const COLS: u32 = 16u;
const LANES: u32 = 16u; // a power of two

struct Params {
  M: u32,
  D: u32,
  eps: f32,
  accumulate: u32, // backward: add gradX into grad_x instead of writing it
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read_write> grad_gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read> grad_y: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean_out: array<f32>;
@group(0) @binding(4) var<storage, read> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> rstd_out: array<f32>;
@group(0) @binding(5) var<storage, read> rstd: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
@group(0) @binding(6) var<storage, read_write> grad_x: array<f32>;
@group(0) @binding(6) var<storage, read_write> grad_beta: array<f32>;

var<workgroup> red: array<f32, WG>;
var<workgroup> red2: array<f32, WG>;
var<workgroup> col_a: array<f32, COLS * LANES>; // (LANES, COLS)
var<workgroup> col_b: array<f32, COLS * LANES>;

/** Workgroup sum of v (every thread gets the total). */
fn row_sum(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s /= 2u) {
    if (lid < s) { red[lid] += red[lid + s]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier(); // red is reused by the next call
  return total;
}

/** Two workgroup sums at once. */
fn row_sum2(lid: u32, v: vec2f) -> vec2f {
  red[lid] = v.x;
  red2[lid] = v.y;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s /= 2u) {
    if (lid < s) {
      red[lid] += red[lid + s];
      red2[lid] += red2[lid + s];
    }
    workgroupBarrier();
  }
  let total = vec2f(red[0], red2[0]);
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(WG)
fn layernorm_forward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid3: vec3u) {
  let row = wid.x;
  let lid = lid3.x;
  let base = row * P.D;
  var s = 0.0;
  for (var d = lid; d < P.D; d += WG) { s += x[base + d]; }
  let mu = row_sum(lid, s) / f32(P.D);
  var q = 0.0;
  for (var d = lid; d < P.D; d += WG) {
    let c = x[base + d] - mu;
    q += c * c;
  }
  let r = inverseSqrt(row_sum(lid, q) / f32(P.D) + P.eps);
  for (var d = lid; d < P.D; d += WG) { y[base + d] = (x[base + d] - mu) * r * gamma[d] + beta[d]; }
  if (lid == 0u) {
    mean_out[row] = mu;
    rstd_out[row] = r;
  }
}

@compute @workgroup_size(WG)
fn layernorm_backward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid3: vec3u) {
  let row = wid.x;
  let lid = lid3.x;
  let base = row * P.D;
  let mu = mean[row];
  let r = rstd[row];
  var acc = vec2f(0.0);
  for (var d = lid; d < P.D; d += WG) {
    let g = grad_y[base + d] * gamma[d];
    acc += vec2f(g, g * (x[base + d] - mu) * r);
  }
  let sums = row_sum2(lid, acc) / f32(P.D);
  for (var d = lid; d < P.D; d += WG) {
    let xh = (x[base + d] - mu) * r;
    let gx = r * (grad_y[base + d] * gamma[d] - sums.x - xh * sums.y);
    if (P.accumulate == 1u) { grad_x[base + d] += gx; } else { grad_x[base + d] = gx; }
  }
}

@compute @workgroup_size(COLS, LANES)
fn layernorm_params(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let d = wid.x * COLS + lid.x;
  var sg = 0.0; // Σ gradY·x̂
  var sb = 0.0; // Σ gradY
  if (d < P.D) {
    for (var m = lid.y; m < P.M; m += LANES) {
      let gy = grad_y[m * P.D + d];
      sg += gy * (x[m * P.D + d] - mean[m]) * rstd[m];
      sb += gy;
    }
  }
  let slot = lid.y * COLS + lid.x;
  col_a[slot] = sg;
  col_b[slot] = sb;
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s /= 2u) {
    if (lid.y < s) {
      col_a[slot] += col_a[slot + s * COLS];
      col_b[slot] += col_b[slot + s * COLS];
    }
    workgroupBarrier();
  }
  if (lid.y == 0u && d < P.D) {
    grad_gamma[d] += col_a[lid.x];
    grad_beta[d] += col_b[lid.x];
  }
}

@compute @workgroup_size(WG)
fn params_serial(@builtin(global_invocation_id) gid: vec3u) {
  let d = gid.x;
  if (d >= P.D) { return; }
  var sg = 0.0; // Σ gradY·x̂
  var sb = 0.0; // Σ gradY
  for (var m = 0u; m < P.M; m++) {
    let gy = grad_y[m * P.D + d];
    sg += gy * (x[m * P.D + d] - mean[m]) * rstd[m];
    sb += gy;
  }
  grad_gamma[d] += sg;
  grad_beta[d] += sb;
}
