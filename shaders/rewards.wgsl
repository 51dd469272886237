// Reward shaping: per-token KL penalty plus the sequence score on the last action token.
//
// Math (b = row, t = action position, m = mask[b,t] ∈ {0,1}):
//   kl[b,t]      = m·KL(logp − ref_logp)   (0 where m = 0: garbage at padding never leaks in)
//   rewards[b,t] = −β·kl[b,t] + (t = last action token of row b ? scores[b] : 0)
//   A row with no action token gets no score. KL estimators as shaders/kl.wgsl.
// Reference: src/reference/rewards.ts (shapeRewardsRef).
//
// Bindings: 0 uniform P {B, A, beta: f32, estimator: code as shaders/lib_kl.wgsl}
//           1 scores (B) f32, 2 logp (B,A) f32, 3 ref_logp (B,A) f32, 4 mask (B,A) f32,
//           5 rewards (B,A) f32 out, 6 kl (B,A) f32 out
// Layout: one thread per (b,t), WG threads per workgroup, 1-D grid over B·A.
// "Last action token" is found by scanning forward only from action tokens, stopping at the next
// one, so a row costs O(A) in total rather than O(A²).

const WG: u32 = 64u;

struct Params {
  B: u32,
  A: u32,
  beta: f32,
  estimator: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> scores: array<f32>;
@group(0) @binding(2) var<storage, read> logp: array<f32>;
@group(0) @binding(3) var<storage, read> ref_logp: array<f32>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> rewards: array<f32>;
@group(0) @binding(6) var<storage, read_write> kl: array<f32>;

// @include lib_kl

fn is_last_action(b: u32, t: u32) -> bool {
  for (var u = t + 1u; u < P.A; u++) {
    if (mask[b * P.A + u] != 0.0) { return false; }
  }
  return true;
}

@compute @workgroup_size(WG)
fn shape_rewards(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= P.B * P.A) { return; }
  let b = i / P.A;
  let t = i % P.A;
  let m = mask[i];
  if (m == 0.0) {
    kl[i] = 0.0;
    rewards[i] = 0.0;
    return;
  }
  let k = m * kl_value(logp[i] - ref_logp[i], P.estimator);
  kl[i] = k;
  var r = -P.beta * k;
  if (is_last_action(b, t)) { r += scores[b]; }
  rewards[i] = r;
}
