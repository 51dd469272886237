// Temperature log-softmax gathered at the taken token, the entropy, and their gradient wrt logits.
//
// Math (per row r = (b, a), z = logits[r, :] / T, m = max_v logits[r, v], d_v = (logits_v − m) / T):
//   s = Σ_v exp(d_v),  s1 = Σ_v exp(d_v)·d_v,  p_v = exp(d_v) / s
//   logprobs[r] = d_tok − log s                       (= z_tok − logsumexp z)
//   entropy[r]  = log s − s1 / s                      (= logsumexp z − Σ p·z; both terms ≥ 0, no cancellation)
//   grad[r, v]  = (1/T)·[gLogp·(onehot_tok − p_v) − gEnt·p_v·(d_v − s1/s)]
// Shifting by the max in *logit* space before dividing by T keeps logits ±1e4 at T = 0.05 exact
// to float32 rounding of the difference (dividing first would lose ~1e-2 absolute at |z| = 2e5).
// For v = tok, 1 − p_tok is computed as Σ_{v≠tok} exp(d_v) / s so that a confident row keeps
// its small gradient to full relative precision.
// tok = clamp(tokens[r], 0, V − 1): an out-of-range id never reads outside the row (the
// reference clamps the same way; callers are expected to pass valid ids).
// Reference: src/reference/logprobs.ts (logprobsRef, logprobsBackwardRef).
//
// Bindings, logprobs_forward, rows_forward:  0 uniform P, 1 logits (B,A,V) f32, 2 tokens (B,A) i32,
//                              3 logprobs (B,A) f32 rw, 4 entropy (B,A) f32 rw
// Bindings, logprobs_backward, rows_backward: 0 uniform P, 1 logits (B,A,V) f32, 2 tokens (B,A) i32,
//                              3 grad_logprobs (B,A) f32, 4 grad_entropy (B,A) f32 (any buffer when
//                              P.has_grad_entropy = 0; it is then not read), 5 grad_logits (B,A,V) f32 rw
// Layout (logprobs_forward, logprobs_backward): one workgroup of WG threads (a power of two) per
//   row, grid (A, B); threads stride over V and combine with deterministic tree reductions in
//   workgroup memory. For large vocabularies.
// Layout (rows_forward, rows_backward): one thread per row r = b·A + a, WG per workgroup, grid
//   ⌈B·A/WG⌉ (2-D past 65535 groups); the sums run over v in order, no barriers. For V ≤ 256
//   (src/ops/logprobs.ts), where a workgroup's barriers cost more than the row.

const WG: u32 = 64u;

struct Params {
  A: u32,
  V: u32,
  temperature: f32,
  has_grad_entropy: u32,
  rows: u32, // B·A (the row kernels' bound)
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> tokens: array<i32>;
// Bindings 3 and 4 are declared per entry point (outputs of the forward, inputs of the backward);
// WGSL allows the same binding slot for variables that no single entry point both uses.
@group(0) @binding(3) var<storage, read_write> out_logprobs: array<f32>;
@group(0) @binding(4) var<storage, read_write> out_entropy: array<f32>;

// @include lib_tree_sum

// @include lib_row_stats

// Every thread of the workgroup must call this (it contains barriers); all get the same result.
fn row_stats(base: u32, tok: u32, lid: u32) -> RowStats {
  var m = logits[base]; // V ≥ 1; a real element avoids needing a lowest-f32 literal
  for (var v = lid; v < P.V; v += WG) { m = max(m, logits[base + v]); }
  m = tree_max(lid, m);

  var s = 0.0;
  var s1 = 0.0;
  var other = 0.0;
  for (var v = lid; v < P.V; v += WG) {
    let d = (logits[base + v] - m) / P.temperature;
    let e = exp(d);
    s += e;
    s1 += e * d;
    if (v != tok) { other += e; }
  }
  let sum = tree_sum(lid, s);
  let sum1 = tree_sum(lid, s1);
  return RowStats(m, sum, sum1, tree_sum(lid, other));
}

fn clamped_token(row: u32) -> u32 {
  return u32(clamp(tokens[row], 0, i32(P.V) - 1));
}

@compute @workgroup_size(WG)
fn logprobs_forward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = wid.y * P.A + wid.x;
  let base = row * P.V;
  let tok = clamped_token(row);
  let st = row_stats(base, tok, lid);
  if (lid == 0u) {
    let lse = log(st.s);
    out_logprobs[row] = (logits[base + tok] - st.m) / P.temperature - lse;
    out_entropy[row] = lse - st.s1 / st.s;
  }
}

@group(0) @binding(3) var<storage, read> grad_logprobs: array<f32>;
@group(0) @binding(4) var<storage, read> grad_entropy: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_logits: array<f32>;

@compute @workgroup_size(WG)
fn logprobs_backward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = wid.y * P.A + wid.x;
  let base = row * P.V;
  let tok = clamped_token(row);
  let st = row_stats(base, tok, lid);
  let g_logp = grad_logprobs[row];
  var g_ent = 0.0;
  if (P.has_grad_entropy != 0u) { g_ent = grad_entropy[row]; }
  let mean_d = st.s1 / st.s;
  for (var v = lid; v < P.V; v += WG) {
    let d = (logits[base + v] - st.m) / P.temperature;
    let p = exp(d) / st.s;
    var onehot_minus_p = -p;
    if (v == tok) { onehot_minus_p = st.other / st.s; }
    grad_logits[base + v] = (g_logp * onehot_minus_p - g_ent * p * (d - mean_d)) / P.temperature;
  }
}

// ---- one thread per row (small V) ----

fn row_index(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(WG)
fn rows_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = row_index(gid, nwg);
  if (row >= P.rows) { return; }
  let base = row * P.V;
  let tok = clamped_token(row);
  let st = row_stats_serial(base, tok, P.V, P.temperature);
  let lse = log(st.s);
  out_logprobs[row] = (logits[base + tok] - st.m) / P.temperature - lse;
  out_entropy[row] = lse - st.s1 / st.s;
}

@compute @workgroup_size(WG)
fn rows_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = row_index(gid, nwg);
  if (row >= P.rows) { return; }
  let base = row * P.V;
  let tok = clamped_token(row);
  let st = row_stats_serial(base, tok, P.V, P.temperature);
  let g_logp = grad_logprobs[row];
  var g_ent = 0.0;
  if (P.has_grad_entropy != 0u) { g_ent = grad_entropy[row]; }
  let mean_d = st.s1 / st.s;
  for (var v = 0u; v < P.V; v++) {
    let d = (logits[base + v] - st.m) / P.temperature;
    let p = exp(d) / st.s;
    var onehot_minus_p = -p;
    if (v == tok) { onehot_minus_p = st.other / st.s; }
    grad_logits[base + v] = (g_logp * onehot_minus_p - g_ent * p * (d - mean_d)) / P.temperature;
  }
}
