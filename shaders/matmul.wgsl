// Dense layer: C = op(A)·op(B) (+ bias) (+ residual) (+ C when accumulating), register-blocked,
// without workgroup memory or barriers.
//
// Math: C[m,n] = ((Σ_k opA[m,k]·opB[k,n] + (has_bias ? bias[n] : 0)) + (has_residual ? R[m,n] : 0))
//                + (accumulate ? C_old[m,n] : 0), summed in that order in f32; the dot product is
//   one accumulator per output, k = 0, 1, …, K−1 (a product, then an add), so the fused residual
//   gives exactly the bits of a separate add(R, matmul) (the transformer's x + c_proj(...)), and
//   both entry points below give the same bits.
//   has_gelu: also act[m,n] = gelu(C[m,n]) (tanh approximation, the formula and f32 operations of
//   elementwise.wgsl's gelu_forward), so the MLP's c_fc and its GELU are one dispatch.
//   opA(m,k) = a[m·a_rs + k·a_ks]: A stored (M,K) is (a_rs, a_ks) = (K, 1), Aᵀ of A stored (K,M)
//   is (1, M). opB(k,n) = b[k·b_ks + n·b_ns]: B stored (K,N) is (N, 1), Bᵀ of B stored (N,K) is
//   (1, K). One kernel serves the forward and both backward products (src/ops/matmul.ts):
//   y     = a·b | a·bᵀ                         (A as stored, B as the layer)
//   gradA = gradOut·bᵀ | gradOut·b             (A as stored, B read the other way round)
//   gradB += aᵀ·gradOut | gradOutᵀ·a           (A transposed, accumulate 1)
// bias_grad: gradBias[n] += Σ_m gradOut[m,n], m in order, one thread per column.
// Reference: src/reference/nn/matmul.ts (matmulRef, matmulBackwardRef).
//
// Bindings (matmul):    0 uniform P, 1 a f32, 2 b f32, 3 bias (N) f32 (any buffer when
//                       has_bias = 0), 4 c (M,N) f32 read_write, 5 residual (M,N) f32 (any buffer
//                       but c when has_residual = 0), 6 act (M,N) f32 read_write (a spare buffer,
//                       unwritten, when has_gelu = 0).
// Bindings (bias_grad): 0 uniform P (M, N; the rest unused), 1 grad_out (M,N) f32, 2 grad_bias (N)
//                       f32 read_write.
// Layout (matmul_8x8 / matmul_4x4): one invocation per 8×8 (4×4) block of C, WG invocations per
//   workgroup, consecutive invocations along N: t = ⌊m/8⌋·⌈N/8⌉ + ⌊n/8⌋. Each k step loads 8 + 8
//   (4 + 4) operands for 64 (16) products. Rows and columns past the edge load a clamped
//   in-bounds element and are never stored. Grid: ⌈blocks/WG⌉ workgroups, 2-D past 65535:
//   t = gid.x + gid.y·num_workgroups.x·WG.
//   Why no workgroup tiles: on a CPU implementation of WebGPU (SwiftShader: 4-lane SIMD, every
//   load with a lane-varying address is 4 scalar loads, and a barrier turns each 4-lane group into
//   a coroutine) a 16×16 tiled kernel spends its time switching coroutines, and operands per
//   product is what counts; the 8×8 block needs 0.25 loads per product. On a GPU both entries are
//   plain register-blocked kernels reading through the cache; the dispatcher picks 4×4 where the
//   8×8 grid would be too small to fill a GPU.
// Layout (bias_grad): one invocation per column, WG per workgroup, grid ⌈N/WG⌉.

const WG: u32 = 64u;

struct Params {
  M: u32,
  K: u32,
  N: u32,
  a_rs: u32,
  a_ks: u32,
  b_ks: u32,
  b_ns: u32,
  has_bias: u32,
  accumulate: u32,
  has_residual: u32,
  has_gelu: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<storage, read> residual: array<f32>;
@group(0) @binding(6) var<storage, read_write> act: array<f32>;
// bias_grad aliases: grad_out on binding 1 (= a), grad_bias on binding 2.
@group(0) @binding(2) var<storage, read_write> grad_bias: array<f32>;

fn thread_index(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

/** Offset of row m of opA (clamped into range), and of column n of opB (clamped). */
fn a_row(m: u32) -> u32 {
  return min(m, P.M - 1u) * P.a_rs;
}
fn b_col(n: u32) -> u32 {
  return min(n, P.N - 1u) * P.b_ns;
}

@compute @workgroup_size(WG)
fn matmul_8x8(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = thread_index(gid, nwg);
  let nb = (P.N + 7u) / 8u;
  let m0 = (t / nb) * 8u;
  let n0 = (t % nb) * 8u;
  if (m0 >= P.M) { return; }
  let r0 = a_row(m0); let r1 = a_row(m0 + 1u); let r2 = a_row(m0 + 2u); let r3 = a_row(m0 + 3u);
  let r4 = a_row(m0 + 4u); let r5 = a_row(m0 + 5u); let r6 = a_row(m0 + 6u); let r7 = a_row(m0 + 7u);
  let c0 = b_col(n0); let c1 = b_col(n0 + 1u); let c2 = b_col(n0 + 2u); let c3 = b_col(n0 + 3u);
  let c4 = b_col(n0 + 4u); let c5 = b_col(n0 + 5u); let c6 = b_col(n0 + 6u); let c7 = b_col(n0 + 7u);
  // Row i of the block: acc_i0 (columns n0..n0+3), acc_i1 (n0+4..n0+7).
  var acc00 = vec4f(0.0); var acc01 = vec4f(0.0); var acc10 = vec4f(0.0); var acc11 = vec4f(0.0);
  var acc20 = vec4f(0.0); var acc21 = vec4f(0.0); var acc30 = vec4f(0.0); var acc31 = vec4f(0.0);
  var acc40 = vec4f(0.0); var acc41 = vec4f(0.0); var acc50 = vec4f(0.0); var acc51 = vec4f(0.0);
  var acc60 = vec4f(0.0); var acc61 = vec4f(0.0); var acc70 = vec4f(0.0); var acc71 = vec4f(0.0);
  for (var k = 0u; k < P.K; k++) {
    let ak = k * P.a_ks;
    let bk = k * P.b_ks;
    let lo = vec4f(b[bk + c0], b[bk + c1], b[bk + c2], b[bk + c3]);
    let hi = vec4f(b[bk + c4], b[bk + c5], b[bk + c6], b[bk + c7]);
    let x0 = a[r0 + ak]; acc00 += x0 * lo; acc01 += x0 * hi;
    let x1 = a[r1 + ak]; acc10 += x1 * lo; acc11 += x1 * hi;
    let x2 = a[r2 + ak]; acc20 += x2 * lo; acc21 += x2 * hi;
    let x3 = a[r3 + ak]; acc30 += x3 * lo; acc31 += x3 * hi;
    let x4 = a[r4 + ak]; acc40 += x4 * lo; acc41 += x4 * hi;
    let x5 = a[r5 + ak]; acc50 += x5 * lo; acc51 += x5 * hi;
    let x6 = a[r6 + ak]; acc60 += x6 * lo; acc61 += x6 * hi;
    let x7 = a[r7 + ak]; acc70 += x7 * lo; acc71 += x7 * hi;
  }
  store4(m0, n0, acc00); store4(m0, n0 + 4u, acc01);
  store4(m0 + 1u, n0, acc10); store4(m0 + 1u, n0 + 4u, acc11);
  store4(m0 + 2u, n0, acc20); store4(m0 + 2u, n0 + 4u, acc21);
  store4(m0 + 3u, n0, acc30); store4(m0 + 3u, n0 + 4u, acc31);
  store4(m0 + 4u, n0, acc40); store4(m0 + 4u, n0 + 4u, acc41);
  store4(m0 + 5u, n0, acc50); store4(m0 + 5u, n0 + 4u, acc51);
  store4(m0 + 6u, n0, acc60); store4(m0 + 6u, n0 + 4u, acc61);
  store4(m0 + 7u, n0, acc70); store4(m0 + 7u, n0 + 4u, acc71);
}

@compute @workgroup_size(WG)
fn matmul_4x4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = thread_index(gid, nwg);
  let nb = (P.N + 3u) / 4u;
  let m0 = (t / nb) * 4u;
  let n0 = (t % nb) * 4u;
  if (m0 >= P.M) { return; }
  let r0 = a_row(m0); let r1 = a_row(m0 + 1u); let r2 = a_row(m0 + 2u); let r3 = a_row(m0 + 3u);
  let c0 = b_col(n0); let c1 = b_col(n0 + 1u); let c2 = b_col(n0 + 2u); let c3 = b_col(n0 + 3u);
  var acc0 = vec4f(0.0); var acc1 = vec4f(0.0); var acc2 = vec4f(0.0); var acc3 = vec4f(0.0);
  for (var k = 0u; k < P.K; k++) {
    let ak = k * P.a_ks;
    let bk = k * P.b_ks;
    let row = vec4f(b[bk + c0], b[bk + c1], b[bk + c2], b[bk + c3]);
    acc0 += a[r0 + ak] * row;
    acc1 += a[r1 + ak] * row;
    acc2 += a[r2 + ak] * row;
    acc3 += a[r3 + ak] * row;
  }
  store4(m0, n0, acc0);
  store4(m0 + 1u, n0, acc1);
  store4(m0 + 2u, n0, acc2);
  store4(m0 + 3u, n0, acc3);
}

const GELU_C: f32 = 0.7978845608028654; // √(2/π)
const GELU_A: f32 = 0.044715;

/** ½x(1 + tanh u) = x·sigmoid(2u), u = c(x + 0.044715x³), with e = exp(−2|u|) ≤ 1 (as gelu_forward). */
fn gelu(x: f32) -> f32 {
  let u = GELU_C * (x + GELU_A * x * x * x);
  let e = exp(-2.0 * abs(u));
  let inv = 1.0 / (1.0 + e);
  return x * select(e * inv, inv, u >= 0.0);
}

/** Writes the outputs (m, n..n+3) held in `v` that lie inside C, with the epilogue of the header. */
fn store4(m: u32, n: u32, v: vec4f) {
  if (m >= P.M) { return; }
  for (var j = 0u; j < 4u; j++) {
    let col = n + j;
    if (col >= P.N) { return; }
    var x = v[j];
    if (P.has_bias == 1u) { x += bias[col]; }
    let idx = m * P.N + col;
    if (P.has_residual == 1u) { x += residual[idx]; }
    if (P.accumulate == 1u) { x += c[idx]; }
    c[idx] = x;
    if (P.has_gelu == 1u) { act[idx] = gelu(x); }
  }
}

@compute @workgroup_size(WG)
fn bias_grad(@builtin(global_invocation_id) gid: vec3u) {
  let n = gid.x;
  if (n >= P.N) { return; }
  var s = 0.0;
  for (var m = 0u; m < P.M; m++) { s += a[m * P.N + n]; }
  grad_bias[n] += s;
}
