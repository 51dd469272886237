// PPO clipped surrogate per token (asymmetric clip, dual clip) fused with the per-row masked sums
// that agg_finalize (aggregate.wgsl) turns into [loss, clipfrac, clipfrac_lower, ppo_kl] and the
// weighted gradient.
//
// Math per token (d = logp − old, A = advantage, DESIGN.md):
//   ratio = exp(clamp(d, −20, 20));  pg1 = −A·ratio;  pg2 = −A·clamp(ratio, 1 − clip_low, 1 + clip_high)
//   L = max(pg1, pg2);  clipped = pg2 > pg1
//   dual clip (has_dual, c > 1), A < 0: pg3 = −A·c;  lower = pg3 < max(pg1, pg2);  L = min(L, pg3)
//   g = ∂L/∂logp = −A·ratio where neither clipped nor lower and |d| < 20, else 0 (a constant branch)
// Masked positions write g = 0 and add nothing (they may hold any value, NaN included).
// Row partials (B, 5) = [n_b, Σ m·L, Σ m·clipped, Σ m·lower, Σ m·(old − logp)] (aggregate.wgsl layout);
// agg_finalize with K = 4 then scales g in place by the aggregation weights.
// Reference: src/reference/policyLoss.ts (policyTokenRef, policyLossRef).
//
// Bindings: 0 uniform P, 1 old_logprobs (B,A) f32, 2 logprobs (B,A) f32, 3 advantages (B,A) f32,
//           4 action_mask (B,A) f32, 5 grad_logprobs (B,A) f32 rw (unweighted g), 6 rows (B,5) f32 rw
// Layout: one workgroup of WG threads (a power of two) per row b (grid B); threads stride over A,
//         then a deterministic tree reduction in workgroup memory.

override WG: u32 = 64;
const ROW_STRIDE: u32 = 5u;

struct Params {
  B: u32,
  A: u32,
  clip_low: f32,
  clip_high: f32,
  clip_c: f32,
  has_dual: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> logprobs: array<f32>;
@group(0) @binding(3) var<storage, read> advantages: array<f32>;
@group(0) @binding(4) var<storage, read> action_mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_logprobs: array<f32>;
@group(0) @binding(6) var<storage, read_write> rows: array<f32>;

var<workgroup> red: array<array<f32, ROW_STRIDE>, WG>;

@compute @workgroup_size(WG)
fn policy_rows(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  var acc: array<f32, ROW_STRIDE>;
  for (var a = lid; a < P.A; a += WG) {
    let i = b * P.A + a;
    let m = action_mask[i];
    var g = 0.0;
    if (m != 0.0) {
      let old = old_logprobs[i];
      let logp = logprobs[i];
      let adv = advantages[i];
      let d = logp - old;
      let ratio = exp(clamp(d, -20.0, 20.0));
      let pg1 = -adv * ratio;
      let pg2 = -adv * clamp(ratio, 1.0 - P.clip_low, 1.0 + P.clip_high);
      let clip_max = max(pg1, pg2);
      let clipped = pg2 > pg1;
      var loss = clip_max;
      var lower = false;
      if (P.has_dual != 0u && adv < 0.0) {
        let pg3 = -adv * P.clip_c;
        lower = pg3 < clip_max;
        loss = min(clip_max, pg3);
      }
      if (!clipped && !lower && abs(d) < 20.0) { g = -adv * ratio; }
      acc[0] += m;
      acc[1] += m * loss;
      acc[2] += m * select(0.0, 1.0, clipped);
      acc[3] += m * select(0.0, 1.0, lower);
      acc[4] += m * (old - logp);
    }
    grad_logprobs[i] = g;
  }
  red[lid] = acc;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) {
      for (var j = 0u; j < ROW_STRIDE; j++) { red[lid][j] += red[lid + stride][j]; }
    }
    workgroupBarrier();
  }
  if (lid < ROW_STRIDE) { rows[b * ROW_STRIDE + lid] = red[0][lid]; }
}
