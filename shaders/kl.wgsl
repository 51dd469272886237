// KL estimators per token and their gradients wrt logp.
//
// Math (d = logp − ref_logp, docs/algorithms.md, Numerical conventions):
//   k1  = d                      ∂/∂logp = 1
//   abs = |d|                    ∂/∂logp = sign(d)
//   k2  = ½·d²                   ∂/∂logp = d
//   k3  = clamp(exp(−d') + d' − 1, −10, 10),  d' = clamp(d, −20, 20)
//                                ∂/∂logp = 1 − exp(−d) inside both clamps, else 0
//   k1+ = k1, k3+ = k3           ∂/∂logp = d (straight-through k2 gradient, verl kl_penalty "+")
//   k1_clamped = max(d, 0)       ∂/∂logp = 1 where d > 0, else 0 (AlpacaFarm's one-sided penalty)
// Reference: src/reference/kl.ts (klRef, klGradRef).
//
// Bindings: 0 uniform P {n: element count, estimator: code as shaders/lib_kl.wgsl}
//           1 logp (n) f32, 2 ref_logp (n) f32, 3 out (n) f32
// Layout: one thread per element, WG threads per workgroup, 1-D grid.

const WG: u32 = 64u;

struct Params {
  n: u32,
  estimator: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> logp: array<f32>;
@group(0) @binding(2) var<storage, read> ref_logp: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// @include lib_kl

@compute @workgroup_size(WG)
fn kl_forward(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= P.n) { return; }
  out[i] = kl_value(logp[i] - ref_logp[i], P.estimator);
}

@compute @workgroup_size(WG)
fn kl_backward(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= P.n) { return; }
  out[i] = kl_grad(logp[i] - ref_logp[i], P.estimator);
}
