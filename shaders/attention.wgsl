// Causal multi-head self-attention over left-padded batches (forward).
//
// Math, per batch b, head h, query i (Dh = D/H, q/k/v are the head-h slices of qkv rows):
//   visible(j) = j ≤ i and mask[b,j] = 1
//   s_j  = q_i·k_j / √Dh                              for visible j
//   P_ij = exp(s_j − max_visible s) / Σ_visible exp(·)   (0 for hidden j)
//   out_i = Σ_j P_ij v_j
//   A query with no visible key (a padding position before the prompt) outputs 0, P row = 0.
// Reference: src/reference/seq/attention.ts (attentionRef).
//
// Bindings: 0 uniform P {S, H, D, scale = 1/√Dh, total = B·H·S}
//           1 qkv   (B·S, 3D)    f32   rows [q | k | v]
//           2 mask  (B, S)       f32   1 = real token
//           3 out   (B·S, D)     f32
//           4 probs (B, H, S, S) f32   saved for attention_backward.wgsl; also the score scratch
// Layout: one thread per (batch b, head h, query i), 1-D grid of B·H·S threads, WG per group.
//   Each thread runs its whole softmax row serially: no workgroup barriers and a fixed summation
//   order, so results are deterministic. S ≤ 128 and Dh ≤ 64 keep a row cheap. (Written this
//   way after intermittent crashes later traced to Dawn's GPU object being garbage collected, see
//   src/node/webgpu.ts; a tiled version sharing K/V through workgroup memory would be faster on
//   real GPUs at long contexts.)
// attention_cached.wgsl repeats this row computation with keys from the cache (same order of
// operations, so cached decoding reproduces these outputs).

override WG: u32 = 64;

struct Params {
  S: u32,
  H: u32,
  D: u32,
  scale: f32,
  total: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> probs: array<f32>;

@compute @workgroup_size(WG)
fn attention_forward(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= P.total) { return; }
  let S = P.S;
  let D = P.D;
  let Dh = D / P.H;
  let i = e % S;
  let h = (e / S) % P.H;
  let b = e / (S * P.H);
  let q_off = (b * S + i) * 3u * D + h * Dh;
  let p_off = e * S; // ((b·H + h)·S + i)·S

  var m = -3.0e38;
  var any_visible = false;
  for (var j = 0u; j < S; j++) {
    var s = 0.0;
    if (j <= i && mask[b * S + j] == 1.0) {
      let k_off = (b * S + j) * 3u * D + D + h * Dh;
      for (var d = 0u; d < Dh; d++) { s += qkv[q_off + d] * qkv[k_off + d]; }
      s *= P.scale;
      m = max(m, s);
      any_visible = true;
    }
    probs[p_off + j] = s;
  }
  var total = 0.0;
  for (var j = 0u; j <= i; j++) {
    var w = 0.0;
    if (mask[b * S + j] == 1.0) { w = exp(probs[p_off + j] - m); }
    probs[p_off + j] = w;
    total += w;
  }
  // No visible key: every weight is 0; keep the row at exactly 0 instead of 0/0.
  let inv = select(0.0, 1.0 / total, any_visible);
  for (var j = 0u; j <= i; j++) { probs[p_off + j] = probs[p_off + j] * inv; }

  let o_off = (b * S + i) * D + h * Dh;
  for (var d = 0u; d < Dh; d++) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) {
      acc += probs[p_off + j] * qkv[(b * S + j) * 3u * D + 2u * D + h * Dh + d];
    }
    out[o_off + d] = acc;
  }
}
