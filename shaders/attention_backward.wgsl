// Backward of causal multi-head self-attention (shaders/attention.wgsl), from the saved probs and
// output, in one dispatch.
//
// Math, per batch b and head h (P = saved probs, O = saved output, dO = gradOut, head slices):
//   dP_ij = dO_i·v_j                          (d in order)
//   δ_i   = dO_i·O_i  (= Σ_j P_ij dP_ij, since O_i = Σ_j P_ij v_j; FlashAttention-2's rowsum)
//   dS_ij = P_ij (dP_ij − δ_i)                (softmax backward; 0 where P_ij = 0)
//   dQ_i  = (Σ_j dS_ij k_j) / √Dh             (j = 0 … i in order, then the scale)
//   dK_j  = (Σ_i dS_ij q_i) / √Dh,  dV_j = Σ_i P_ij dO_i   (i = j … S−1 in order)
// Reference: src/reference/seq/attention.ts (attentionBackwardRef; it sums δ_i as Σ_j P_ij dP_ij,
//   equal in exact arithmetic).
//
// One dispatch, two kinds of thread, so every output element is written by exactly one thread
// (no atomics, no workgroup barriers: deterministic run to run). With nb = ⌈S/4⌉ and
// nq = B·H·nb, thread e < nq owns queries 4(e mod nb) … +3 of head e div nb; thread nq + e owns
// keys 4(e mod nb) … +3 of head e div nb:
//   query thread: δ of its 4 queries; dS over key tiles of 4 (4 dO + 4 v loads per step of 16
//     products) into its own rows of `dscores` (region 0, [b,h,i,j]); then dQ, 4 queries × 4
//     columns at a time, reading those rows back (a thread reads only what it wrote).
//   key thread: recomputes dS for its 4 keys over query tiles of 4 (each step also loads O for δ)
//     into its own rows of region 1 ([b,h,j,i], transposed); then dK and dV, 4 keys × 4 columns.
//   Both kinds walk one axis in register tiles of 4, as attention.wgsl does (see its header for
//   why not workgroup-memory tiles).
//
// Bindings: 0 uniform P {S, H, D, scale = 1/√Dh, nq = B·H·⌈S/4⌉, total = 2·nq, region1 = B·H·S·S}
//           1 grad_out (B·S, D)       f32
//           2 qkv      (B·S, 3D)      f32   rows [q | k | v]
//           3 probs    (B, H, S, S)   f32
//           4 dscores  (2, B, H, S, S) f32  scratch, see above
//           5 grad_qkv (B·S, 3D)      f32   q third from the query threads, k and v from the key threads
//           6 out      (B·S, D)       f32   the forward's output O
// Layout: 1-D grid of `total` threads (2-D past 65535 groups), WG per group.

const WG: u32 = 64u;

struct Params {
  S: u32,
  H: u32,
  D: u32,
  scale: f32,
  nq: u32,
  total: u32,
  region1: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> grad_out: array<f32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> dscores: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_qkv: array<f32>;
@group(0) @binding(6) var<storage, read> out: array<f32>;

/** dS for query i against keys j0 … j0+3 into dscores[base + j] (query threads: base = row i of region 0). */
fn put_ds(base: u32, i: u32, j0: u32, pr: u32, dp: vec4f, delta: f32) {
  if (i >= P.S) { return; }
  for (var c = 0u; c < 4u; c++) {
    let j = j0 + c;
    if (j >= P.S) { return; }
    var ds = 0.0;
    if (j <= i) { ds = probs[pr + j] * (dp[c] - delta); }
    dscores[base + j] = ds;
  }
}

/** dS for key j against queries i0 … i0+3 into dscores[base + i] (key threads: base = row j of region 1). */
fn put_ds_t(base: u32, j: u32, i0: u32, pcol: u32, dp: vec4f, delta: vec4f) {
  if (j >= P.S) { return; }
  let S = P.S;
  for (var c = 0u; c < 4u; c++) {
    let i = i0 + c;
    if (i >= S) { return; }
    var ds = 0.0;
    if (i >= j) { ds = probs[pcol + i * S] * (dp[c] - delta[c]); }
    dscores[base + i] = ds;
  }
}

fn put4(at: u32, valid: bool, d0: u32, Dh: u32, v: vec4f) {
  if (!valid) { return; }
  for (var c = 0u; c < 4u; c++) {
    if (d0 + c < Dh) { grad_qkv[at + d0 + c] = v[c]; }
  }
}

@compute @workgroup_size(WG)
fn attention_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= P.total) { return; }
  if (e < P.nq) { query_thread(e); } else { key_thread(e - P.nq); }
}

fn query_thread(e: u32) {
  let S = P.S;
  let D = P.D;
  let Dh = D / P.H;
  let nb = (S + 3u) / 4u;
  let bh = e / nb;
  let h = bh % P.H;
  let row = (bh / P.H) * S;
  let i0 = (e % nb) * 4u;
  let last = min(i0 + 3u, S - 1u);
  let i1 = min(i0 + 1u, last);
  let i2 = min(i0 + 2u, last);
  let i3 = last;
  let g0 = (row + i0) * D + h * Dh;
  let g1 = (row + i1) * D + h * Dh;
  let g2 = (row + i2) * D + h * Dh;
  let g3 = (row + i3) * D + h * Dh;
  var delta = vec4f(0.0);
  for (var d = 0u; d < Dh; d++) {
    delta += vec4f(grad_out[g0 + d], grad_out[g1 + d], grad_out[g2 + d], grad_out[g3 + d]) * vec4f(out[g0 + d], out[g1 + d], out[g2 + d], out[g3 + d]);
  }
  let pr0 = (bh * S + i0) * S;
  let pr1 = (bh * S + i1) * S;
  let pr2 = (bh * S + i2) * S;
  let pr3 = (bh * S + i3) * S;
  let ds0 = pr0; // region 0 has the probs layout
  let ds1 = pr1;
  let ds2 = pr2;
  let ds3 = pr3;
  for (var j0 = 0u; j0 <= last; j0 += 4u) {
    let v0 = (row + j0) * 3u * D + 2u * D + h * Dh;
    let v1 = (row + min(j0 + 1u, last)) * 3u * D + 2u * D + h * Dh;
    let v2 = (row + min(j0 + 2u, last)) * 3u * D + 2u * D + h * Dh;
    let v3 = (row + min(j0 + 3u, last)) * 3u * D + 2u * D + h * Dh;
    var dp0 = vec4f(0.0); var dp1 = vec4f(0.0); var dp2 = vec4f(0.0); var dp3 = vec4f(0.0);
    for (var d = 0u; d < Dh; d++) {
      let v = vec4f(qkv[v0 + d], qkv[v1 + d], qkv[v2 + d], qkv[v3 + d]);
      dp0 += grad_out[g0 + d] * v;
      dp1 += grad_out[g1 + d] * v;
      dp2 += grad_out[g2 + d] * v;
      dp3 += grad_out[g3 + d] * v;
    }
    put_ds(ds0, i0, j0, pr0, dp0, delta.x);
    put_ds(ds1, i0 + 1u, j0, pr1, dp1, delta.y);
    put_ds(ds2, i0 + 2u, j0, pr2, dp2, delta.z);
    put_ds(ds3, i0 + 3u, j0, pr3, dp3, delta.w);
  }
  // dQ_i = Σ_{j ≤ i} dS_ij k_j · scale.
  let q0 = (row + i0) * 3u * D + h * Dh;
  let q1 = (row + i1) * 3u * D + h * Dh;
  let q2 = (row + i2) * 3u * D + h * Dh;
  let q3 = (row + i3) * 3u * D + h * Dh;
  for (var d0 = 0u; d0 < Dh; d0 += 4u) {
    let c1 = min(d0 + 1u, Dh - 1u);
    let c2 = min(d0 + 2u, Dh - 1u);
    let c3 = min(d0 + 3u, Dh - 1u);
    var acc0 = vec4f(0.0); var acc1 = vec4f(0.0); var acc2 = vec4f(0.0); var acc3 = vec4f(0.0);
    for (var j = 0u; j <= last; j++) {
      let ko = (row + j) * 3u * D + D + h * Dh;
      let k = vec4f(qkv[ko + d0], qkv[ko + c1], qkv[ko + c2], qkv[ko + c3]);
      acc0 += select(vec4f(0.0), dscores[ds0 + j] * k, j <= i0);
      acc1 += select(vec4f(0.0), dscores[ds1 + j] * k, j <= i0 + 1u);
      acc2 += select(vec4f(0.0), dscores[ds2 + j] * k, j <= i0 + 2u);
      acc3 += select(vec4f(0.0), dscores[ds3 + j] * k, j <= i0 + 3u);
    }
    put4(q0, i0 < S, d0, Dh, acc0 * P.scale);
    put4(q1, i0 + 1u < S, d0, Dh, acc1 * P.scale);
    put4(q2, i0 + 2u < S, d0, Dh, acc2 * P.scale);
    put4(q3, i0 + 3u < S, d0, Dh, acc3 * P.scale);
  }
}

fn key_thread(e: u32) {
  let S = P.S;
  let D = P.D;
  let Dh = D / P.H;
  let nb = (S + 3u) / 4u;
  let bh = e / nb;
  let h = bh % P.H;
  let row = (bh / P.H) * S;
  let j0 = (e % nb) * 4u;
  let jl = min(j0 + 3u, S - 1u);
  let j1 = min(j0 + 1u, jl);
  let j2 = min(j0 + 2u, jl);
  let j3 = jl;
  let v0 = (row + j0) * 3u * D + 2u * D + h * Dh;
  let v1 = (row + j1) * 3u * D + 2u * D + h * Dh;
  let v2 = (row + j2) * 3u * D + 2u * D + h * Dh;
  let v3 = (row + j3) * 3u * D + 2u * D + h * Dh;
  // Region 1 (at P.region1 = B·H·S·S): row j of head bh at region1 + (bh·S + j)·S, entries i.
  let t0 = P.region1 + (bh * S + j0) * S;
  let t1 = t0 + (j1 - j0) * S;
  let t2 = t0 + (j2 - j0) * S;
  let t3 = t0 + (j3 - j0) * S;
  let pc = bh * S * S; // probs[(bh·S + i)·S + j] = probs[pc + i·S + j]
  // Query tiles from the one holding j0 (tiles are aligned to 4, so i0 = j0) to the end.
  for (var i0 = j0; i0 < S; i0 += 4u) {
    let il = min(i0 + 3u, S - 1u);
    let g0 = (row + i0) * D + h * Dh;
    let g1 = (row + min(i0 + 1u, il)) * D + h * Dh;
    let g2 = (row + min(i0 + 2u, il)) * D + h * Dh;
    let g3 = (row + il) * D + h * Dh;
    var delta = vec4f(0.0); // δ of the 4 queries
    var dp0 = vec4f(0.0); var dp1 = vec4f(0.0); var dp2 = vec4f(0.0); var dp3 = vec4f(0.0); // key c: dP against the 4 queries
    for (var d = 0u; d < Dh; d++) {
      let go = vec4f(grad_out[g0 + d], grad_out[g1 + d], grad_out[g2 + d], grad_out[g3 + d]);
      delta += go * vec4f(out[g0 + d], out[g1 + d], out[g2 + d], out[g3 + d]);
      dp0 += qkv[v0 + d] * go;
      dp1 += qkv[v1 + d] * go;
      dp2 += qkv[v2 + d] * go;
      dp3 += qkv[v3 + d] * go;
    }
    put_ds_t(t0, j0, i0, pc + j0, dp0, delta);
    put_ds_t(t1, j0 + 1u, i0, pc + j1, dp1, delta);
    put_ds_t(t2, j0 + 2u, i0, pc + j2, dp2, delta);
    put_ds_t(t3, j0 + 3u, i0, pc + j3, dp3, delta);
  }
  // dK_j = Σ_{i ≥ j} dS_ij q_i · scale, dV_j = Σ_{i ≥ j} P_ij dO_i.
  let k0 = (row + j0) * 3u * D + D + h * Dh;
  let k1 = (row + j1) * 3u * D + D + h * Dh;
  let k2 = (row + j2) * 3u * D + D + h * Dh;
  let k3 = (row + j3) * 3u * D + D + h * Dh;
  for (var d0 = 0u; d0 < Dh; d0 += 4u) {
    let c1 = min(d0 + 1u, Dh - 1u);
    let c2 = min(d0 + 2u, Dh - 1u);
    let c3 = min(d0 + 3u, Dh - 1u);
    var dk0 = vec4f(0.0); var dk1 = vec4f(0.0); var dk2 = vec4f(0.0); var dk3 = vec4f(0.0);
    var dv0 = vec4f(0.0); var dv1 = vec4f(0.0); var dv2 = vec4f(0.0); var dv3 = vec4f(0.0);
    for (var i = j0; i < S; i++) {
      let qo = (row + i) * 3u * D + h * Dh;
      let q = vec4f(qkv[qo + d0], qkv[qo + c1], qkv[qo + c2], qkv[qo + c3]);
      let go = (row + i) * D + h * Dh;
      let g = vec4f(grad_out[go + d0], grad_out[go + c1], grad_out[go + c2], grad_out[go + c3]);
      let pi = pc + i * S;
      dk0 += select(vec4f(0.0), dscores[t0 + i] * q, i >= j0);
      dk1 += select(vec4f(0.0), dscores[t1 + i] * q, i >= j0 + 1u);
      dk2 += select(vec4f(0.0), dscores[t2 + i] * q, i >= j0 + 2u);
      dk3 += select(vec4f(0.0), dscores[t3 + i] * q, i >= j0 + 3u);
      dv0 += select(vec4f(0.0), probs[pi + j0] * g, i >= j0);
      dv1 += select(vec4f(0.0), probs[pi + j1] * g, i >= j0 + 1u);
      dv2 += select(vec4f(0.0), probs[pi + j2] * g, i >= j0 + 2u);
      dv3 += select(vec4f(0.0), probs[pi + j3] * g, i >= j0 + 3u);
    }
    put4(k0, j0 < S, d0, Dh, dk0 * P.scale);
    put4(k1, j0 + 1u < S, d0, Dh, dk1 * P.scale);
    put4(k2, j0 + 2u < S, d0, Dh, dk2 * P.scale);
    put4(k3, j0 + 3u < S, d0, Dh, dk3 * P.scale);
    put4(k0 + D, j0 < S, d0, Dh, dv0);
    put4(k1 + D, j0 + 1u < S, d0, Dh, dv1);
    put4(k2 + D, j0 + 2u < S, d0, Dh, dv2);
    put4(k3 + D, j0 + 3u < S, d0, Dh, dv3);
  }
}
