// LayerNorm forward and input backward for small rows: one thread per row, no workgroup memory
// and no barriers (layernorm.wgsl uses one workgroup per row with tree reductions, whose barriers
// dominate on software Vulkan at the playground's D ≤ 256). The weight gradients keep
// layernorm.wgsl's layernorm_params. src/ops/layerNorm.ts picks this kernel for small D.
//
// Math (identical to layernorm.wgsl): mean = Σ_d x/D; var = Σ_d (x − mean)²/D (biased, two
//   passes); rstd = 1/sqrt(var + eps); x̂ = (x − mean)·rstd; y = x̂·gamma + beta.
//   Backward with g = gradY·gamma: gradX = rstd·(g − mean_d(g) − x̂·mean_d(g·x̂)), written, or
//   added to grad_x when accumulate = 1 (the residual stream's gradient; the same bits as a
//   separate axpy(1, gradX, grad_x)).
// Reference: src/reference/nn/layernorm.ts (layerNormRef, layerNormBackwardRef).
//
// Bindings (uniform P {M, D, eps} at 0):
//   rows_forward:  1 x (M,D), 2 gamma (D), 3 beta (D), 4 mean_out (M) rw, 5 rstd_out (M) rw, 6 y (M,D) rw
//   rows_backward: 1 x (M,D), 2 gamma (D), 3 grad_y (M,D), 4 mean (M), 5 rstd (M), 6 grad_x (M,D) rw
//   all f32.
// Layout: WG threads per workgroup, thread i owns row i; grid ceil(M/WG).

const WG: u32 = 64u;

struct Params {
  M: u32,
  D: u32,
  eps: f32,
  accumulate: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>; // (M,D)
@group(0) @binding(2) var<storage, read> gamma: array<f32>; // (D)
@group(0) @binding(3) var<storage, read> beta: array<f32>; // (D)
@group(0) @binding(3) var<storage, read> grad_y: array<f32>; // (M,D)
@group(0) @binding(4) var<storage, read_write> mean_out: array<f32>; // (M)
@group(0) @binding(4) var<storage, read> mean: array<f32>; // (M)
@group(0) @binding(5) var<storage, read_write> rstd_out: array<f32>; // (M)
@group(0) @binding(5) var<storage, read> rstd: array<f32>; // (M)
@group(0) @binding(6) var<storage, read_write> y: array<f32>; // (M,D)
@group(0) @binding(6) var<storage, read_write> grad_x: array<f32>; // (M,D)

@compute @workgroup_size(WG)
fn rows_forward(@builtin(global_invocation_id) gid: vec3u) {
  let row = gid.x;
  if (row >= P.M) { return; }
  let base = row * P.D;
  let inv_d = 1.0 / f32(P.D);
  var s = 0.0;
  for (var d = 0u; d < P.D; d++) { s += x[base + d]; }
  let mu = s * inv_d;
  var q = 0.0;
  for (var d = 0u; d < P.D; d++) {
    let c = x[base + d] - mu;
    q = fma(c, c, q);
  }
  let r = inverseSqrt(q * inv_d + P.eps);
  for (var d = 0u; d < P.D; d++) { y[base + d] = (x[base + d] - mu) * r * gamma[d] + beta[d]; }
  mean_out[row] = mu;
  rstd_out[row] = r;
}

@compute @workgroup_size(WG)
fn rows_backward(@builtin(global_invocation_id) gid: vec3u) {
  let row = gid.x;
  if (row >= P.M) { return; }
  let base = row * P.D;
  let mu = mean[row];
  let r = rstd[row];
  var sg = 0.0;
  var sgx = 0.0;
  for (var d = 0u; d < P.D; d++) {
    let g = grad_y[base + d] * gamma[d];
    sg += g;
    sgx = fma(g, (x[base + d] - mu) * r, sgx);
  }
  let inv_d = 1.0 / f32(P.D);
  let mg = sg * inv_d;
  let mgx = sgx * inv_d;
  for (var d = 0u; d < P.D; d++) {
    let xh = (x[base + d] - mu) * r;
    let gx = r * (grad_y[base + d] * gamma[d] - mg - xh * mgx);
    if (P.accumulate == 1u) { grad_x[base + d] += gx; } else { grad_x[base + d] = gx; }
  }
}
