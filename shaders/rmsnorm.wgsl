// RMSNorm over the last dim D of x (M,D) and its backward (Llama, Qwen2, Qwen3; Qwen3's per-head
// q_norm/k_norm are the same rows with M = tokens·heads, D = head_dim).
//
// Math (transformers' LlamaRMSNorm, in this order):
//   r = inverseSqrt(Σ_d x²/D + eps);  y = w·(x·r)
// Backward, with g = gradY:
//   dot = Σ_d g·w·x;  c = r³·dot/D;  gradX = (r·g)·w − c·x, written, or added to grad_x when
//   accumulate = 1 (the residual stream's gradient, the bits of a separate add);
//   gradW[d] += Σ_rows g·x·r, rows summed in a fixed order (deterministic, no atomics).
// Reference: src/reference/nn/rmsnorm.ts (rmsNormRef, rmsNormBackwardRef).
//
// Bindings (uniform P at 0, all f32):
//   rmsnorm_forward, rmsnorm_rows_forward:   1 x (M,D), 2 weight (D), 3 y_out (M,D) rw, 4 rstd_out (M) rw
//   rmsnorm_backward, rmsnorm_rows_backward: 1 x (M,D), 2 weight (D), 3 grad_y (M,D), 4 rstd (M),
//                                            5 grad_x (M,D) rw
//   wgrad_partial: 1 x (M,D), 2 gy (M,D), 3 rs (M), 4 partial (blocks,D) rw
//   wgrad_serial:  1 x (M,D), 2 gy (M,D), 3 rs (M), 4 grad_w (D) rw
//   wgrad_final:   1 partial_in (blocks,D), 2 grad_w_sum (D) rw
// Layout:
//   rmsnorm_forward / rmsnorm_backward: one workgroup of WG threads per row, threads stride over
//     D (consecutive threads read consecutive columns) and meet in a fixed tree; rows fold into a
//     2-D grid past 65535 workgroups: row = wid.x + wid.y·num_workgroups.x.
//   rmsnorm_rows_*: one thread per row, WG per workgroup, grid ⌈M/WG⌉ folded 2-D past 65535
//     (row = gid.x + gid.y·num_workgroups.x·WG); CPU adapters, where a barrier costs more than a
//     row of work.
//   wgrad_partial: COLS×LANES threads; workgroup (i, b) owns columns [i·COLS, (i+1)·COLS) of the
//     row block [b·BLOCK_ROWS, (b+1)·BLOCK_ROWS); lanes stride the block's rows, then a fixed tree
//     over lanes writes partial[b, d]. Grid (⌈D/COLS⌉, blocks).
//   wgrad_final: one thread per column adds partial[0..blocks) in order; WG per workgroup.
//   wgrad_serial (CPU adapters): one thread per column sums all rows in order; WG per workgroup.

const WG: u32 = 64u; // a power of two (tree reduction)
const COLS: u32 = 16u;
const LANES: u32 = 16u; // a power of two
const BLOCK_ROWS: u32 = 256u;

struct Params {
  M: u32,
  D: u32,
  eps: f32,
  accumulate: u32, // backward: add gradX into grad_x instead of writing it
  blocks: u32, // wgrad: row blocks of BLOCK_ROWS
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> partial_in: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> gy: array<f32>;
@group(0) @binding(2) var<storage, read_write> grad_w_sum: array<f32>;
@group(0) @binding(3) var<storage, read_write> y_out: array<f32>;
@group(0) @binding(3) var<storage, read> grad_y: array<f32>;
@group(0) @binding(3) var<storage, read> rs: array<f32>;
@group(0) @binding(4) var<storage, read_write> rstd_out: array<f32>;
@group(0) @binding(4) var<storage, read> rstd: array<f32>;
@group(0) @binding(4) var<storage, read_write> partial: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_w: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_x: array<f32>;

var<workgroup> red: array<f32, WG>;
var<workgroup> col: array<f32, COLS * LANES>; // (LANES, COLS)

/** Workgroup sum of v in a fixed tree (every thread gets the total). */
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

fn folded_row(wid: vec3u, nwg: vec3u) -> u32 {
  return wid.x + wid.y * nwg.x;
}

@compute @workgroup_size(WG)
fn rmsnorm_forward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid3: vec3u) {
  let row = folded_row(wid, nwg);
  if (row >= P.M) { return; } // uniform: the whole workgroup shares the row
  let lid = lid3.x;
  let base = row * P.D;
  var ss = 0.0;
  for (var d = lid; d < P.D; d += WG) {
    let v = x[base + d];
    ss += v * v;
  }
  let r = inverseSqrt(row_sum(lid, ss) / f32(P.D) + P.eps);
  for (var d = lid; d < P.D; d += WG) { y_out[base + d] = weight[d] * (x[base + d] * r); }
  if (lid == 0u) { rstd_out[row] = r; }
}

@compute @workgroup_size(WG)
fn rmsnorm_backward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid3: vec3u) {
  let row = folded_row(wid, nwg);
  if (row >= P.M) { return; }
  let lid = lid3.x;
  let base = row * P.D;
  let r = rstd[row];
  var dot = 0.0;
  for (var d = lid; d < P.D; d += WG) { dot += grad_y[base + d] * weight[d] * x[base + d]; }
  let c = r * r * r * row_sum(lid, dot) / f32(P.D);
  for (var d = lid; d < P.D; d += WG) {
    let gx = r * grad_y[base + d] * weight[d] - c * x[base + d];
    if (P.accumulate == 1u) { grad_x[base + d] += gx; } else { grad_x[base + d] = gx; }
  }
}

@compute @workgroup_size(WG)
fn rmsnorm_rows_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = gid.x + gid.y * nwg.x * WG;
  if (row >= P.M) { return; }
  let base = row * P.D;
  var ss = 0.0;
  for (var d = 0u; d < P.D; d++) {
    let v = x[base + d];
    ss += v * v;
  }
  let r = inverseSqrt(ss / f32(P.D) + P.eps);
  for (var d = 0u; d < P.D; d++) { y_out[base + d] = weight[d] * (x[base + d] * r); }
  rstd_out[row] = r;
}

@compute @workgroup_size(WG)
fn rmsnorm_rows_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = gid.x + gid.y * nwg.x * WG;
  if (row >= P.M) { return; }
  let base = row * P.D;
  let r = rstd[row];
  var dot = 0.0;
  for (var d = 0u; d < P.D; d++) { dot += grad_y[base + d] * weight[d] * x[base + d]; }
  let c = r * r * r * dot / f32(P.D);
  for (var d = 0u; d < P.D; d++) {
    let gx = r * grad_y[base + d] * weight[d] - c * x[base + d];
    if (P.accumulate == 1u) { grad_x[base + d] += gx; } else { grad_x[base + d] = gx; }
  }
}

@compute @workgroup_size(COLS, LANES)
fn wgrad_partial(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let d = wid.x * COLS + lid.x;
  let first = wid.y * BLOCK_ROWS;
  let end = min(first + BLOCK_ROWS, P.M);
  var s = 0.0;
  if (d < P.D) {
    for (var m = first + lid.y; m < end; m += LANES) { s += gy[m * P.D + d] * x[m * P.D + d] * rs[m]; }
  }
  let slot = lid.y * COLS + lid.x;
  col[slot] = s;
  workgroupBarrier();
  for (var k = LANES / 2u; k > 0u; k /= 2u) {
    if (lid.y < k) { col[slot] += col[slot + k * COLS]; }
    workgroupBarrier();
  }
  if (lid.y == 0u && d < P.D) { partial[wid.y * P.D + d] = col[lid.x]; }
}

@compute @workgroup_size(WG)
fn wgrad_final(@builtin(global_invocation_id) gid: vec3u) {
  let d = gid.x;
  if (d >= P.D) { return; }
  var s = 0.0;
  for (var b = 0u; b < P.blocks; b++) { s += partial_in[b * P.D + d]; }
  grad_w_sum[d] += s;
}

@compute @workgroup_size(WG)
fn wgrad_serial(@builtin(global_invocation_id) gid: vec3u) {
  let d = gid.x;
  if (d >= P.D) { return; }
  var s = 0.0;
  for (var m = 0u; m < P.M; m++) { s += gy[m * P.D + d] * x[m * P.D + d] * rs[m]; }
  grad_w[d] += s;
}
