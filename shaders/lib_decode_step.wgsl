// The fused decode step's body, shared by decode_step.wgsl (wm in workgroup memory) and
// decode_step_scratch.wgsl (wm in a storage buffer, for CPU adapters): the math, bindings and
// layout are in decode_step.wgsl's header. The including shader declares `WG`, `WM_STRIDE` (the
// words between two groups' regions of wm: 0 or WM), the array `wm` and `wm_sync()`, the barrier
// that makes one step's writes to wm visible to every thread of the group before the next step.

struct U {
  B: u32,
  D: u32,
  H: u32,
  V: u32,
  P: u32,         // rows of wpe
  Smax: u32,
  pos: u32,
  n_layer: u32,
  eps: f32,
  scale: f32,     // 1/√Dh
  kv_stride: u32,
  rows: u32,      // R: sequence rows per workgroup
  wte: u32,
  wpe: u32,
  lnf_g: u32,
  lnf_b: u32,
  layer_stride: u32,
  ln1_g: u32,
  ln1_b: u32,
  attn_w: u32,
  attn_b: u32,
  proj_w: u32,
  proj_b: u32,
  ln2_g: u32,
  ln2_b: u32,
  fc_w: u32,
  fc_b: u32,
  mlp_w: u32,
  mlp_b: u32,
}

@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read_write> kv: array<f32>;
@group(0) @binding(3) var<storage, read> sequences: array<i32>;
@group(0) @binding(4) var<storage, read> positions: array<i32>;
@group(0) @binding(5) var<storage, read> mask: array<f32>;
@group(0) @binding(6) var<storage, read_write> logits: array<f32>;
@group(0) @binding(7) var<storage, read> params4: array<vec4f>; // binding 1 again, 4 floats at a time

// Regions of wm for R rows of width D (row r of a region at region + r·width), from the group's
// first word X (0 in workgroup memory; wid.x·WM in decode_step_scratch's buffer):
//   X (R·D; x, then mid), HH = X + R·D (R·D; h, then att), Q = X + 2R·D (R·D: q),
//   SC = X + 3R·D (R·H·Smax scores; row r, head hh, key j at SC + (r·H + hh)·Smax + j),
//   FC = Q (R·4D: the MLP's hidden, over q and the scores, both dead by then),
//   ST = Q + max(R·D + R·H·Smax, 4R·D) (2R: μ, r of each row).

/** The group's first sequence row (wid.x·R), for the dense layer's cache writes. */
var<private> group_row0: u32;

const GELU_C: f32 = 0.7978845608028654; // √(2/π)
const GELU_A: f32 = 0.044715;

/** ½x(1 + tanh u) = x·sigmoid(2u), u = c(x + 0.044715x³), e = exp(−2|u|) ≤ 1 (matmul.wgsl's gelu). */
fn gelu(v: f32) -> f32 {
  let t = GELU_C * (v + GELU_A * v * v * v);
  let e = exp(-2.0 * abs(t));
  let inv = 1.0 / (1.0 + e);
  return v * select(e * inv, inv, t >= 0.0);
}

/** Row statistics of wm[src + r·D ..] for r < nr: thread r writes (μ, 1/sqrt(var + eps)) at st + 2r. */
fn ln_stats(src: u32, st: u32, nr: u32, t: u32) {
  if (t >= nr) { return; }
  let D = u.D;
  let base = src + t * D;
  let inv_d = 1.0 / f32(D);
  var s = 0.0;
  for (var d = 0u; d < D; d++) { s += wm[base + d]; }
  let mu = s * inv_d;
  var q = 0.0;
  for (var d = 0u; d < D; d++) {
    let c = wm[base + d] - mu;
    q = fma(c, c, q);
  }
  wm[st + 2u * t] = mu;
  wm[st + 2u * t + 1u] = inverseSqrt(q * inv_d + u.eps);
}

/** wm[dst ..] = LN(wm[src ..]) with gamma/beta at params offsets g, bb, after ln_stats. */
fn ln_apply(src: u32, dst: u32, st: u32, g: u32, bb: u32, nr: u32, t: u32) {
  let D = u.D;
  for (var e = t; e < nr * D; e += WG) {
    let r = e / D;
    let d = e % D;
    wm[dst + e] = (wm[src + e] - wm[st + 2u * r]) * wm[st + 2u * r + 1u] * params[g + d] + params[bb + d];
  }
}

/**
 * Dense layer for the group's rows: out[r, n] = bias[n] + Σ_k in[r, k]·W[k, n], W (K, N) row-major
 * at params offset w, bias at bo (both multiples of 4). Thread t owns columns 4j..4j+3 of every row.
 * mode 0: wm[dst + r·N + n] = y; 1: wm[dst + r·N + n] = gelu(y); 2: wm[dst + r·N + n] = wm[res + r·N + n] + y;
 * 3 (qkv, N = 3D): q to wm[dst + r·D + n], k and v to layer l's caches at position pos, res = l's k offset.
 */
fn dense(src: u32, K: u32, N: u32, w: u32, bo: u32, dst: u32, mode: u32, res: u32, nr: u32, t: u32) {
  let n4 = N / 4u;
  // Rows past nr repeat the last row (same loads, results dropped): one code path for any R ≤ 4.
  let a0 = src;
  let a1 = src + min(1u, nr - 1u) * K;
  let a2 = src + min(2u, nr - 1u) * K;
  let a3 = src + min(3u, nr - 1u) * K;
  for (var j = t; j < n4; j += WG) {
    let bias4 = params4[bo / 4u + j];
    var acc0 = bias4;
    var acc1 = bias4;
    var acc2 = bias4;
    var acc3 = bias4;
    var wi = w / 4u + j;
    for (var k = 0u; k < K; k++) {
      let wk = params4[wi];
      acc0 += wm[a0 + k] * wk;
      acc1 += wm[a1 + k] * wk;
      acc2 += wm[a2 + k] * wk;
      acc3 += wm[a3 + k] * wk;
      wi += n4;
    }
    dense_out(dst, N, 4u * j, 0u, acc0, mode, res, nr);
    dense_out(dst, N, 4u * j, 1u, acc1, mode, res, nr);
    dense_out(dst, N, 4u * j, 2u, acc2, mode, res, nr);
    dense_out(dst, N, 4u * j, 3u, acc3, mode, res, nr);
  }
}

fn dense_out(dst: u32, N: u32, n: u32, r: u32, y: vec4f, mode: u32, res: u32, nr: u32) {
  if (r >= nr) { return; }
  if (mode == 3u) {
    qkv_out(dst, n, r, y, res);
    return;
  }
  let o = r * N + n;
  for (var i = 0u; i < 4u; i++) {
    var v = y[i];
    if (mode == 1u) { v = gelu(v); } else if (mode == 2u) { v = wm[res + o + i] + v; }
    wm[dst + o + i] = v;
  }
}

/** Columns n..n+3 of row r's q | k | v (never across a part: D is a multiple of 4). */
fn qkv_out(q: u32, n: u32, r: u32, y: vec4f, k_base: u32) {
  let D = u.D;
  if (n < D) {
    for (var i = 0u; i < 4u; i++) { wm[q + r * D + n + i] = y[i]; }
    return;
  }
  let part = n / D; // 1 = k, 2 = v
  let c = k_base + (part - 1u) * u.kv_stride + ((group_row0 + r) * u.Smax + u.pos) * D + (n - part * D);
  for (var i = 0u; i < 4u; i++) { kv[c + i] = y[i]; }
}

@compute @workgroup_size(WG)
fn decode_step(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let t = lid.x;
  let D = u.D;
  let H = u.H;
  let Dh = D / H;
  let Smax = u.Smax;
  let p = u.pos;
  let R = u.rows;
  let b0 = wid.x * R;
  group_row0 = b0;
  let nr = min(R, u.B - b0);
  let RD = R * D;
  let X = wid.x * WM_STRIDE; // the group's first word of wm
  let HH = X + RD;
  let Q = X + 2u * RD;
  let SC = X + 3u * RD;
  let FC = Q;
  let ST = Q + max(RD + R * H * Smax, 4u * RD);

  for (var e = t; e < nr * D; e += WG) {
    let r = e / D;
    let d = e % D;
    let cell = (b0 + r) * Smax + p;
    let tok = u32(clamp(sequences[cell], 0, i32(u.V) - 1));
    let ps = u32(clamp(positions[cell], 0, i32(u.P) - 1));
    wm[X + e] = params[u.wte + tok * D + d] + params[u.wpe + ps * D + d];
  }
  wm_sync();

  for (var l = 0u; l < u.n_layer; l++) {
    let o = l * u.layer_stride;
    ln_stats(X, ST, nr, t);
    wm_sync();
    ln_apply(X, HH, ST, u.ln1_g + o, u.ln1_b + o, nr, t);
    wm_sync();
    let k_base = 2u * l * u.kv_stride;
    let v_base = k_base + u.kv_stride;
    dense(HH, D, 3u * D, u.attn_w + o, u.attn_b + o, Q, 3u, k_base, nr, t); // q | k | v = h·W_attn + b_attn
    storageBarrier(); // position p's k and v, written to the caches, are read below
    wm_sync();
    // The scores of every head against keys j ≤ p.
    let np = p + 1u;
    for (var e = t; e < nr * H * np; e += WG) {
      let j = e % np;
      let rh = e / np; // r·H + hh
      let r = rh / H;
      let hh = rh % H;
      let q = Q + r * D + hh * Dh;
      let kc = k_base + ((b0 + r) * Smax + j) * D + hh * Dh;
      var s = 0.0;
      for (var d = 0u; d < Dh; d++) { s += wm[q + d] * kv[kc + d]; }
      wm[SC + rh * Smax + j] = s * u.scale;
    }
    wm_sync();
    // Softmax of (row, head) over its visible keys, one thread each (serial, fixed order).
    if (t < nr * H) {
      let mrow = (b0 + t / H) * Smax;
      let sc = SC + t * Smax;
      var m = -3.0e38;
      var any_visible = false;
      for (var j = 0u; j <= p; j++) {
        if (mask[mrow + j] == 1.0) { m = max(m, wm[sc + j]); any_visible = true; }
      }
      var total = 0.0;
      for (var j = 0u; j <= p; j++) {
        var w = 0.0;
        if (mask[mrow + j] == 1.0) { w = exp(wm[sc + j] - m); }
        wm[sc + j] = w;
        total += w;
      }
      let inv = select(0.0, 1.0 / total, any_visible);
      for (var j = 0u; j <= p; j++) { wm[sc + j] = wm[sc + j] * inv; }
    }
    wm_sync();
    // att (into HH) = Σ_j P_j v_j.
    for (var e = t; e < nr * D; e += WG) {
      let r = e / D;
      let d = e % D;
      let sc = SC + (r * H + d / Dh) * Smax;
      let vc = v_base + (b0 + r) * Smax * D + d;
      var acc = 0.0;
      for (var j = 0u; j <= p; j++) { acc += wm[sc + j] * kv[vc + j * D]; }
      wm[HH + e] = acc;
    }
    wm_sync();
    dense(HH, D, D, u.proj_w + o, u.proj_b + o, X, 2u, X, nr, t); // mid = x + att·W_proj + b_proj
    wm_sync();
    ln_stats(X, ST, nr, t);
    wm_sync();
    ln_apply(X, HH, ST, u.ln2_g + o, u.ln2_b + o, nr, t);
    wm_sync();
    dense(HH, D, 4u * D, u.fc_w + o, u.fc_b + o, FC, 1u, 0u, nr, t); // fc = gelu(h·W_fc + b_fc)
    wm_sync();
    dense(FC, 4u * D, D, u.mlp_w + o, u.mlp_b + o, X, 2u, X, nr, t); // x = mid + fc·W_mlp + b_mlp
    wm_sync();
  }
  ln_stats(X, ST, nr, t);
  wm_sync();
  ln_apply(X, HH, ST, u.lnf_g, u.lnf_b, nr, t);
  wm_sync();
  // logits = h·wteᵀ, wte (V, D): thread t owns vocabulary entries 4t..4t+3 of every row.
  let V = u.V;
  let h0 = HH;
  let h1 = HH + min(1u, nr - 1u) * D;
  let h2 = HH + min(2u, nr - 1u) * D;
  let h3 = HH + min(3u, nr - 1u) * D;
  for (var v0 = 4u * t; v0 < V; v0 += 4u * WG) {
    let w0 = u.wte + min(v0, V - 1u) * D;
    let w1 = u.wte + min(v0 + 1u, V - 1u) * D;
    let w2 = u.wte + min(v0 + 2u, V - 1u) * D;
    let w3 = u.wte + min(v0 + 3u, V - 1u) * D;
    var acc0 = vec4f(0.0);
    var acc1 = vec4f(0.0);
    var acc2 = vec4f(0.0);
    var acc3 = vec4f(0.0);
    for (var k = 0u; k < D; k++) {
      let wk = vec4f(params[w0 + k], params[w1 + k], params[w2 + k], params[w3 + k]);
      acc0 += wm[h0 + k] * wk;
      acc1 += wm[h1 + k] * wk;
      acc2 += wm[h2 + k] * wk;
      acc3 += wm[h3 + k] * wk;
    }
    head_out(b0, v0, 0u, acc0, nr);
    head_out(b0, v0, 1u, acc1, nr);
    head_out(b0, v0, 2u, acc2, nr);
    head_out(b0, v0, 3u, acc3, nr);
  }
}

fn head_out(b0: u32, v0: u32, r: u32, y: vec4f, nr: u32) {
  if (r >= nr) { return; }
  for (var i = 0u; i < 4u; i++) {
    if (v0 + i < u.V) { logits[(b0 + r) * u.V + v0 + i] = y[i]; }
  }
}
