// Element-wise ops of the transformer: GELU (tanh approximation, GPT-2) and its derivative, the
// residual add, axpy (gradient accumulation), scale, and fill (also how callers zero a gradient).
//
// Math: gelu(x) = ½x(1 + t), t = tanh(c(x + 0.044715x³)), c = √(2/π)
//       gelu'(x) = ½(1 + t) + ½x(1 − t²)·c(1 + 3·0.044715x²)
//       add: dst = src + src2; axpy: dst += alpha·src; scale: dst *= alpha;
//       fill: every 32-bit word of dst ← bits (the f32 or i32 pattern of the value).
// Reference: src/reference/nn/gelu.ts (geluRef, geluBackwardRef); the rest is plain arithmetic,
//   checked against float64 loops in tests/gpu/nn_elementwise.test.ts.
//
// Bindings: 0 uniform P {n, alpha, bits}; 1 dst (n) rw; 2 src (n); 3 src2 (n); all f32
//   (fill writes dst as raw u32 words, so it serves i32 tensors too).
//   gelu_forward: dst = y, src = x.  gelu_backward: dst = gradX, src = x, src2 = gradY.
// Layout: one thread per element, WG threads per workgroup; the grid may be 2-D when n needs
//   more than 65535 workgroups: i = gid.x + gid.y·(num_workgroups.x·WG).

override WG: u32 = 256;

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

// tanh through exp of a non-positive argument: exact at ±large inputs (no inf/inf = NaN).
fn tanh_safe(u: f32) -> f32 {
  let e = exp(-2.0 * abs(u));
  return sign(u) * (1.0 - e) / (1.0 + e);
}

@compute @workgroup_size(WG)
fn gelu_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  let v = src[i];
  let t = tanh_safe(GELU_C * (v + GELU_A * v * v * v));
  dst[i] = 0.5 * v * (1.0 + t);
}

@compute @workgroup_size(WG)
fn gelu_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  let v = src[i];
  let t = tanh_safe(GELU_C * (v + GELU_A * v * v * v));
  // (1 − t²) underflows to 0 before ½x·c(1 + 3Ax²) can overflow, but 0·inf would be NaN: guard.
  var tail = 0.0;
  if (abs(v) < 20.0) { tail = 0.5 * v * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_A * v * v); }
  dst[i] = src2[i] * (0.5 * (1.0 + t) + tail);
}

@compute @workgroup_size(WG)
fn add(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = index(gid, nwg);
  if (i >= P.n) { return; }
  dst[i] = src[i] + src2[i];
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
