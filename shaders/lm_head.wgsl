// The LM head's log-softmax over a large vocabulary, one block of logits at a time: temperature
// log-probability of the taken token, entropy, and their gradient wrt the logits, without ever
// holding the (N, V) logits. The host (src/ops/lmHead.ts) computes each block x = h·W_cᵀ (rows
// [n0, n0 + Nc), vocabulary columns [v0, v0 + Vc)) with the matmul op, then runs these kernels.
//
// Math, per row n (z = x / T; d = (x − M)/T with M a running max logit, in logit units so that
// logits of ±1e4 at T = 0.05 keep f32 precision; tok = clamp(tokens[n], 0, V − 1)):
//   running state (M, s = Σ e^d, s1 = Σ e^d·d, o = Σ_{v≠tok} e^d, x_tok), merged per block with the
//   block's own (M_c, s_c, s1_c, o_c) (online softmax): M' = max(M, M_c), a = e^{(M−M')/T},
//   a_c = e^{(M_c−M')/T}, s' = a·s + a_c·s_c, s1' = a·(s1 + s·(M−M')/T) + a_c·(s1_c + s_c·(M_c−M')/T),
//   o' = a·o + a_c·o_c.
//   After the last block: logS = log s, logprobs = (x_tok − M)/T − logS, entropy = logS − s1/s,
//   saved = [M, logS, s1/s, o/s]  (lse = M/T + logS, z̄ = Σ p·z = M/T + s1/s, 1 − p_tok = o/s).
//   head_grad, per element of a block: p = e^{d − logS},
//   x ← (gLogp·(1[v = tok] − p) − gEnt·p·(d − s1/s)) / T   in place (1 − p_tok taken as o/s, exact for confident rows).
//   head_place copies a (Nc, Vc) block into columns [v0, v0 + Vc) of an (N, V) logits matrix.
// Reference: src/reference/nn/chunkedLogprobs.ts (chunkedLogprobsRef, chunkedLogprobsBackwardRef),
//   over row parts src/reference/nn/headParts.ts.
//
// Bindings, head_stats: 0 uniform P, 1 logits (Nc, Vc) f32, 2 tokens (N) i32, 3 state (N, 5) f32 rw,
//   4 logprobs (N) rw, 5 entropy (N) rw, 6 saved (N, 4) rw
// Bindings, head_grad: 0 uniform P, 1 logits (Nc, Vc) f32 rw (→ gradient), 2 tokens, 3 saved (N, 4),
//   4 grad_logprobs (N), 5 grad_entropy (N) (any buffer when has_grad_entropy = 0; not read)
// Bindings, head_place: 0 uniform P, 1 block (Nc, Vc) f32, 2 dst (N, V) f32 rw
//   P {Vc, v0, n0, V, temperature, first, last, has_grad_entropy, total}
// Layout, head_stats: one workgroup of WG threads per row of the block (grid Nc, 2-D past 65535);
//   threads stride over the block's columns and combine with lib_tree_sum's fixed trees
//   (deterministic); thread 0 merges into the state.
// Layout, head_grad and head_place: one thread per element of the block, ⌈total/WG⌉ workgroups
//   (2-D past 65535).

const WG: u32 = 64u;

struct Params {
  Vc: u32,
  v0: u32,
  n0: u32,
  V: u32,
  temperature: f32,
  first: u32,
  last: u32,
  has_grad_entropy: u32,
  total: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> tokens: array<i32>;
@group(0) @binding(3) var<storage, read_write> state: array<f32>;
@group(0) @binding(4) var<storage, read_write> out_logprobs: array<f32>;
@group(0) @binding(5) var<storage, read_write> out_entropy: array<f32>;
@group(0) @binding(6) var<storage, read_write> out_saved: array<f32>;

// @include lib_tree_sum

fn token_of(n: u32) -> u32 {
  return u32(clamp(tokens[n], 0, i32(P.V) - 1));
}

@compute @workgroup_size(WG)
fn head_stats(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= P.total) { return; }
  let n = P.n0 + r;
  let base = r * P.Vc;
  let tok = token_of(n);
  // The block's column of the token, or Vc when the token lies outside the block.
  let local = select(P.Vc, tok - P.v0, tok >= P.v0 && tok < P.v0 + P.Vc);
  let T = P.temperature;
  var mx = logits[base];
  for (var v = lid; v < P.Vc; v += WG) { mx = max(mx, logits[base + v]); }
  let mc = tree_max(lid, mx);
  var s = 0.0;
  var s1 = 0.0;
  var o = 0.0;
  for (var v = lid; v < P.Vc; v += WG) {
    let d = (logits[base + v] - mc) / T;
    let e = exp(d);
    s += e;
    s1 += e * d;
    if (v != local) { o += e; }
  }
  let sc = tree_sum(lid, s);
  let s1c = tree_sum(lid, s1);
  let oc = tree_sum(lid, o);
  if (lid != 0u) { return; }
  let at = 5u * n;
  var m_new = mc;
  var s_new = sc;
  var s1_new = s1c;
  var o_new = oc;
  var x_tok = 0.0;
  if (P.first == 0u) {
    let m_old = state[at];
    m_new = max(m_old, mc);
    let d_old = (m_old - m_new) / T;
    let d_c = (mc - m_new) / T;
    let a = exp(d_old);
    let ac = exp(d_c);
    s_new = a * state[at + 1u] + ac * sc;
    s1_new = a * (state[at + 2u] + state[at + 1u] * d_old) + ac * (s1c + sc * d_c);
    o_new = a * state[at + 3u] + ac * oc;
    x_tok = state[at + 4u];
  }
  if (local < P.Vc) { x_tok = logits[base + local]; }
  if (P.last == 0u) {
    state[at] = m_new;
    state[at + 1u] = s_new;
    state[at + 2u] = s1_new;
    state[at + 3u] = o_new;
    state[at + 4u] = x_tok;
    return;
  }
  let log_s = log(s_new);
  let mean_d = s1_new / s_new;
  out_logprobs[n] = (x_tok - m_new) / T - log_s;
  out_entropy[n] = log_s - mean_d;
  out_saved[4u * n] = m_new;
  out_saved[4u * n + 1u] = log_s;
  out_saved[4u * n + 2u] = mean_d;
  out_saved[4u * n + 3u] = o_new / s_new;
}

@group(0) @binding(1) var<storage, read_write> block: array<f32>;
@group(0) @binding(3) var<storage, read> saved: array<f32>;
@group(0) @binding(4) var<storage, read> grad_logprobs: array<f32>;
@group(0) @binding(5) var<storage, read> grad_entropy: array<f32>;

@compute @workgroup_size(WG)
fn head_grad(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= P.total) { return; }
  let r = e / P.Vc;
  let v = e % P.Vc;
  let n = P.n0 + r;
  let T = P.temperature;
  let m = saved[4u * n];
  let log_s = saved[4u * n + 1u];
  let mean_d = saved[4u * n + 2u];
  let d = (block[e] - m) / T;
  let p = exp(d - log_s);
  var onehot_minus_p = -p;
  if (P.v0 + v == token_of(n)) { onehot_minus_p = saved[4u * n + 3u]; }
  var g_ent = 0.0;
  if (P.has_grad_entropy != 0u) { g_ent = grad_entropy[n]; }
  block[e] = (grad_logprobs[n] * onehot_minus_p - g_ent * p * (d - mean_d)) / T;
}

@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(WG)
fn head_place(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= P.total) { return; }
  let r = e / P.Vc;
  let c = e % P.Vc;
  dst[(P.n0 + r) * P.V + P.v0 + c] = logits[e];
}
