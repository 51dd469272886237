// Causal grouped-query attention (forward), flash-style: no (S, S) matrix is stored. Each query
// keeps a running max and sum over key tiles (online softmax); its logsumexp is saved for the
// backward (gqa_attention_backward.wgsl), which recomputes the probabilities.
//
// Math, per sequence b, query head h (kv head kh = ⌊h / (H/Hkv)⌋), query row l at absolute
// position i = start + l (full sequences: start = 0, L = Skv = S):
//   visible(j) = j ≤ i and mask[b, j] = 1
//   s_j   = (Σ_d q_l[d]·k_j[d]) · scale
//   lse_l = log Σ_visible exp(s_j);   out_l = Σ_visible exp(s_j − lse_l) · v_j
//   A query with no visible key outputs 0 and lse 0 (never read: the backward only meets visible pairs).
// Online softmax, key tiles j0 = 0, TK, 2TK, … up to the tile's last query:
//   m' = max(m, max_tile s);  α = exp(m − m');  ℓ ← α·ℓ + Σ_tile exp(s − m');
//   acc ← α·acc + Σ_tile exp(s − m')·v;  finally out = acc / ℓ,  lse = m + log ℓ.
// The KV-cached prefill (gqaAttentionCached with L > 1) runs this entry with q the L new rows and
// k, v the caches (Skv = Smax rows per sequence), so its outputs are these, bit for bit.
// Reference: src/reference/seq/gqa.ts (gqaAttentionRef, gqaAttentionCachedRef).
//
// Bindings: 0 uniform P {L, Skv, start, H, Hkv, scale, tiles = ⌈L/TQ⌉, total = B·H·tiles}
//           1 q    (B·L, H·DH)     f32
//           2 k    (B·Skv, Hkv·DH) f32
//           3 v    (B·Skv, Hkv·DH) f32
//           4 mask (B, Skv)        f32  1 = real token
//           5 out  (B·L, H·DH)     f32
//           6 lse  (B, H, L)       f32
// Layout: one workgroup of WG = 4·TQ threads per (b, h, tile of TQ query rows), grid B·H·⌈L/TQ⌉
//   workgroups (2-D past 65535); TQ = 16 on a GPU, 1 on a CPU implementation of WebGPU (one SIMD
//   group there, so barriers cost no coroutine switch). Four lanes per query: lane c holds dims d ≡ c (mod 4)
//   of its q row and of its output accumulator in registers (NPL = ⌈DH/4⌉ each; DH, the head
//   width, is a compile-time constant of each pipeline). Per key tile the workgroup loads TK rows
//   of K and V into workgroup memory (rows padded with zeros to DHP = 4·NPL, coalesced), each
//   lane writes its partial dot product with every key of the tile, and each thread adds its
//   query's four partials in lane order, so the four lanes of a query hold the same scores bit for
//   bit and run the same softmax. Three barriers per key tile. Sizes (set by the host,
//   src/ops/gqaAttention.ts gqaLayout): TK·(2·DHP + WG + 1) ≤ 3840 words (15 KiB) on a GPU, 768 on
//   a CPU adapter, TK ≤ 16.

const WG: u32 = 64u;
const TQ: u32 = 16u;
const LANES: u32 = 4u;
const DH: u32 = 64u;
const NPL: u32 = 16u;
const DHP: u32 = 64u;
const TK: u32 = 16u;

struct Params {
  L: u32,
  Skv: u32,
  start: u32,
  H: u32,
  Hkv: u32,
  scale: f32,
  tiles: u32,
  total: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<storage, read_write> lse: array<f32>;

var<workgroup> ks: array<f32, TK * DHP>;
var<workgroup> vs: array<f32, TK * DHP>;
var<workgroup> part: array<f32, TK * WG>;
var<workgroup> ms: array<f32, TK>;

@compute @workgroup_size(WG)
fn gqa_attention_forward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let e = wid.x + wid.y * nwg.x;
  if (e >= P.total) { return; }
  let tile = e % P.tiles;
  let bh = e / P.tiles; // b·H + h
  let h = bh % P.H;
  let b = bh / P.H;
  let kh = h / (P.H / P.Hkv);
  let qi = lid / LANES;
  let lane = lid % LANES;
  let l0 = tile * TQ;
  let l = l0 + qi;
  let lq = min(l, P.L - 1u); // rows past the end compute on the last row and write nothing
  let i = P.start + lq;
  let i_last = P.start + min(l0 + TQ - 1u, P.L - 1u);
  let qw = P.H * DH;
  let kvw = P.Hkv * DH;
  let q_off = (b * P.L + lq) * qw + h * DH;

  var qr: array<f32, NPL>;
  for (var c = 0u; c < NPL; c++) {
    let d = c * LANES + lane;
    qr[c] = select(0.0, q[q_off + min(d, DH - 1u)], d < DH);
  }
  var acc: array<f32, NPL>;
  var sc: array<f32, TK>;
  var m = 0.0;
  var ell = 0.0;
  var seen = false;

  for (var j0 = 0u; j0 <= i_last; j0 += TK) {
    // K and V rows j0 … j0+TK−1 of kv head kh; zeros past the tile's last query or the end.
    for (var x = lid; x < TK * DHP; x += WG) {
      let j = j0 + x / DHP;
      let d = x % DHP;
      var kx = 0.0;
      var vx = 0.0;
      if (d < DH && j <= i_last && j < P.Skv) {
        let at = (b * P.Skv + j) * kvw + kh * DH + d;
        kx = k[at];
        vx = v[at];
      }
      ks[x] = kx;
      vs[x] = vx;
    }
    for (var t = lid; t < TK; t += WG) {
      let j = j0 + t;
      ms[t] = select(0.0, mask[b * P.Skv + min(j, P.Skv - 1u)], j <= i_last && j < P.Skv);
    }
    workgroupBarrier();
    for (var t = 0u; t < TK; t++) {
      var p = 0.0;
      for (var c = 0u; c < NPL; c++) { p += qr[c] * ks[t * DHP + c * LANES + lane]; }
      part[t * WG + lid] = p;
    }
    workgroupBarrier();
    var tmax = 0.0;
    var tany = false;
    var vis = 0u;
    let pq = qi * LANES;
    for (var t = 0u; t < TK; t++) {
      let s = (((part[t * WG + pq] + part[t * WG + pq + 1u]) + part[t * WG + pq + 2u]) + part[t * WG + pq + 3u]) * P.scale;
      sc[t] = s;
      if (j0 + t <= i && ms[t] == 1.0) {
        tmax = select(s, max(tmax, s), tany);
        tany = true;
        vis |= 1u << t;
      }
    }
    if (tany) {
      let mn = select(tmax, max(m, tmax), seen);
      let alpha = select(0.0, exp(m - mn), seen); // acc and ℓ are still 0 before the first visible key
      ell *= alpha;
      for (var c = 0u; c < NPL; c++) { acc[c] *= alpha; }
      for (var t = 0u; t < TK; t++) {
        if ((vis & (1u << t)) != 0u) {
          let w = exp(sc[t] - mn);
          ell += w;
          for (var c = 0u; c < NPL; c++) { acc[c] += w * vs[t * DHP + c * LANES + lane]; }
        }
      }
      m = mn;
      seen = true;
    }
    workgroupBarrier(); // every thread is done with this tile before the next one overwrites it
  }

  if (l >= P.L) { return; }
  let inv = select(0.0, 1.0 / ell, seen);
  let o_off = (b * P.L + l) * qw + h * DH;
  for (var c = 0u; c < NPL; c++) {
    let d = c * LANES + lane;
    if (d < DH) { out[o_off + d] = acc[c] * inv; }
  }
  if (lane == 0u) { lse[bh * P.L + l] = select(0.0, m + log(ell), seen); }
}
