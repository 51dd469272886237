// KV-cached causal attention for L new positions [start, start+L) of every sequence (rollout:
// prefill with start = 0, then decode with L = 1).
//
// Math: kv_cache_write copies the new rows' k, v into the caches; then for new position l
// (absolute position i = start + l), with visible(j) = j ≤ i and mask[b,j] = 1:
//   s_j = q_l·kCache[b,j] / √Dh,  P_j = softmax over visible j (max-subtracted),
//   out_l = Σ_j P_j vCache[b,j];   no visible key → out_l = 0.
// The row computation is attention.wgsl's, operation for operation, with keys and values read
// from the cache, so cached decoding reproduces the full-sequence outputs.
// attention_decode (L = 1 only) is kv_cache_write + attention_cached in one dispatch: the thread
// of (b, h) is the only one that reads head h's columns of the new position, so it writes them
// itself just before (same invocation: program order, no barrier needed). With L > 1 a query reads
// keys that other threads write, so the prefill keeps the two dispatches.
// Reference: src/reference/seq/attention.ts (attentionCachedRef).
//
// Bindings: 0 uniform P {L, Smax, H, D, start, scale = 1/√Dh, rows = B·H·L, total = B·L·D}
//           1 qkv     (B·L, 3D)       f32   rows [q | k | v] of the new positions
//           2 k_cache (B, Smax, D)    f32
//           3 v_cache (B, Smax, D)    f32
//           4 mask    (B, Smax)       f32   1 = real token (attention_cached only)
//           5 out     (B·L, D)        f32   (attention_cached only)
//           6 scratch (B, H, L, Smax) f32   softmax row of each query (attention_cached only)
// Layout: kv_cache_write: one thread per (b, l, column), 1-D grid of B·L·D threads.
//         attention_decode: as attention_cached with L = 1 (bindings 1–6 as attention_cached).
//         attention_cached: one thread per (batch b, head h, new position l), 1-D grid of B·H·L
//         threads, each running its softmax row serially (no workgroup barriers; fixed order).

const WG: u32 = 64u;

struct Params {
  L: u32,
  Smax: u32,
  H: u32,
  D: u32,
  start: u32,
  scale: f32,
  rows: u32,
  total: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<storage, read_write> scratch: array<f32>;

@compute @workgroup_size(WG)
fn kv_cache_write(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= P.total) { return; }
  let D = P.D;
  let row = e / D;                 // b·L + l
  let c = e % D;
  let b = row / P.L;
  let l = row % P.L;
  let dst = (b * P.Smax + P.start + l) * D + c;
  k_cache[dst] = qkv[row * 3u * D + D + c];
  v_cache[dst] = qkv[row * 3u * D + 2u * D + c];
}

@compute @workgroup_size(WG)
fn attention_cached(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x;
  if (e >= P.rows) { return; }
  attend_row(e);
}

@compute @workgroup_size(WG)
fn attention_decode(@builtin(global_invocation_id) gid: vec3u) {
  let e = gid.x; // b·H + h (L = 1)
  if (e >= P.rows) { return; }
  let D = P.D;
  let Dh = D / P.H;
  let h = e % P.H;
  let b = e / P.H;
  let src = b * 3u * D + h * Dh;
  let dst = (b * P.Smax + P.start) * D + h * Dh;
  for (var d = 0u; d < Dh; d++) {
    k_cache[dst + d] = qkv[src + D + d];
    v_cache[dst + d] = qkv[src + 2u * D + d];
  }
  attend_row(e);
}

/** Softmax attention of query row e = (b, h, l) over the cached keys j ≤ start + l. */
fn attend_row(e: u32) {
  let L = P.L;
  let Smax = P.Smax;
  let D = P.D;
  let Dh = D / P.H;
  let l = e % L;
  let h = (e / L) % P.H;
  let b = e / (L * P.H);
  let i = P.start + l;
  let q_off = (b * L + l) * 3u * D + h * Dh;
  let p_off = e * Smax;

  var m = -3.0e38;
  var any_visible = false;
  for (var j = 0u; j <= i; j++) {
    var s = 0.0;
    if (mask[b * Smax + j] == 1.0) {
      let k_off = (b * Smax + j) * D + h * Dh;
      for (var d = 0u; d < Dh; d++) { s += qkv[q_off + d] * k_cache[k_off + d]; }
      s *= P.scale;
      m = max(m, s);
      any_visible = true;
    }
    scratch[p_off + j] = s;
  }
  var total = 0.0;
  for (var j = 0u; j <= i; j++) {
    var w = 0.0;
    if (mask[b * Smax + j] == 1.0) { w = exp(scratch[p_off + j] - m); }
    scratch[p_off + j] = w;
    total += w;
  }
  let inv = select(0.0, 1.0 / total, any_visible);
  for (var j = 0u; j <= i; j++) { scratch[p_off + j] = scratch[p_off + j] * inv; }

  let o_off = (b * L + l) * D + h * Dh;
  for (var d = 0u; d < Dh; d++) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) {
      acc += scratch[p_off + j] * v_cache[(b * Smax + j) * D + h * Dh + d];
    }
    out[o_off + d] = acc;
  }
}
