// Element-wise ops of the transformer: GELU (tanh approximation, GPT-2) and its derivative, the
// residual add, the product mul, axpy (gradient accumulation), scale, and fill (also how callers
// zero a gradient).
//
// Math: gelu(x) = ½x(1 + tanh u) = x·s,  u = c(x + 0.044715x³), c = √(2/π), s = sigmoid(2u)
//       gelu'(x) = s + 2x·s(1 − s)·c(1 + 3·0.044715x²)
//       (s and s(1 − s) come from e = exp(−2|u|) ≤ 1: no cancellation in 1 + tanh u for x < 0,
//       no overflow for large |u|)
//       add: dst = src + src2; mul: dst = src·src2 (IEEE: 0·∞ = NaN); axpy: dst += alpha·src;
//       scale: dst *= alpha;
//       fill: every 32-bit word of dst ← bits (the f32 or i32 pattern of the value).
// Reference: src/reference/nn/gelu.ts (geluRef, geluBackwardRef), src/reference/nn/elementwise.ts
//   (mulRef); the rest is plain arithmetic, checked against float64 loops in
//   tests/gpu/nn_elementwise.test.ts.
//
// Bindings: 0 uniform P {n, alpha, bits}; 1 dst (n) rw; 2 src (n); 3 src2 (n); all f32
//   (fill writes dst as raw u32 words, so it serves i32 tensors too).
//   gelu_forward: dst = y, src = x.  gelu_backward: dst = gradX, src = x, src2 = gradY.
//   add, mul: dst = out, src = a, src2 = b.
// Layout: one thread per element, WG threads per workgroup; the grid may be 2-D when n needs
//   more than 65535 workgroups: i = gid.x + gid.y·(num_workgroups.x·WG).

const WG: u32 = 256u;

struct Params {
  n: u32,
  alpha: f32,
  bits: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst_bits: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<f32>;
@group(0) @binding(3) var<storage, read> src2: array<f32>;

const GELU_C: f32 = 0.7978845608028654; // √(2/π)
const GELU_A: f32 = 0.044715;

fn index(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

/** (s, s(1 − s)) for s = sigmoid(2u). */
fn sigmoid2(u: f32) -> vec2f {
  let e = exp(-2.0 * abs(u));
  let inv = 1.0 / (1.0 + e);
  let s = select(e * inv, inv, u >= 0.0);
  return vec2f(s, e * inv * inv);
}

@compute @workgroup_size(WG)
fn gelu_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  let v = src[i];
  dst[i] = v * sigmoid2(GELU_C * (v + GELU_A * v * v * v)).x;
}

@compute @workgroup_size(WG)
fn gelu_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  let v = src[i];
  let s = sigmoid2(GELU_C * (v + GELU_A * v * v * v));
  // s(1 − s) underflows to 0 long before the polynomial overflows; skip it then (0·∞ = NaN)
  var d = s.x;
  if (s.y > 0.0) { d += 2.0 * v * s.y * GELU_C * (1.0 + 3.0 * GELU_A * v * v); }
  dst[i] = src2[i] * d;
}

@compute @workgroup_size(WG)
fn add(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  dst[i] = src[i] + src2[i];
}

@compute @workgroup_size(WG)
fn mul(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  dst[i] = src[i] * src2[i];
}

@compute @workgroup_size(WG)
fn axpy(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  dst[i] = fma(P.alpha, src[i], dst[i]);
}

@compute @workgroup_size(WG)
fn scale(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  dst[i] = P.alpha * dst[i];
}

@compute @workgroup_size(WG)
fn fill(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  dst_bits[i] = P.bits;
}
