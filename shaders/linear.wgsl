// A dense layer against a frozen weight in nn.Linear's layout, W (out, in), stored as f16 (two
// values a word, read with the core unpack2x16float: no shader-f16 feature needed) or as f32,
// with f32 products and sums: the forward y = x·Wᵀ (+ bias) (+ residual) and the input gradient
// gradX = gradY·W of the backward (a frozen weight needs no gradient of its own).
//
// Math: C[m,n] = ((Σ_k X[m,k]·W(n,k) + (has_bias ? bias[n] : 0)) + (has_residual ? R[m,n] : 0))
//               + (accumulate ? C_old[m,n] : 0), in that order in f32; one accumulator per output,
//   k = 0, 1, …, K−1. W(n,k) = w[n·wn + k·wk] counted in weight elements:
//     forward   y (M,N) = x (M,K)·Wᵀ,  W stored (N,K):          wn = K, wk = 1
//     backward  gradX (M,K) = gradY (M,N)·W, the same storage:  the kernel's N is K, its K is N,
//               wn = 1, wk = K (W(k,n) read down a column)
//   W_F16 = 1: element e is half e & 1 of word e >> 1 (low half first); W_F16 = 0: bitcast<f32>.
// Reference: src/reference/nn/matmul.ts (matmulRef with transB, matmulBackwardRef's gradA) on
//   the weight's values (an f16 weight's values are exact f16 numbers).
//
// Bindings: 0 uniform P; 1 x (M,K) f32; 2 w (the weight, f16 pairs or f32 bits) u32; 3 bias (N)
//   f32 (any buffer when has_bias = 0); 4 y (M,N) f32 rw; 5 residual (M,N) f32 (any buffer but y
//   when has_residual = 0).
// Layout:
//   linear_tiled (GPUs): a workgroup of 16×16 threads computes a 64×64 tile of C, each thread a
//     4×4 block (rows m0 + 4·ty + i, columns n0 + 4·tx + j). Per step of BK = 16 along k the
//     workgroup stages X's 64×16 and W's 64×16 (widened to f32) in workgroup memory, each thread
//     loading 4 of each with consecutive threads on consecutive addresses (along k for X and for
//     the forward's W, along n for the backward's), then 16 multiply-adds of a vec4 by a scalar
//     per row: 64 products per 8 workgroup loads. Out-of-range rows, columns and k load 0 and
//     are never stored. Grid (⌈N/64⌉, ⌈M/64⌉).
//   linear_blocked (CPU adapters, where a barrier costs more than the loads it saves): one thread
//     per 8×8 block of C, no workgroup memory, loading 8 + 8 operands per k for 64 products (the
//     existing matmul_8x8's scheme); edge rows/columns load clamped elements and are not stored.
//     An f16 weight loads one word for two values where they share it: the forward's k, k + 1
//     (K even: 8 x + 4 word loads a step) and the backward's columns n, n + 1 (K even, a full
//     block: 8 + 4) — on a CPU adapter every load with a computed address costs 4 scalar loads.
//     WG threads per workgroup, consecutive threads along N: t = ⌊m/8⌋·⌈N/8⌉ + ⌊n/8⌋, grid
//     ⌈blocks/WG⌉ folded 2-D past 65535 (t = gid.x + gid.y·num_workgroups.x·WG).
//   Both sum k in increasing order with one accumulator per output.

const WG: u32 = 64u;
const W_F16: u32 = 1u;
const TILE: u32 = 64u; // BM = BN: 16 threads × 4 outputs each way
const BK: u32 = 16u;

struct Params {
  M: u32,
  K: u32,
  N: u32,
  wn: u32,
  wk: u32,
  has_bias: u32,
  accumulate: u32,
  has_residual: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> y_out: array<f32>;
@group(0) @binding(5) var<storage, read> residual: array<f32>;

// (BK, TILE/4 + 1): x_tile[k·ROW + r] = X rows 4r..4r+3 at k; w_tile[k·ROW + c] = W columns
// 4c..4c+3 at k. The padding vec4 per k puts consecutive k of one row 68 words apart, so the 16
// threads staging one row's k values hit 2-way rather than 16-way shared-memory bank conflicts.
const ROW: u32 = 17u;
var<workgroup> x_tile: array<vec4f, 272>;
var<workgroup> w_tile: array<vec4f, 272>;

/** Weight element e (counted in values). */
fn weight(e: u32) -> f32 {
  if (W_F16 == 1u) { return unpack2x16float(w[e >> 1u])[e & 1u]; }
  return bitcast<f32>(w[e]);
}

/** The epilogue of the header for output (m, n) holding the sum `acc`; nothing outside C. */
fn store(m: u32, n: u32, acc: f32) {
  if (m >= P.M || n >= P.N) { return; }
  var v = acc;
  if (P.has_bias == 1u) { v += bias[n]; }
  let idx = m * P.N + n;
  if (P.has_residual == 1u) { v += residual[idx]; }
  if (P.accumulate == 1u) { v += y_out[idx]; }
  y_out[idx] = v;
}

@compute @workgroup_size(16, 16)
fn linear_tiled(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let tx = lid.x;
  let ty = lid.y;
  let t = ty * 16u + tx;
  let m0 = wid.y * TILE;
  let n0 = wid.x * TILE;
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  let w_along_n = P.wk != 1u; // the backward's W is contiguous along n
  for (var k0 = 0u; k0 < P.K; k0 += BK) {
    // Stage 64×16 of X and of W: 1 024 values each, 4 per thread.
    for (var q = 0u; q < 4u; q++) {
      let e = t + 256u * q;
      let mi = e / BK;
      let ki = e % BK;
      let m = m0 + mi;
      let k = k0 + ki;
      var xv = 0.0;
      if (m < P.M && k < P.K) { xv = x[m * P.K + k]; }
      x_tile[ki * ROW + mi / 4u][mi % 4u] = xv;
      var ni = e / BK;
      var kw = e % BK;
      if (w_along_n) {
        ni = e % TILE;
        kw = e / TILE;
      }
      let n = n0 + ni;
      let kk = k0 + kw;
      var wv = 0.0;
      if (n < P.N && kk < P.K) { wv = weight(n * P.wn + kk * P.wk); }
      w_tile[kw * ROW + ni / 4u][ni % 4u] = wv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let xr = x_tile[kk * ROW + ty];
      let wr = w_tile[kk * ROW + tx];
      acc0 += xr.x * wr;
      acc1 += xr.y * wr;
      acc2 += xr.z * wr;
      acc3 += xr.w * wr;
    }
    workgroupBarrier();
  }
  let m = m0 + 4u * ty;
  let n = n0 + 4u * tx;
  for (var j = 0u; j < 4u; j++) {
    store(m, n + j, acc0[j]);
    store(m + 1u, n + j, acc1[j]);
    store(m + 2u, n + j, acc2[j]);
    store(m + 3u, n + j, acc3[j]);
  }
}

/** Offset of row m of X (clamped into range) and the weight element of column n at k = 0 (clamped). */
fn x_row(m: u32) -> u32 {
  return min(m, P.M - 1u) * P.K;
}
fn w_col(n: u32) -> u32 {
  return min(n, P.N - 1u) * P.wn;
}

@compute @workgroup_size(WG)
fn linear_blocked(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = gid.x + gid.y * nwg.x * WG;
  let nb = (P.N + 7u) / 8u;
  let m0 = (t / nb) * 8u;
  let n0 = (t % nb) * 8u;
  if (m0 >= P.M) { return; }
  let r0 = x_row(m0); let r1 = x_row(m0 + 1u); let r2 = x_row(m0 + 2u); let r3 = x_row(m0 + 3u);
  let r4 = x_row(m0 + 4u); let r5 = x_row(m0 + 5u); let r6 = x_row(m0 + 6u); let r7 = x_row(m0 + 7u);
  let c0 = w_col(n0); let c1 = w_col(n0 + 1u); let c2 = w_col(n0 + 2u); let c3 = w_col(n0 + 3u);
  let c4 = w_col(n0 + 4u); let c5 = w_col(n0 + 5u); let c6 = w_col(n0 + 6u); let c7 = w_col(n0 + 7u);
  // Row i of the block: acc_i0 (columns n0..n0+3), acc_i1 (n0+4..n0+7).
  var acc00 = vec4f(0.0); var acc01 = vec4f(0.0); var acc10 = vec4f(0.0); var acc11 = vec4f(0.0);
  var acc20 = vec4f(0.0); var acc21 = vec4f(0.0); var acc30 = vec4f(0.0); var acc31 = vec4f(0.0);
  var acc40 = vec4f(0.0); var acc41 = vec4f(0.0); var acc50 = vec4f(0.0); var acc51 = vec4f(0.0);
  var acc60 = vec4f(0.0); var acc61 = vec4f(0.0); var acc70 = vec4f(0.0); var acc71 = vec4f(0.0);
  var k0 = 0u;
  if (W_F16 == 1u && P.wk == 1u && (P.K & 1u) == 0u) {
    // The forward's f16 rows hold k and k + 1 in one word: two steps per 8 word loads.
    for (; k0 < P.K; k0 += 2u) {
      let p0 = unpack2x16float(w[(c0 + k0) >> 1u]); let p1 = unpack2x16float(w[(c1 + k0) >> 1u]);
      let p2 = unpack2x16float(w[(c2 + k0) >> 1u]); let p3 = unpack2x16float(w[(c3 + k0) >> 1u]);
      let p4 = unpack2x16float(w[(c4 + k0) >> 1u]); let p5 = unpack2x16float(w[(c5 + k0) >> 1u]);
      let p6 = unpack2x16float(w[(c6 + k0) >> 1u]); let p7 = unpack2x16float(w[(c7 + k0) >> 1u]);
      let lo = vec4f(p0.x, p1.x, p2.x, p3.x); let hi = vec4f(p4.x, p5.x, p6.x, p7.x);
      let lo1 = vec4f(p0.y, p1.y, p2.y, p3.y); let hi1 = vec4f(p4.y, p5.y, p6.y, p7.y);
      let k1 = k0 + 1u;
      let x0 = x[r0 + k0]; acc00 += x0 * lo; acc01 += x0 * hi; let y0 = x[r0 + k1]; acc00 += y0 * lo1; acc01 += y0 * hi1;
      let x1 = x[r1 + k0]; acc10 += x1 * lo; acc11 += x1 * hi; let y1 = x[r1 + k1]; acc10 += y1 * lo1; acc11 += y1 * hi1;
      let x2 = x[r2 + k0]; acc20 += x2 * lo; acc21 += x2 * hi; let y2 = x[r2 + k1]; acc20 += y2 * lo1; acc21 += y2 * hi1;
      let x3 = x[r3 + k0]; acc30 += x3 * lo; acc31 += x3 * hi; let y3 = x[r3 + k1]; acc30 += y3 * lo1; acc31 += y3 * hi1;
      let x4 = x[r4 + k0]; acc40 += x4 * lo; acc41 += x4 * hi; let y4 = x[r4 + k1]; acc40 += y4 * lo1; acc41 += y4 * hi1;
      let x5 = x[r5 + k0]; acc50 += x5 * lo; acc51 += x5 * hi; let y5 = x[r5 + k1]; acc50 += y5 * lo1; acc51 += y5 * hi1;
      let x6 = x[r6 + k0]; acc60 += x6 * lo; acc61 += x6 * hi; let y6 = x[r6 + k1]; acc60 += y6 * lo1; acc61 += y6 * hi1;
      let x7 = x[r7 + k0]; acc70 += x7 * lo; acc71 += x7 * hi; let y7 = x[r7 + k1]; acc70 += y7 * lo1; acc71 += y7 * hi1;
    }
  }
  if (W_F16 == 1u && P.wn == 1u && (P.wk & 1u) == 0u) {
    // The backward's f16 columns n, n + 1 share a word when the row stride is even: 4 word loads
    // a step. An edge block's columns past N read the next row's values (in bounds, or WebGPU's
    // robust access on the last row) into accumulators that are never stored.
    for (; k0 < P.K; k0++) {
      let e = (n0 + k0 * P.wk) >> 1u;
      let lo = vec4f(unpack2x16float(w[e]), unpack2x16float(w[e + 1u]));
      let hi = vec4f(unpack2x16float(w[e + 2u]), unpack2x16float(w[e + 3u]));
      let x0 = x[r0 + k0]; acc00 += x0 * lo; acc01 += x0 * hi;
      let x1 = x[r1 + k0]; acc10 += x1 * lo; acc11 += x1 * hi;
      let x2 = x[r2 + k0]; acc20 += x2 * lo; acc21 += x2 * hi;
      let x3 = x[r3 + k0]; acc30 += x3 * lo; acc31 += x3 * hi;
      let x4 = x[r4 + k0]; acc40 += x4 * lo; acc41 += x4 * hi;
      let x5 = x[r5 + k0]; acc50 += x5 * lo; acc51 += x5 * hi;
      let x6 = x[r6 + k0]; acc60 += x6 * lo; acc61 += x6 * hi;
      let x7 = x[r7 + k0]; acc70 += x7 * lo; acc71 += x7 * hi;
    }
  }
  for (var k = k0; k < P.K; k++) {
    let wk = k * P.wk;
    let lo = vec4f(weight(c0 + wk), weight(c1 + wk), weight(c2 + wk), weight(c3 + wk));
    let hi = vec4f(weight(c4 + wk), weight(c5 + wk), weight(c6 + wk), weight(c7 + wk));
    let x0 = x[r0 + k]; acc00 += x0 * lo; acc01 += x0 * hi;
    let x1 = x[r1 + k]; acc10 += x1 * lo; acc11 += x1 * hi;
    let x2 = x[r2 + k]; acc20 += x2 * lo; acc21 += x2 * hi;
    let x3 = x[r3 + k]; acc30 += x3 * lo; acc31 += x3 * hi;
    let x4 = x[r4 + k]; acc40 += x4 * lo; acc41 += x4 * hi;
    let x5 = x[r5 + k]; acc50 += x5 * lo; acc51 += x5 * hi;
    let x6 = x[r6 + k]; acc60 += x6 * lo; acc61 += x6 * hi;
    let x7 = x[r7 + k]; acc70 += x7 * lo; acc71 += x7 * hi;
  }
  store8(m0, n0, acc00, acc01); store8(m0 + 1u, n0, acc10, acc11);
  store8(m0 + 2u, n0, acc20, acc21); store8(m0 + 3u, n0, acc30, acc31);
  store8(m0 + 4u, n0, acc40, acc41); store8(m0 + 5u, n0, acc50, acc51);
  store8(m0 + 6u, n0, acc60, acc61); store8(m0 + 7u, n0, acc70, acc71);
}

/** Row m's 8 outputs n..n+7 of a block (lo: n..n+3, hi: n+4..n+7). */
fn store8(m: u32, n: u32, lo: vec4f, hi: vec4f) {
  for (var j = 0u; j < 4u; j++) {
    store(m, n + j, lo[j]);
    store(m, n + 4u + j, hi[j]);
  }
}
