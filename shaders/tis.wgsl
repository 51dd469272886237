// Token-level truncated importance sampling weights for the rollout-vs-old mismatch
// ("three policies"; verl rollout correction, token TIS, rollout_is_weights).
//
// Math per token (m = mask ∈ {0,1}):
//   w = m · min(exp(clamp(old − rollout, −20, 20)), cap)      (0 where m = 0, whatever the inputs hold)
// The weights are constants for the loss (stop-gradient): policy_loss.wgsl multiplies them in.
// Reference: src/reference/policyLoss.ts (tisWeightsRef).
//
// Bindings: 0 uniform P {n: element count, cap: f32 > 0}, 1 old_logprobs (n) f32,
//           2 rollout_logprobs (n) f32, 3 mask (n) f32, 4 weights (n) f32 out
// Layout: one thread per element, WG threads per workgroup, 1-D grid.

const WG: u32 = 64u;

struct Params {
  n: u32,
  cap: f32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> rollout_logprobs: array<f32>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> weights: array<f32>;

@compute @workgroup_size(WG)
fn tis_weights(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= P.n) { return; }
  let m = mask[i];
  var w = 0.0;
  if (m != 0.0) {
    let d = clamp(old_logprobs[i] - rollout_logprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
    w = m * min(exp(d), P.cap);
  }
  weights[i] = w;
}
