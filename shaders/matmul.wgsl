// Dense layer: C = op(A)·op(B) (+ bias) (+ residual) (+ C when accumulating), tiled through
// workgroup memory.
//
// Math: C[m,n] = ((Σ_k opA[m,k]·opB[k,n] + (has_bias ? bias[n] : 0)) + (has_residual ? R[m,n] : 0))
//                + (accumulate ? C_old[m,n] : 0), summed in that order in f32, so the fused residual
//   gives exactly the bits of a separate add(R, matmul) (the transformer's x + c_proj(...)).
//   has_gelu: also act[m,n] = gelu(C[m,n]) (tanh approximation, the formula and f32 operations of
//   elementwise.wgsl's gelu_forward), so the MLP's c_fc and its GELU are one dispatch.
//   opA = A stored (M,K), or Aᵀ of A stored (K,M) when trans_a = 1
//   opB = B stored (K,N), or Bᵀ of B stored (N,K) when trans_b = 1
// One kernel serves the forward and both backward products (see src/backend/webgpu/webgpuNn.ts):
//   y     = a·b | a·bᵀ                         (trans_a 0, trans_b as the layer)
//   gradA = gradOut·bᵀ | gradOut·b             (trans_a 0, trans_b flipped)
//   gradB += aᵀ·gradOut | gradOutᵀ·a           (trans_a 1, accumulate 1)
// bias_grad: gradBias[n] += Σ_m gradOut[m,n] — a fixed-order column sum, so no atomics are needed.
// Reference: src/reference/nn/matmul.ts (matmulRef, matmulBackwardRef).
//
// Bindings (matmul):    0 uniform P, 1 a (M,K)|(K,M) f32, 2 b (K,N)|(N,K) f32, 3 bias (N) f32
//                       (any buffer when has_bias = 0), 4 c (M,N) f32 read_write,
//                       5 residual (M,N) f32 (any buffer but c when has_residual = 0),
//                       6 act (M,N) f32 read_write (a spare buffer, unwritten, when has_gelu = 0).
// Bindings (bias_grad): 0 uniform P, 1 grad_out (M,N) f32, 2 grad_bias (N) f32 read_write.
// Layout (matmul): TY×TX threads per workgroup; a workgroup owns a (TY·TM)×(TX·TN) tile of C and
//   each thread TM×TN outputs strided by TY/TX (register blocking: each value loaded into
//   workgroup memory is reused TY·TM or TX·TN times). K advances in steps of BK; edge tiles are
//   zero-padded so any M, K, N works. Grid: (ceil(N/(TX·TN)), ceil(M/(TY·TM))).
// Layout (bias_grad): COLS×LANES threads; each lane sums rows lane, lane+LANES, … of one column,
//   then a fixed tree over lanes. Grid: ceil(N/COLS).

// Tile geometry is const: TM×TN is the shape of the per-thread accumulators (four vec4s) below.
// 16×16 threads × 4×4 outputs = a 64×64 tile; workgroup memory 2·16·64·4 B = 8 KiB.
const TX: u32 = 16u; // threads along N
const TY: u32 = 16u; // threads along M
const BK: u32 = 16u; // K step
const TM: u32 = 4u; // outputs per thread along M (= the 4 accumulators below)
const TN: u32 = 4u; // outputs per thread along N (= vec4 width)
const COLS: u32 = 16u;
const LANES: u32 = 16u; // a power of two (tree reduction)

struct Params {
  M: u32,
  K: u32,
  N: u32,
  trans_a: u32,
  trans_b: u32,
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

var<workgroup> tile_a: array<f32, BK * TY * TM>; // (BK, TY·TM): [k][m]
var<workgroup> tile_b: array<f32, BK * TX * TN>; // (BK, TX·TN): [k][n]
var<workgroup> col_part: array<f32, COLS * LANES>; // (LANES, COLS)

fn load_a(m: u32, k: u32) -> f32 {
  if (m >= P.M || k >= P.K) { return 0.0; }
  if (P.trans_a == 1u) { return a[k * P.M + m]; }
  return a[m * P.K + k];
}

fn load_b(k: u32, n: u32) -> f32 {
  if (k >= P.K || n >= P.N) { return 0.0; }
  if (P.trans_b == 1u) { return b[n * P.K + k]; }
  return b[k * P.N + n];
}

@compute @workgroup_size(TX, TY)
fn matmul(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let tile_m = TY * TM;
  let tile_n = TX * TN;
  let m0 = wid.y * tile_m;
  let n0 = wid.x * tile_n;
  let flat = lid.y * TX + lid.x;
  let threads = TX * TY;

  // One vec4 per output row, not a dynamically indexed array: vectors stay in registers.
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);

  for (var k0 = 0u; k0 < P.K; k0 += BK) {
    // Consecutive threads read consecutive addresses of whichever dim is contiguous in memory.
    for (var e = flat; e < BK * tile_m; e += threads) {
      var ml: u32; var kl: u32;
      if (P.trans_a == 1u) { ml = e % tile_m; kl = e / tile_m; } else { ml = e / BK; kl = e % BK; }
      tile_a[kl * tile_m + ml] = load_a(m0 + ml, k0 + kl);
    }
    for (var e = flat; e < BK * tile_n; e += threads) {
      var nl: u32; var kl: u32;
      if (P.trans_b == 1u) { nl = e / BK; kl = e % BK; } else { nl = e % tile_n; kl = e / tile_n; }
      tile_b[kl * tile_n + nl] = load_b(k0 + kl, n0 + nl);
    }
    workgroupBarrier();
    for (var kl = 0u; kl < BK; kl++) {
      let ao = kl * tile_m + lid.y;
      let bo = kl * tile_n + lid.x;
      let ra = vec4f(tile_a[ao], tile_a[ao + TY], tile_a[ao + 2u * TY], tile_a[ao + 3u * TY]);
      let rb = vec4f(tile_b[bo], tile_b[bo + TX], tile_b[bo + 2u * TX], tile_b[bo + 3u * TX]);
      acc0 = fma(vec4f(ra.x), rb, acc0);
      acc1 = fma(vec4f(ra.y), rb, acc1);
      acc2 = fma(vec4f(ra.z), rb, acc2);
      acc3 = fma(vec4f(ra.w), rb, acc3);
    }
    workgroupBarrier();
  }

  store_row(m0 + lid.y, n0 + lid.x, acc0);
  store_row(m0 + lid.y + TY, n0 + lid.x, acc1);
  store_row(m0 + lid.y + 2u * TY, n0 + lid.x, acc2);
  store_row(m0 + lid.y + 3u * TY, n0 + lid.x, acc3);
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

/** Writes the TN outputs of one row held by a thread: columns n, n + TX, n + 2TX, n + 3TX. */
fn store_row(m: u32, n: u32, row: vec4f) {
  if (m >= P.M) { return; }
  for (var j = 0u; j < TN; j++) {
    let col = n + TX * j;
    if (col >= P.N) { return; }
    var v = row[j];
    if (P.has_bias == 1u) { v += bias[col]; }
    let idx = m * P.N + col;
    if (P.has_residual == 1u) { v += residual[idx]; }
    if (P.accumulate == 1u) { v += c[idx]; }
    c[idx] = v;
    if (P.has_gelu == 1u) { act[idx] = gelu(v); }
  }
}

@compute @workgroup_size(COLS, LANES)
fn bias_grad(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let n = wid.x * COLS + lid.x;
  var s = 0.0;
  if (n < P.N) {
    for (var m = lid.y; m < P.M; m += LANES) { s += a[m * P.N + n]; }
  }
  col_part[lid.y * COLS + lid.x] = s;
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lid.y < stride) { col_part[lid.y * COLS + lid.x] += col_part[(lid.y + stride) * COLS + lid.x]; }
    workgroupBarrier();
  }
  if (lid.y == 0u && n < P.N) { grad_bias[n] += col_part[lid.x]; }
}
