// One KV-cached decode position through the whole lm model in ONE dispatch (the rollout's
// per-token chain before sampling: it used to be embedding + 7 dispatches per block + ln_f + head).
// In decode every sequence row is independent, so one workgroup owns row b and keeps its
// activations in workgroup memory; barriers separate the steps.
//
// Math (per row b, position p = pos; all f32; the per-op kernels' formulas):
//   x   = wte[clamp(tok)] + wpe[clamp(position)]          tok = sequences[b,p], position = positions[b,p]
//   per block l:
//     h   = LN(x; ln_1)      LN(x) = (x − μ)·r·γ + β, μ = Σx/D, r = 1/sqrt(Σ(x − μ)²/D + eps)
//     qkv = h·W_attn + b_attn                              (3D) = q | k | v
//     kv[l].k[b,p] = k, kv[l].v[b,p] = v                   (cache write)
//     per head: s_j = q·k_j/√Dh over j ≤ p with mask[b,j] = 1; P = softmax(s) (max-subtracted);
//               att = Σ_j P_j v_j (k_p, v_p from this step); no visible key → att = 0
//     mid = x + att·W_proj + b_proj
//     h   = LN(mid; ln_2);  fc = gelu(h·W_fc + b_fc)       (tanh approximation, matmul.wgsl's gelu)
//     x   = mid + fc·W_mlp + b_mlp
//   logits[b,:] = LN(x; ln_f)·wteᵀ                          (tied head; per logit 4 partial sums, added pairwise)
// Reference: src/reference/seq/decode.ts (decodeStepRef, composed of the per-op references).
//
// Bindings: 0 uniform U (below)
//           1 params    (N)                    f32  the model's flat parameters (offsets in U)
//           2 kv        (2·nLayer·kv_stride)   f32  layer l's k cache (B, Smax, D) at 2l·kv_stride, v at (2l+1)·kv_stride
//           3 sequences (B, Smax)              i32
//           4 positions (B, Smax)              i32
//           5 mask      (B, Smax)              f32  1 = real token
//           6 logits    (B, V)                 f32  out
//           7 params4   (N/4)                  vec4f the same buffer as binding 1, read 4 columns at a time
// Layout: one workgroup of WG threads per row b (grid B); thread t handles outputs t, t + WG, …
//   Block l's offsets are block 0's + l·layer_stride (the flat layout repeats per block).
//   The four dense layers give each thread 4 adjacent output columns (one vec4 of weights per k).
// Limits (checked on the host): D ≤ 256 and a multiple of 4, every offset a multiple of 4,
//   H·Smax ≤ 1024, D/H ≤ 64.

override WG: u32 = 64;

const MAX_D: u32 = 256u;
const MAX_SCORES: u32 = 1024u;

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

var<workgroup> x: array<f32, MAX_D>;        // residual stream
var<workgroup> mid: array<f32, MAX_D>;      // residual after attention
var<workgroup> h: array<f32, MAX_D>;        // LayerNorm output
var<workgroup> att: array<f32, MAX_D>;      // attention output
var<workgroup> qkv: array<f32, 768>;        // 3·MAX_D
var<workgroup> fc: array<f32, 1024>;        // 4·MAX_D, post-GELU
var<workgroup> probs: array<f32, MAX_SCORES>; // (H, Smax) scores, then probabilities

const GELU_C: f32 = 0.7978845608028654; // √(2/π)
const GELU_A: f32 = 0.044715;

/** ½x(1 + tanh u) = x·sigmoid(2u), u = c(x + 0.044715x³), e = exp(−2|u|) ≤ 1 (matmul.wgsl's gelu). */
fn gelu(v: f32) -> f32 {
  let t = GELU_C * (v + GELU_A * v * v * v);
  let e = exp(-2.0 * abs(t));
  let inv = 1.0 / (1.0 + e);
  return v * select(e * inv, inv, t >= 0.0);
}

/** h = LN(src) with gamma/beta at offsets g, bb; src is x (which = 0) or mid (1). Every thread
 *  computes μ and r itself (same order, same values) so no reduction barrier is needed. */
fn layer_norm(which: u32, g: u32, bb: u32, t: u32) {
  let D = u.D;
  let inv_d = 1.0 / f32(D);
  var s = 0.0;
  for (var d = 0u; d < D; d++) { s += select(x[d], mid[d], which == 1u); }
  let mu = s * inv_d;
  var q = 0.0;
  for (var d = 0u; d < D; d++) {
    let c = select(x[d], mid[d], which == 1u) - mu;
    q = fma(c, c, q);
  }
  let r = inverseSqrt(q * inv_d + u.eps);
  for (var d = t; d < D; d += WG) {
    h[d] = (select(x[d], mid[d], which == 1u) - mu) * r * params[g + d] + params[bb + d];
  }
}

@compute @workgroup_size(WG)
fn decode_step(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let b = wid.x;
  let t = lid.x;
  let D = u.D;
  let H = u.H;
  let Dh = D / H;
  let Smax = u.Smax;
  let p = u.pos;
  let cell = b * Smax + p;
  let tok = u32(clamp(sequences[cell], 0, i32(u.V) - 1));
  let ps = u32(clamp(positions[cell], 0, i32(u.P) - 1));
  for (var d = t; d < D; d += WG) { x[d] = params[u.wte + tok * D + d] + params[u.wpe + ps * D + d]; }
  workgroupBarrier();

  for (var l = 0u; l < u.n_layer; l++) {
    let o = l * u.layer_stride;
    layer_norm(0u, u.ln1_g + o, u.ln1_b + o, t);
    workgroupBarrier();
    // qkv = h·W_attn + b_attn, W (D, 3D) row-major.
    for (var j4 = t; j4 < 3u * D / 4u; j4 += WG) {
      var acc = params4[(u.attn_b + o) / 4u + j4];
      let w0 = (u.attn_w + o) / 4u + j4;
      for (var k = 0u; k < D; k++) { acc = fma(vec4f(h[k]), params4[w0 + k * (3u * D / 4u)], acc); }
      for (var i = 0u; i < 4u; i++) { qkv[4u * j4 + i] = acc[i]; }
    }
    workgroupBarrier();
    // Cache write of position p, and the scores of every head against keys j < p (cache) and p (here).
    let k_base = 2u * l * u.kv_stride + b * Smax * D;
    let v_base = k_base + u.kv_stride;
    for (var d = t; d < D; d += WG) {
      kv[k_base + p * D + d] = qkv[D + d];
      kv[v_base + p * D + d] = qkv[2u * D + d];
    }
    for (var e = t; e < H * (p + 1u); e += WG) {
      let hh = e / (p + 1u);
      let j = e % (p + 1u);
      var s = 0.0;
      for (var d = 0u; d < Dh; d++) {
        let kj = select(kv[k_base + j * D + hh * Dh + d], qkv[D + hh * Dh + d], j == p);
        s += qkv[hh * Dh + d] * kj;
      }
      probs[hh * Smax + j] = s * u.scale;
    }
    workgroupBarrier();
    // Softmax of head hh over its visible keys, one thread per head (serial, fixed order).
    if (t < H) {
      var m = -3.0e38;
      var any_visible = false;
      for (var j = 0u; j <= p; j++) {
        if (mask[b * Smax + j] == 1.0) { m = max(m, probs[t * Smax + j]); any_visible = true; }
      }
      var total = 0.0;
      for (var j = 0u; j <= p; j++) {
        var w = 0.0;
        if (mask[b * Smax + j] == 1.0) { w = exp(probs[t * Smax + j] - m); }
        probs[t * Smax + j] = w;
        total += w;
      }
      let inv = select(0.0, 1.0 / total, any_visible);
      for (var j = 0u; j <= p; j++) { probs[t * Smax + j] = probs[t * Smax + j] * inv; }
    }
    workgroupBarrier();
    for (var d = t; d < D; d += WG) {
      let hh = d / Dh;
      var acc = 0.0;
      for (var j = 0u; j <= p; j++) {
        let vj = select(kv[v_base + j * D + d], qkv[2u * D + d], j == p);
        acc += probs[hh * Smax + j] * vj;
      }
      att[d] = acc;
    }
    workgroupBarrier();
    // mid = x + att·W_proj + b_proj, W (D, D).
    for (var j4 = t; j4 < D / 4u; j4 += WG) {
      var acc = params4[(u.proj_b + o) / 4u + j4];
      let w0 = (u.proj_w + o) / 4u + j4;
      for (var k = 0u; k < D; k++) { acc = fma(vec4f(att[k]), params4[w0 + k * (D / 4u)], acc); }
      for (var i = 0u; i < 4u; i++) { mid[4u * j4 + i] = x[4u * j4 + i] + acc[i]; }
    }
    workgroupBarrier();
    layer_norm(1u, u.ln2_g + o, u.ln2_b + o, t);
    workgroupBarrier();
    // fc = gelu(h·W_fc + b_fc), W (D, 4D).
    for (var j4 = t; j4 < 4u * D / 4u; j4 += WG) {
      var acc = params4[(u.fc_b + o) / 4u + j4];
      let w0 = (u.fc_w + o) / 4u + j4;
      for (var k = 0u; k < D; k++) { acc = fma(vec4f(h[k]), params4[w0 + k * (4u * D / 4u)], acc); }
      for (var i = 0u; i < 4u; i++) { fc[4u * j4 + i] = gelu(acc[i]); }
    }
    workgroupBarrier();
    // x = mid + fc·W_mlp + b_mlp, W (4D, D).
    for (var j4 = t; j4 < D / 4u; j4 += WG) {
      var acc = params4[(u.mlp_b + o) / 4u + j4];
      let w0 = (u.mlp_w + o) / 4u + j4;
      for (var k = 0u; k < 4u * D; k++) { acc = fma(vec4f(fc[k]), params4[w0 + k * (D / 4u)], acc); }
      for (var i = 0u; i < 4u; i++) { x[4u * j4 + i] = mid[4u * j4 + i] + acc[i]; }
    }
    workgroupBarrier();
  }
  layer_norm(0u, u.lnf_g, u.lnf_b, t);
  workgroupBarrier();
  // logits = h·wteᵀ, wte (V, D).
  for (var v = t; v < u.V; v += WG) {
    var acc = vec4f(0.0);
    let w0 = (u.wte + v * D) / 4u;
    for (var k4 = 0u; k4 < D / 4u; k4++) {
      acc = fma(vec4f(h[4u * k4], h[4u * k4 + 1u], h[4u * k4 + 2u], h[4u * k4 + 3u]), params4[w0 + k4], acc);
    }
    logits[b * u.V + v] = (acc.x + acc.y) + (acc.z + acc.w);
  }
}
