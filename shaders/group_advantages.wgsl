// Outcome-reward estimators, the two pieces around reward shaping (shaders/rewards.wgsl):
//   group_scores       score transform per sequence with its group's statistics
//   discounted_returns reverse scan of the shaped token rewards
//   mask_advantages    advantages = x − baseline_b where mask ≠ 0, else exactly 0 (verl multiplies
//                      every outcome estimator's advantages by the response mask; the baseline is
//                      ReMax's greedy reward, 0 for every other estimator)
// The op chains them: group_scores → shape_rewards → discounted_returns (→ whiten for the
// REINFORCE pair) → mask_advantages. Reference: src/reference/groupAdvantages.ts.
//
// group_scores math (g = group of sequence b, n = |g| ≥ 2 except for reinforce, checked on the host):
//   ADV_REINFORCE           s
//   ADV_REINFORCE_BASELINE  s − mean_g
//   ADV_GROUP_NORM (GRPO)   (s − mean_g)/(std_g + 1e-9),  std_g unbiased (÷ (n − 1))
//   ADV_RLOO                s − (Σ_{j∈g, j≠b} s_j)/(n − 1)
//   ADV_DR_GRPO             s − mean_g
//   ADV_OPO                 s − Σ_j ℓ_j·s_j / Σ_j ℓ_j, ℓ_j = Σ_t mask[j,t] (0 when Σ_j ℓ_j = 0)
//   ADV_GRPO_PASSK          (s_max − s_second)/(std_g + 1e-6) for the group's best member (the first
//                           of equal maxima), 0 for the others; 1e-6 is verl's epsilon (PASSK_STD_EPS)
//   ADV_REMAX               s (the baseline is subtracted in mask_advantages, after the scan, so
//                           the returns are verl's: the scan of the raw token rewards)
// (the ADV_* codes are generated from the estimators' spec rows, src/reference/kernelCodes.ts)
// discounted_returns math, per row, t = A−1..0, G = 0 past the end:
//   where mask ≠ 0: G = r_t + γ·G; masked positions carry G through; returns[b,t] = G.
//
// Bindings: 0 uniform P {B, A, gamma: f32, estimator} (every entry point)
//   group_scores:       1 scores (B) f32, 2 group_index (B) i32 in 0..G−1, 3 transformed (B) f32 out,
//                       4 baselines (B) f32 (read by ADV_REMAX only), 5 resp_mask (B,A) f32 (ADV_OPO)
//   discounted_returns: 1 rewards (B,A) f32, 2 mask (B,A) f32, 3 returns (B,A) f32 out
//   mask_advantages:    1 x (B,A) f32 (same binding as rewards), 2 mask (B,A) f32, 3 out (B,A) f32
//                       (same binding as returns), 4 baselines (B) f32; one thread per element,
//                       grid over B·A
// The two entry points alias binding numbers with different variables; WGSL allows that because
// no entry point statically uses both, and it keeps one uniform + 3-buffer layout for both.
// Layout: one thread per sequence, WG threads per workgroup, 1-D grid over B. group_scores loops
// over the batch for its group (O(B) per thread, fixed order: deterministic, and every member of
// a group computes bit-identical statistics); the batch is tens to hundreds of sequences, so this
// is cheaper than a separate reduction dispatch.

const WG: u32 = 64u;

struct Params {
  B: u32,
  A: u32,
  gamma: f32,
  estimator: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> scores: array<f32>;
@group(0) @binding(2) var<storage, read> group_index: array<i32>;
@group(0) @binding(3) var<storage, read_write> transformed: array<f32>;

@group(0) @binding(1) var<storage, read> rewards: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> returns: array<f32>;

@group(0) @binding(4) var<storage, read> baselines: array<f32>;
@group(0) @binding(5) var<storage, read> resp_mask: array<f32>;

@compute @workgroup_size(WG)
fn group_scores(@builtin(global_invocation_id) gid: vec3u) {
  let b = gid.x;
  if (b >= P.B) { return; }
  let s = scores[b];
  if (P.estimator == ADV_REINFORCE || P.estimator == ADV_REMAX) {
    transformed[b] = s;
    return;
  }
  let g = group_index[b];
  // Statistics are taken about a pivot c (the group's first member's score) that every member
  // picks identically: a group of equal scores then gives deviations of exactly 0, where
  // s − Σs/n in float32 leaves ~1e-8·|s|, which GRPO's ÷ (std + 1e-9) would blow up to O(1).
  var c = s;
  for (var j = 0u; j < P.B; j++) {
    if (group_index[j] == g) {
      c = scores[j];
      break;
    }
  }
  var n = 0.0;
  var dev_sum = 0.0;
  for (var j = 0u; j < P.B; j++) {
    if (group_index[j] == g) {
      n += 1.0;
      dev_sum += scores[j] - c;
    }
  }
  let dev = s - c;
  // n ≥ 2 is guaranteed by the host; max() only keeps a bad call finite.
  let n_others = max(n - 1.0, 1.0);
  let dev_mean = dev_sum / n;
  switch P.estimator {
    case ADV_RLOO: { transformed[b] = dev - (dev_sum - dev) / n_others; }
    case ADV_GROUP_NORM: {
      var ssd = 0.0;
      for (var j = 0u; j < P.B; j++) {
        if (group_index[j] == g) {
          let d = scores[j] - c - dev_mean;
          ssd += d * d;
        }
      }
      transformed[b] = (dev - dev_mean) / (sqrt(ssd / n_others) + 1e-9);
    }
    case ADV_OPO: {
      // Length-weighted group mean about the pivot: Σ ℓ_j (s_j − c) / Σ ℓ_j.
      var l_sum = 0.0;
      var wdev_sum = 0.0;
      for (var j = 0u; j < P.B; j++) {
        if (group_index[j] == g) {
          var len = 0.0;
          for (var t = 0u; t < P.A; t++) { len += resp_mask[j * P.A + t]; }
          l_sum += len;
          wdev_sum += len * (scores[j] - c);
        }
      }
      transformed[b] = dev - select(0.0, wdev_sum / l_sum, l_sum > 0.0);
    }
    case ADV_GRPO_PASSK: {
      // Best member (first of equal maxima, batch order) and the runner-up score, as the reference.
      var best = b;
      var found = false;
      var second = 0.0;
      var has_second = false;
      var ssd = 0.0;
      for (var j = 0u; j < P.B; j++) {
        if (group_index[j] == g) {
          let sj = scores[j];
          let d = sj - c - dev_mean;
          ssd += d * d;
          if (!found) {
            best = j;
            found = true;
          } else if (sj > scores[best]) {
            second = scores[best];
            has_second = true;
            best = j;
          } else if (!has_second || sj > second) {
            second = sj;
            has_second = true;
          }
        }
      }
      let adv = (scores[best] - second) / (sqrt(ssd / n_others) + 1e-6);
      transformed[b] = select(0.0, adv, best == b && has_second);
    }
    case ADV_REINFORCE_BASELINE, ADV_DR_GRPO, default: { transformed[b] = dev - dev_mean; }
  }
}

@compute @workgroup_size(WG)
fn discounted_returns(@builtin(global_invocation_id) gid: vec3u) {
  let b = gid.x;
  if (b >= P.B) { return; }
  var g = 0.0;
  for (var k = 0u; k < P.A; k++) {
    let i = b * P.A + (P.A - 1u - k);
    if (mask[i] != 0.0) { g = rewards[i] + P.gamma * g; }
    returns[i] = g;
  }
}

@compute @workgroup_size(WG)
fn mask_advantages(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= P.B * P.A) { return; }
  // select, not x·m: a masked position must be 0 even where x is not finite.
  let base = select(0.0, baselines[i / P.A], P.estimator == ADV_REMAX);
  returns[i] = select(0.0, rewards[i] - base, mask[i] != 0.0);
}
