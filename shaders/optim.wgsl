// Global gradient L2 norm (two-pass deterministic reduction) and one fused AdamW step over a
// model's flat parameter buffer.
//
// Math: norm = sqrt(Σ_i g_i²)
//   AdamW (t = step, 1-based; bc1 = 1 − β1^t, bc2 = 1 − β2^t computed on the host in float64):
//   skip: if use_norm = 1 and norm is NaN or ±inf, the step changes nothing (params, m, v kept),
//         as verl skips optimizer.step() on a non-finite grad norm; the host counts it.
//   clip = min(1, max_norm/(norm + 1e-6)) if use_norm = 1 else 1;  g = grads·clip
//   m ← β1m + (1−β1)g;  v ← β2v + (1−β2)g²
//   p ← p − lr·((m/bc1)/(sqrt(v/bc2) + eps) + wd·decay_mask·p)
// Reference: src/reference/nn/optim.ts (gradNormRef, adamwRef).
//
// Bindings:
//   norm_partial: 0 uniform {n, groups}; 1 grads (n) f32; 2 partial (groups) f32 rw
//   norm_final:   0 uniform {n = groups}; 1 partial (groups) f32; 2 norm (1) f32 rw
//   norm_partial_serial, norm_final_serial: as norm_partial, norm_final (partial has `groups`
//                 entries, one per thread)
//   adamw:        0 uniform {n, lr, beta1, beta2, eps, wd, bc1, bc2, max_norm, use_norm};
//                 1 params (n) rw; 2 grads (n); 3 m (n) rw; 4 v (n) rw; 5 decay_mask (n); 6 norm (1)
//                 (any buffer when use_norm = 0)
// Layout: norm_partial: `groups` workgroups of WG threads; thread t sums squares of elements
//   t, t + groups·WG, … then a fixed tree per workgroup. norm_final: one workgroup sums the
//   partials the same way, so the result does not depend on timing. adamw: one thread per
//   element; the grid may be 2-D: i = gid.x + gid.y·num_workgroups.x·WG.
//   CPU adapters (where a barrier costs a coroutine switch per 4 lanes) take the barrier-free pair:
//   norm_partial_serial: `groups` threads (WG per workgroup), thread t sums squares of elements
//   t, t + groups, … in order; norm_final_serial: one thread adds the partials in order.

const WG: u32 = 256u; // a power of two (tree reduction)

struct NormParams {
  n: u32,
  groups: u32,
}

struct AdamParams {
  n: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  wd: f32,
  bc1: f32,
  bc2: f32,
  max_norm: f32,
  use_norm: u32,
}

@group(0) @binding(0) var<uniform> NP: NormParams;
@group(0) @binding(0) var<uniform> AP: AdamParams;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read_write> params: array<f32>;
@group(0) @binding(2) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<storage, read> grads: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> decay_mask: array<f32>;
@group(0) @binding(6) var<storage, read> norm: array<f32>;

var<workgroup> red: array<f32, WG>;

fn tree_sum(lid: u32, x: f32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s /= 2u) {
    if (lid < s) { red[lid] += red[lid + s]; }
    workgroupBarrier();
  }
  return red[0];
}

@compute @workgroup_size(WG)
fn norm_partial(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  var s = 0.0;
  for (var i = wid.x * WG + lid.x; i < NP.n; i += NP.groups * WG) {
    let g = values[i];
    s = fma(g, g, s);
  }
  let total = tree_sum(lid.x, s);
  if (lid.x == 0u) { sums[wid.x] = total; }
}

@compute @workgroup_size(WG)
fn norm_final(@builtin(local_invocation_id) lid: vec3u) {
  var s = 0.0;
  for (var i = lid.x; i < NP.n; i += WG) { s += values[i]; }
  let total = tree_sum(lid.x, s);
  if (lid.x == 0u) { sums[0] = sqrt(total); }
}

@compute @workgroup_size(WG)
fn norm_partial_serial(@builtin(global_invocation_id) gid: vec3u) {
  let t = gid.x;
  if (t >= NP.groups) { return; }
  var s = 0.0;
  for (var i = t; i < NP.n; i += NP.groups) {
    let g = values[i];
    s = fma(g, g, s);
  }
  sums[t] = s;
}

@compute @workgroup_size(1)
fn norm_final_serial() {
  var s = 0.0;
  for (var i = 0u; i < NP.n; i++) { s += values[i]; }
  sums[0] = sqrt(s);
}

// NaN or ±inf by the bit pattern (all exponent bits set): comparisons such as x != x may be folded
// away by compilers that assume finite math.
fn not_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u;
}

@compute @workgroup_size(WG)
fn adamw(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= AP.n) { return; }
  var clip = 1.0;
  if (AP.use_norm == 1u) {
    let nrm = norm[0];
    if (not_finite(nrm)) { return; }
    clip = min(1.0, AP.max_norm / (nrm + 1e-6));
  }
  let g = grads[i] * clip;
  let mi = AP.beta1 * m[i] + (1.0 - AP.beta1) * g;
  let vi = AP.beta2 * v[i] + (1.0 - AP.beta2) * g * g;
  m[i] = mi;
  v[i] = vi;
  let p = params[i];
  params[i] = p - AP.lr * ((mi / AP.bc1) / (sqrt(vi / AP.bc2) + AP.eps) + AP.wd * decay_mask[i] * p);
}
