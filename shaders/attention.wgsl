// Causal multi-head self-attention over left-padded batches (forward).
//
// Math, per batch b, head h, query i (Dh = D/H, q/k/v are the head-h slices of qkv rows):
//   visible(j) = j ≤ i and mask[b,j] = 1
//   s_j  = (Σ_d q_i[d]·k_j[d]) · (1/√Dh)   (d in order)  for visible j
//   P_ij = exp(s_j − max_visible s) / Σ_visible exp(·)   (0 for hidden j, and for every j > i)
//   out_i = Σ_j P_ij v_j   (j = 0 … i in order)
//   A query with no visible key (a padding position before the prompt) outputs 0, P row = 0.
// Reference: src/reference/seq/attention.ts (attentionRef).
//
// Bindings: 0 uniform P {S, H, D, scale = 1/√Dh, total = B·H·⌈S/4⌉}
//           1 qkv   (B·S, 3D)    f32   rows [q | k | v]
//           2 mask  (B, S)       f32   1 = real token
//           3 out   (B·S, D)     f32
//           4 probs (B, H, S, S) f32   saved for attention_backward.wgsl; also the score scratch
// Layout: one thread per (batch b, head h, block of 4 queries i0 … i0+3), 1-D grid of B·H·⌈S/4⌉
//   threads (2-D past 65535 groups), WG per group; no workgroup memory, no barriers, a fixed
//   summation order (deterministic). The key axis is walked in tiles of 4 keys: each step of a
//   score tile loads 4 q + 4 k values for 16 products, each step of the output tile (4 queries ×
//   4 columns) 4 P + 4 v values for 16 products. (On a CPU implementation of WebGPU every
//   lane-varying load costs the same wherever it reads and a workgroup barrier costs a coroutine
//   switch per 4 lanes, so tiles in registers beat tiles shared through workgroup memory; on a GPU
//   these are plain register tiles read through the cache.) Queries past S in the last block are
//   clamped for loads and never written.
// attention_cached.wgsl repeats this row computation with keys from the cache (same order of
// operations per output, so cached decoding reproduces these outputs).

const WG: u32 = 64u;

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

/** Row i's scores for keys j0 … j0+3 (masked to 0 where hidden), and its running max. */
fn put_scores(po: u32, i: u32, j0: u32, b: u32, s: vec4f, m: ptr<function, f32>, any: ptr<function, bool>) {
  if (i >= P.S) { return; }
  for (var c = 0u; c < 4u; c++) {
    let j = j0 + c;
    if (j >= P.S) { return; }
    var v = 0.0;
    if (j <= i && mask[b * P.S + j] == 1.0) {
      v = s[c];
      *m = max(*m, v);
      *any = true;
    }
    probs[po + j] = v;
  }
}

/** Softmax of row i over its visible keys, in place (probs hold the scores); zeros past the tiles. */
fn softmax_row(po: u32, i: u32, b: u32, m: f32, any: bool, tiles_end: u32) {
  if (i >= P.S) { return; }
  var total = 0.0;
  for (var j = 0u; j <= i; j++) {
    var w = 0.0;
    if (mask[b * P.S + j] == 1.0) { w = exp(probs[po + j] - m); }
    probs[po + j] = w;
    total += w;
  }
  // No visible key: every weight is 0; keep the row at exactly 0 instead of 0/0.
  let inv = select(0.0, 1.0 / total, any);
  for (var j = 0u; j <= i; j++) { probs[po + j] = probs[po + j] * inv; }
  for (var j = tiles_end; j < P.S; j++) { probs[po + j] = 0.0; }
}

fn put_out(row: u32, i: u32, d0: u32, Dh: u32, v: vec4f) {
  if (i >= P.S) { return; }
  for (var c = 0u; c < 4u; c++) {
    if (d0 + c < Dh) { out[row + d0 + c] = v[c]; }
  }
}

@compute @workgroup_size(WG)
fn attention_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= P.total) { return; }
  let S = P.S;
  let D = P.D;
  let Dh = D / P.H;
  let nqb = (S + 3u) / 4u;
  let bh = e / nqb; // b·H + h
  let h = bh % P.H;
  let b = bh / P.H;
  let i0 = (e % nqb) * 4u;
  let last = min(i0 + 3u, S - 1u);
  let row = b * S;
  // Query rows (clamped into the sequence), their q slices and probs rows.
  let i1 = min(i0 + 1u, last);
  let i2 = min(i0 + 2u, last);
  let i3 = last;
  let q0 = (row + i0) * 3u * D + h * Dh;
  let q1 = (row + i1) * 3u * D + h * Dh;
  let q2 = (row + i2) * 3u * D + h * Dh;
  let q3 = (row + i3) * 3u * D + h * Dh;
  let p0 = (bh * S + i0) * S;
  let p1 = (bh * S + i1) * S;
  let p2 = (bh * S + i2) * S;
  let p3 = (bh * S + i3) * S;

  var m0 = -3.0e38; var m1 = -3.0e38; var m2 = -3.0e38; var m3 = -3.0e38;
  var a0 = false; var a1 = false; var a2 = false; var a3 = false;
  var j0 = 0u;
  for (; j0 <= last; j0 += 4u) {
    let k0 = (row + j0) * 3u * D + D + h * Dh;
    let k1 = (row + min(j0 + 1u, last)) * 3u * D + D + h * Dh;
    let k2 = (row + min(j0 + 2u, last)) * 3u * D + D + h * Dh;
    let k3 = (row + min(j0 + 3u, last)) * 3u * D + D + h * Dh;
    var s0 = vec4f(0.0); var s1 = vec4f(0.0); var s2 = vec4f(0.0); var s3 = vec4f(0.0);
    for (var d = 0u; d < Dh; d++) {
      let k = vec4f(qkv[k0 + d], qkv[k1 + d], qkv[k2 + d], qkv[k3 + d]);
      s0 += qkv[q0 + d] * k;
      s1 += qkv[q1 + d] * k;
      s2 += qkv[q2 + d] * k;
      s3 += qkv[q3 + d] * k;
    }
    put_scores(p0, i0, j0, b, s0 * P.scale, &m0, &a0);
    put_scores(p1, i0 + 1u, j0, b, s1 * P.scale, &m1, &a1);
    put_scores(p2, i0 + 2u, j0, b, s2 * P.scale, &m2, &a2);
    put_scores(p3, i0 + 3u, j0, b, s3 * P.scale, &m3, &a3);
  }
  softmax_row(p0, i0, b, m0, a0, j0);
  softmax_row(p1, i0 + 1u, b, m1, a1, j0);
  softmax_row(p2, i0 + 2u, b, m2, a2, j0);
  softmax_row(p3, i0 + 3u, b, m3, a3, j0);

  // out_i = Σ_{j ≤ i} P_ij v_j, 4 queries × 4 columns at a time; terms j > i are skipped.
  let o0 = (row + i0) * D + h * Dh;
  let o1 = (row + i1) * D + h * Dh;
  let o2 = (row + i2) * D + h * Dh;
  let o3 = (row + i3) * D + h * Dh;
  for (var d0 = 0u; d0 < Dh; d0 += 4u) {
    let c0 = d0;
    let c1 = min(d0 + 1u, Dh - 1u);
    let c2 = min(d0 + 2u, Dh - 1u);
    let c3 = min(d0 + 3u, Dh - 1u);
    var acc0 = vec4f(0.0); var acc1 = vec4f(0.0); var acc2 = vec4f(0.0); var acc3 = vec4f(0.0);
    for (var j = 0u; j <= last; j++) {
      let vo = (row + j) * 3u * D + 2u * D + h * Dh;
      let v = vec4f(qkv[vo + c0], qkv[vo + c1], qkv[vo + c2], qkv[vo + c3]);
      acc0 += select(vec4f(0.0), probs[p0 + j] * v, j <= i0);
      acc1 += select(vec4f(0.0), probs[p1 + j] * v, j <= i0 + 1u);
      acc2 += select(vec4f(0.0), probs[p2 + j] * v, j <= i0 + 2u);
      acc3 += select(vec4f(0.0), probs[p3 + j] * v, j <= i0 + 3u);
    }
    put_out(o0, i0, d0, Dh, acc0);
    put_out(o1, i0 + 1u, d0, Dh, acc1);
    put_out(o2, i0 + 2u, d0, Dh, acc2);
    put_out(o3, i0 + 3u, d0, Dh, acc3);
  }
}
