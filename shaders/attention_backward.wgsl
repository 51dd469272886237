// Backward of causal multi-head self-attention (shaders/attention.wgsl), from the saved probs.
//
// Math, per batch b and head h (P = saved probs, dO = gradOut head slice, Dh = D/H):
//   dP_ij = dO_i·v_j
//   dS_ij = P_ij (dP_ij − Σ_j' P_ij' dP_ij')        (softmax backward; 0 where P_ij = 0)
//   dQ_i  = Σ_j dS_ij k_j / √Dh
//   dK_j  = Σ_i dS_ij q_i / √Dh
//   dV_j  = Σ_i P_ij dO_i
// Reference: src/reference/seq/attention.ts (attentionBackwardRef).
//
// Two passes, so every output element is written by exactly one thread (no atomics and no
// workgroup barriers, so the result is deterministic run to run):
//   attention_backward_query: one thread per (batch b, head h, query i), 1-D grid of B·H·S
//     threads: dP and dS over keys j ≤ i (dP parked in `dscores`, then overwritten by dS), then
//     dQ_i over the Dh columns.
//   attention_backward_key: one thread per (row b·S+j, column c of [k | v]), 1-D grid of
//     B·S·2D threads; sums over queries i ≥ j in order.
//
// Bindings: 0 uniform P {S, H, D, scale = 1/√Dh, rows = B·H·S, total = B·S·2D}
//           1 grad_out (B·S, D)     f32
//           2 qkv      (B·S, 3D)    f32   rows [q | k | v]
//           3 probs    (B, H, S, S) f32
//           4 dscores  (B, H, S, S) f32   scratch: written by the query pass, read by the key pass
//           5 grad_qkv (B·S, 3D)    f32   q third from the query pass, k and v thirds from the key pass

override WG: u32 = 64;

struct Params {
  S: u32,
  H: u32,
  D: u32,
  scale: f32,
  rows: u32,
  total: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> grad_out: array<f32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> dscores: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_qkv: array<f32>;

@compute @workgroup_size(WG)
fn attention_backward_query(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= P.rows) { return; }
  let S = P.S;
  let D = P.D;
  let Dh = D / P.H;
  let i = e % S;
  let h = (e / S) % P.H;
  let b = e / (S * P.H);
  let o_off = (b * S + i) * D + h * Dh;
  let p_off = e * S; // ((b·H + h)·S + i)·S

  var row_dot = 0.0;
  for (var j = 0u; j < S; j++) {
    var dp = 0.0;
    if (j <= i) {
      let v_off = (b * S + j) * 3u * D + 2u * D + h * Dh;
      for (var d = 0u; d < Dh; d++) { dp += grad_out[o_off + d] * qkv[v_off + d]; }
    }
    dscores[p_off + j] = dp;
    row_dot += probs[p_off + j] * dp;
  }
  for (var j = 0u; j < S; j++) {
    dscores[p_off + j] = probs[p_off + j] * (dscores[p_off + j] - row_dot);
  }

  let q_off = (b * S + i) * 3u * D + h * Dh;
  for (var d = 0u; d < Dh; d++) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) {
      acc += dscores[p_off + j] * qkv[(b * S + j) * 3u * D + D + h * Dh + d];
    }
    grad_qkv[q_off + d] = acc * P.scale;
  }
}

@compute @workgroup_size(WG)
fn attention_backward_key(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= P.total) { return; }
  let S = P.S;
  let D = P.D;
  let Dh = D / P.H;
  let row = e / (2u * D);          // b·S + j
  let c = e % (2u * D);            // column in [k | v]
  let b = row / S;
  let j = row % S;
  let col = c % D;                 // column within the model width
  let h = col / Dh;
  let base = (b * P.H + h) * S;    // probs / dscores rows of (b, h)
  var acc = 0.0;
  if (c < D) {
    for (var i = j; i < S; i++) {
      acc += dscores[(base + i) * S + j] * qkv[(b * S + i) * 3u * D + col];
    }
    acc *= P.scale;
  } else {
    for (var i = j; i < S; i++) {
      acc += probs[(base + i) * S + j] * grad_out[(b * S + i) * D + col];
    }
  }
  grad_qkv[row * 3u * D + D + c] = acc;
}
