// KV-cached grouped-query attention for rollout: the new positions' k, v go into the caches, and
// their queries attend to every cached key up to their position.
//
// Math, for new position l (absolute i = start + l) of sequence b, query head h, kv head
// kh = ⌊h / (H/Hkv)⌋, visible(j) = j ≤ i and mask[b, j] = 1:
//   k_cache[b, start + l] = k_new[b, l];  v_cache[b, start + l] = v_new[b, l]
//   s_j = (q·k_cache[b, j]) · scale;  out = Σ_visible softmax(s)_j · v_cache[b, j];  no visible key → 0.
// kv_write copies the new rows (prefill, L > 1; the attention is then gqa_attention.wgsl's entry
// on the caches). gqa_decode (L = 1) does the copy and the attention in one dispatch: for the new
// key it reads k_new, v_new themselves, so no workgroup reads a cache row another one writes.
// Online softmax over chunks of KC keys: m' = max(m, max_chunk s), α = exp(m − m'),
//   ℓ ← α·ℓ + Σ exp(s − m'),  acc ← α·acc + Σ exp(s − m')·v;  out = acc / ℓ.
// Reference: src/reference/seq/gqa.ts (gqaAttentionCachedRef).
//
// Bindings, kv_write:   0 uniform P, 1 k_new (B·L, Hkv·Dh), 2 v_new, 3 k_cache (B, Smax, Hkv·Dh) rw,
//                       4 v_cache rw
// Bindings, gqa_decode: 0 uniform P, 1 k_new (B, Hkv·Dh), 2 v_new, 3 k_cache rw, 4 v_cache rw,
//                       5 q (B, H·Dh), 6 mask (B, Smax) f32, 7 out (B, H·Dh) rw
//   P {L, Smax, start, H, Hkv, Dh, scale, total}: total = B·L·Hkv·Dh (kv_write), B·H (gqa_decode)
// Layout, kv_write: one thread per copied element, ⌈total/64⌉ workgroups (2-D past 65535).
// Layout, gqa_decode: one workgroup of WG threads per (b, h), grid B·H (2-D past 65535); WG = 64
//   on a GPU, 4 on a CPU implementation of WebGPU (one SIMD group: its barriers switch nothing);
//   the workgroup of the group's first head (h mod g = 0) writes the new k, v row of kv head kh.
//   Per chunk of KC = 256 keys: thread t scores keys t, t + WG, … (a dot product over Dh from
//   global memory, q in workgroup memory), a tree max and a tree sum (lib_tree_sum) give the
//   chunk's max and mass, and thread t accumulates output dims t, t + WG, … (DPT = 256/WG of them)
//   over the chunk's weights (reads of one v row coalesced across threads). Dh ≤ 256.

const WG: u32 = 64u;
const KC: u32 = 256u;
const DMAX: u32 = 256u;
const DPT: u32 = 4u; // output dims per thread: DMAX / WG
const HIDDEN: f32 = -3.0e38; // score of a key the query does not see

struct Params {
  L: u32,
  Smax: u32,
  start: u32,
  H: u32,
  Hkv: u32,
  Dh: u32,
  scale: f32,
  total: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> k_new: array<f32>;
@group(0) @binding(2) var<storage, read> v_new: array<f32>;
@group(0) @binding(3) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(4) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(5) var<storage, read> q: array<f32>;
@group(0) @binding(6) var<storage, read> mask: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn kv_write(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= P.total) { return; }
  let kvw = P.Hkv * P.Dh;
  let row = e / kvw; // b·L + l
  let c = e % kvw;
  let b = row / P.L;
  let l = row % P.L;
  let dst = (b * P.Smax + P.start + l) * kvw + c;
  k_cache[dst] = k_new[e];
  v_cache[dst] = v_new[e];
}

// @include lib_tree_sum

var<workgroup> qs: array<f32, DMAX>;
var<workgroup> w: array<f32, KC>;

@compute @workgroup_size(WG)
fn gqa_decode(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let e = wid.x + wid.y * nwg.x; // b·H + h
  if (e >= P.total) { return; }
  let Dh = P.Dh;
  let h = e % P.H;
  let b = e / P.H;
  let g = P.H / P.Hkv;
  let kh = h / g;
  let kvw = P.Hkv * Dh;
  let i = P.start;
  let new_at = b * kvw + kh * Dh; // the new row in k_new / v_new
  if (h % g == 0u) {
    let dst = (b * P.Smax + i) * kvw + kh * Dh;
    for (var d = lid; d < Dh; d += WG) {
      k_cache[dst + d] = k_new[new_at + d];
      v_cache[dst + d] = v_new[new_at + d];
    }
  }
  for (var d = lid; d < Dh; d += WG) { qs[d] = q[e * Dh + d]; }
  workgroupBarrier();

  var m = 0.0;
  var ell = 0.0;
  var seen = false;
  var acc: array<f32, DPT>;
  for (var c0 = 0u; c0 <= i; c0 += KC) {
    var cmax = HIDDEN;
    for (var t = lid; t < KC; t += WG) {
      let j = c0 + t;
      var s = HIDDEN;
      if (j <= i && mask[b * P.Smax + j] == 1.0) {
        var dot = 0.0;
        if (j == i) {
          for (var d = 0u; d < Dh; d++) { dot += qs[d] * k_new[new_at + d]; }
        } else {
          let at = (b * P.Smax + j) * kvw + kh * Dh;
          for (var d = 0u; d < Dh; d++) { dot += qs[d] * k_cache[at + d]; }
        }
        s = dot * P.scale;
        cmax = max(cmax, s);
      }
      w[t] = s;
    }
    let chunk_max = tree_max(lid, cmax);
    let visible_any = chunk_max > HIDDEN;
    let mn = select(m, select(chunk_max, max(m, chunk_max), seen), visible_any);
    var mass = 0.0;
    for (var t = lid; t < KC; t += WG) {
      let s = w[t];
      let x = select(0.0, exp(s - mn), s > HIDDEN);
      w[t] = x;
      mass += x;
    }
    let chunk_mass = tree_sum(lid, mass); // its barriers also publish the weights in w
    // acc and ℓ are 0 until the first visible key; a chunk with none leaves them as they are.
    let alpha = select(1.0, select(0.0, exp(m - mn), seen), visible_any);
    ell = ell * alpha + chunk_mass;
    let n = min(KC, i + 1u - c0);
    for (var r = 0u; r < DPT; r++) {
      let d = lid + r * WG;
      if (d < Dh) {
        var a = acc[r] * alpha;
        for (var t = 0u; t < n; t++) {
          let x = w[t];
          if (x > 0.0) {
            let j = c0 + t;
            var vx = 0.0;
            if (j == i) { vx = v_new[new_at + d]; } else { vx = v_cache[(b * P.Smax + j) * kvw + kh * Dh + d]; }
            a += x * vx;
          }
        }
        acc[r] = a;
      }
    }
    m = mn;
    seen = seen || visible_any;
    workgroupBarrier(); // all reads of w done before the next chunk overwrites it
  }
  let inv = select(0.0, 1.0 / ell, seen);
  for (var r = 0u; r < DPT; r++) {
    let d = lid + r * WG;
    if (d < Dh) { out[e * Dh + d] = acc[r] * inv; }
  }
}
