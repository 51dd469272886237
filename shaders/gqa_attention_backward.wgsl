// Backward of causal grouped-query attention (gqa_attention.wgsl), flash-style: the probabilities
// are recomputed from q, k and the saved logsumexp, never stored.
//
// Math, per sequence b, query head h with kv head kh = ⌊h / g⌋ (g = H/Hkv), visible(i, j) = j ≤ i
// and mask[b, j] = 1 (dO = gradOut, O = the forward's output, head slices):
//   δ_i   = Σ_d dO_i[d]·O_i[d]                 (= Σ_j P_ij dP_ij, FlashAttention-2's rowsum)
//   P_ij  = exp(s_ij − lse_i),  s_ij = (q_i·k_j)·scale   (visible pairs; 0 otherwise)
//   dP_ij = dO_i·v_j;   dS_ij = P_ij (dP_ij − δ_i)
//   dQ_i  = scale · Σ_j dS_ij k_j
//   dK_j  = scale · Σ_{h in kh's group} Σ_i dS_ij q_i,   dV_j = Σ_{h in group} Σ_i P_ij dO_i
// Reference: src/reference/seq/gqa.ts (gqaAttentionBackwardRef; it sums δ_i as Σ_j P_ij dP_ij,
//   equal in exact arithmetic).
//
// Three entry points, each output element written by exactly one thread (no atomics:
// deterministic run to run). gqa_dq and gqa_dkv take one range of the summed index per dispatch
// (keys [lo, hi) for dQ, queries [lo, hi) for dK and dV): the host splits a long sequence into
// passes, in order, the first writing and the later ones adding, so no thread runs an unbounded
// loop (lavapipe returned zeros from threads past ~830 tiles of a loop) and the sums stay in one
// fixed order.
//   gqa_delta: one thread per (b, h, i): lse and δ side by side into stats (B, H, S, 2), so the
//              other two entries read both through one binding (8 storage bindings at most).
//   gqa_dq:    one workgroup per (b, h, tile of TQ queries), the forward's layout (4 lanes per
//              query, dims d ≡ lane mod 4 in registers: q, dO and the dQ accumulator); per key tile
//              of TB keys, K and V rows in workgroup memory, partial dot products of q·k and dO·v
//              through workgroup memory, summed in lane order.
//   gqa_dkv:   one workgroup per (b, kh, tile of TQ keys), 4 lanes per key (k, v and the dK,
//              dV accumulators in registers); for each query head of the group in order and each
//              query tile of TB rows from the key tile on, the Q and dO rows, their lse and δ in
//              workgroup memory; partial dot products through workgroup memory as above.
// Bindings: 0 uniform P {S, H, Hkv, scale, tiles = ⌈S/TQ⌉, total, lo, hi (the pass's range), first (1 = write, 0 = add)}
//   gqa_delta: 1 grad_out (B·S, H·DH), 2 out (B·S, H·DH), 3 lse (B, H, S), 4 stats (B, H, S, 2) rw
//   gqa_dq:    1 grad_out, 2 q (B·S, H·DH), 3 k (B·S, Hkv·DH), 4 v, 5 mask (B, S) f32,
//              6 stats (B, H, S, 2) [lse, δ], 7 grad_q (B·S, H·DH) rw
//   gqa_dkv:   the same 1–6, 7 grad_k (B·S, Hkv·DH) rw, 8 grad_v (B·S, Hkv·DH) rw
//   (entry points that never meet share binding numbers, as WGSL allows)
// Grids: gqa_delta ⌈B·H·S/WG⌉ (2-D past 65535 groups); gqa_dq B·H·⌈S/TQ⌉; gqa_dkv B·Hkv·⌈S/TQ⌉
//   workgroups (2-D past 65535), once per pass. WG = 4·TQ; TQ = 16 on a GPU, 1 on a CPU adapter (as the forward).
//   Sizes (set by the host, src/ops/gqaAttention.ts gqaLayout): TB·(2·DHP + 2·WG + 2) ≤ 3840 words
//   (15 KiB) on a GPU, 768 on a CPU adapter, TB ≤ 16.

const WG: u32 = 64u;
const TQ: u32 = 16u;
const LANES: u32 = 4u;
const DH: u32 = 64u;
const NPL: u32 = 16u;
const DHP: u32 = 64u;
const TB: u32 = 14u;

struct Params {
  S: u32,
  H: u32,
  Hkv: u32,
  scale: f32,
  tiles: u32,
  total: u32,
  lo: u32,
  hi: u32,
  first: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> grad_out: array<f32>;
@group(0) @binding(2) var<storage, read> out: array<f32>;
@group(0) @binding(3) var<storage, read> lse_in: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats_out: array<f32>;

@compute @workgroup_size(WG)
fn gqa_delta(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gid.x + gid.y * nwg.x * WG; // (b·H + h)·S + i
  if (r >= P.total) { return; }
  let i = r % P.S;
  let bh = r / P.S;
  let h = bh % P.H;
  let b = bh / P.H;
  let at = (b * P.S + i) * P.H * DH + h * DH;
  var d_sum = 0.0;
  for (var d = 0u; d < DH; d++) { d_sum += grad_out[at + d] * out[at + d]; }
  stats_out[2u * r] = lse_in[r];
  stats_out[2u * r + 1u] = d_sum;
}

@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> k: array<f32>;
@group(0) @binding(4) var<storage, read> v: array<f32>;
@group(0) @binding(5) var<storage, read> mask: array<f32>;
@group(0) @binding(6) var<storage, read> stats: array<f32>;
@group(0) @binding(7) var<storage, read_write> grad_q: array<f32>;

var<workgroup> ta: array<f32, TB * DHP>; // gqa_dq: K rows; gqa_dkv: Q rows
var<workgroup> tb: array<f32, TB * DHP>; // gqa_dq: V rows; gqa_dkv: dO rows
var<workgroup> part_s: array<f32, TB * WG>;
var<workgroup> part_p: array<f32, TB * WG>;
var<workgroup> row_a: array<f32, TB>; // gqa_dq: key mask; gqa_dkv: lse of the queries
var<workgroup> row_b: array<f32, TB>; // gqa_dkv: δ of the queries

/** Lane `lane`'s dims of one (B·S, W) row at `at` into registers (zeros past DH). */
fn lane_row(src: u32, at: u32, lane: u32) -> array<f32, NPL> {
  var r: array<f32, NPL>;
  for (var c = 0u; c < NPL; c++) {
    let d = c * LANES + lane;
    var x = 0.0;
    if (d < DH) {
      if (src == 0u) { x = q[at + d]; } else if (src == 1u) { x = grad_out[at + d]; } else if (src == 2u) { x = k[at + d]; } else { x = v[at + d]; }
    }
    r[c] = x;
  }
  return r;
}

@compute @workgroup_size(WG)
fn gqa_dq(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let e = wid.x + wid.y * nwg.x;
  if (e >= P.total) { return; }
  let S = P.S;
  let tile = e % P.tiles;
  let bh = e / P.tiles;
  let h = bh % P.H;
  let b = bh / P.H;
  let kh = h / (P.H / P.Hkv);
  let qi = lid / LANES;
  let lane = lid % LANES;
  let l = tile * TQ + qi;
  let i = min(l, S - 1u);
  let i_last = min(tile * TQ + TQ - 1u, S - 1u);
  let qw = P.H * DH;
  let kvw = P.Hkv * DH;
  let row = (b * S + i) * qw + h * DH;
  let qr = lane_row(0u, row, lane);
  let gr = lane_row(1u, row, lane);
  let lse_i = stats[2u * (bh * S + i)];
  let delta_i = stats[2u * (bh * S + i) + 1u];
  var dq: array<f32, NPL>;
  let pq = qi * LANES;

  let j_last = min(i_last, P.hi - 1u); // this pass's keys: [lo, j_last]
  for (var j0 = P.lo; j0 <= j_last; j0 += TB) {
    for (var x = lid; x < TB * DHP; x += WG) {
      let j = j0 + x / DHP;
      let d = x % DHP;
      var kx = 0.0;
      var vx = 0.0;
      if (d < DH && j <= j_last) {
        let at = (b * S + j) * kvw + kh * DH + d;
        kx = k[at];
        vx = v[at];
      }
      ta[x] = kx;
      tb[x] = vx;
    }
    for (var t = lid; t < TB; t += WG) {
      let j = j0 + t;
      row_a[t] = select(0.0, mask[b * S + min(j, S - 1u)], j <= j_last);
    }
    workgroupBarrier();
    for (var t = 0u; t < TB; t++) {
      var ps = 0.0;
      var pp = 0.0;
      for (var c = 0u; c < NPL; c++) {
        ps += qr[c] * ta[t * DHP + c * LANES + lane];
        pp += gr[c] * tb[t * DHP + c * LANES + lane];
      }
      part_s[t * WG + lid] = ps;
      part_p[t * WG + lid] = pp;
    }
    workgroupBarrier();
    for (var t = 0u; t < TB; t++) {
      if (j0 + t <= i && row_a[t] == 1.0) {
        let s = (((part_s[t * WG + pq] + part_s[t * WG + pq + 1u]) + part_s[t * WG + pq + 2u]) + part_s[t * WG + pq + 3u]) * P.scale;
        let dp = ((part_p[t * WG + pq] + part_p[t * WG + pq + 1u]) + part_p[t * WG + pq + 2u]) + part_p[t * WG + pq + 3u];
        let ds = exp(s - lse_i) * (dp - delta_i);
        for (var c = 0u; c < NPL; c++) { dq[c] += ds * ta[t * DHP + c * LANES + lane]; }
      }
    }
    workgroupBarrier();
  }
  if (l >= S) { return; }
  for (var c = 0u; c < NPL; c++) {
    let d = c * LANES + lane;
    if (d < DH) {
      let g = dq[c] * P.scale;
      grad_q[row + d] = select(grad_q[row + d] + g, g, P.first == 1u);
    }
  }
}

@group(0) @binding(7) var<storage, read_write> grad_k: array<f32>;
@group(0) @binding(8) var<storage, read_write> grad_v: array<f32>;

@compute @workgroup_size(WG)
fn gqa_dkv(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let e = wid.x + wid.y * nwg.x;
  if (e >= P.total) { return; }
  let S = P.S;
  let g = P.H / P.Hkv;
  let tile = e % P.tiles;
  let bk = e / P.tiles; // b·Hkv + kh
  let kh = bk % P.Hkv;
  let b = bk / P.Hkv;
  let kj = lid / LANES;
  let lane = lid % LANES;
  let j0 = tile * TQ;
  let jl = j0 + kj;
  let j = min(jl, S - 1u);
  let qw = P.H * DH;
  let kvw = P.Hkv * DH;
  let krow = (b * S + j) * kvw + kh * DH;
  let kr = lane_row(2u, krow, lane);
  let vr = lane_row(3u, krow, lane);
  let key_visible = mask[b * S + j] == 1.0;
  var dk: array<f32, NPL>;
  var dv: array<f32, NPL>;
  let pk = kj * LANES;

  let i_end = min(S, P.hi); // this pass's queries: [max(j0, lo), i_end)
  for (var hh = 0u; hh < g; hh++) {
    let h = kh * g + hh;
    let bh = b * P.H + h;
    for (var i0 = max(j0, P.lo); i0 < i_end; i0 += TB) {
      for (var x = lid; x < TB * DHP; x += WG) {
        let i = i0 + x / DHP;
        let d = x % DHP;
        var qx = 0.0;
        var gx = 0.0;
        if (d < DH && i < i_end) {
          let at = (b * S + i) * qw + h * DH + d;
          qx = q[at];
          gx = grad_out[at];
        }
        ta[x] = qx;
        tb[x] = gx;
      }
      for (var t = lid; t < TB; t += WG) {
        let i = min(i0 + t, S - 1u);
        row_a[t] = stats[2u * (bh * S + i)];
        row_b[t] = stats[2u * (bh * S + i) + 1u];
      }
      workgroupBarrier();
      for (var t = 0u; t < TB; t++) {
        var ps = 0.0;
        var pp = 0.0;
        for (var c = 0u; c < NPL; c++) {
          ps += ta[t * DHP + c * LANES + lane] * kr[c];
          pp += tb[t * DHP + c * LANES + lane] * vr[c];
        }
        part_s[t * WG + lid] = ps;
        part_p[t * WG + lid] = pp;
      }
      workgroupBarrier();
      for (var t = 0u; t < TB; t++) {
        let i = i0 + t;
        if (key_visible && i < i_end && j <= i) {
          let s = (((part_s[t * WG + pk] + part_s[t * WG + pk + 1u]) + part_s[t * WG + pk + 2u]) + part_s[t * WG + pk + 3u]) * P.scale;
          let dp = ((part_p[t * WG + pk] + part_p[t * WG + pk + 1u]) + part_p[t * WG + pk + 2u]) + part_p[t * WG + pk + 3u];
          let p = exp(s - row_a[t]);
          let ds = p * (dp - row_b[t]);
          for (var c = 0u; c < NPL; c++) {
            dv[c] += p * tb[t * DHP + c * LANES + lane];
            dk[c] += ds * ta[t * DHP + c * LANES + lane];
          }
        }
      }
      workgroupBarrier();
    }
  }
  if (jl >= S) { return; }
  for (var c = 0u; c < NPL; c++) {
    let d = c * LANES + lane;
    if (d < DH) {
      let gk = dk[c] * P.scale;
      grad_k[krow + d] = select(grad_k[krow + d] + gk, gk, P.first == 1u);
      grad_v[krow + d] = select(grad_v[krow + d] + dv[c], dv[c], P.first == 1u);
    }
  }
}
