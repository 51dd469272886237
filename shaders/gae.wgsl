// Generalized advantage estimation: a reverse scan along each row (verl convention).
//
// Math, per row b, t = A−1..0, next = 0 and last = 0 past the end:
//   where mask[b,t] ≠ 0:  δ = r_t + γ·next − v_t;  last = δ + γλ·last;  next = v_t
//   masked positions carry next and last through unchanged;
//   advantages[b,t] = last;  returns[b,t] = advantages[b,t] + v_t   (not whitened here)
// Reference: src/reference/gae.ts (gaeRef).
//
// Bindings: 0 uniform P {B, A, gamma: f32, lam: f32}
//           1 rewards (B,A) f32, 2 values (B,A) f32, 3 mask (B,A) f32,
//           4 advantages (B,A) f32 out, 5 returns (B,A) f32 out
// Layout: one thread per row (parallel over the batch), sequential scan along A;
// WG threads per workgroup, 1-D grid over B.

const WG: u32 = 64u;

struct Params {
  B: u32,
  A: u32,
  gamma: f32,
  lam: f32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> rewards: array<f32>;
@group(0) @binding(2) var<storage, read> values: array<f32>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> advantages: array<f32>;
@group(0) @binding(5) var<storage, read_write> returns: array<f32>;

@compute @workgroup_size(WG)
fn gae(@builtin(global_invocation_id) gid: vec3u) {
  let b = gid.x;
  if (b >= P.B) { return; }
  let gamma_lam = P.gamma * P.lam;
  var next = 0.0;
  var last = 0.0;
  for (var k = 0u; k < P.A; k++) {
    let i = b * P.A + (P.A - 1u - k);
    let v = values[i];
    // Only action tokens update the carry, so a masked-out reward or value never enters it.
    if (mask[i] != 0.0) {
      let delta = rewards[i] + P.gamma * next - v;
      last = delta + gamma_lam * last;
      next = v;
    }
    advantages[i] = last;
    returns[i] = last + v;
  }
}
