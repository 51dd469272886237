// The tokens clip_cov / kl_cov act on, chosen batch-wide over the (B, A) the policy loss sees (verl
// verl/trainer/ppo/core_algos.py v0.9.0: compute_policy_loss_clip_cov L1796–1819, compute_policy_loss_kl_cov
// L1885–1897). Writes a (B, A) selection mask that policy_loss.wgsl reads (lib_policy_term.wgsl `picked`).
//
// Math (m = action mask, valid = m > 0; docs/algorithms.md, "Clip-Cov and KL-Cov"):
//   clip_cov: n = Σ m, Ā = Σ m·A/(n + 1e-8), L̄ = Σ m·logp/(n + 1e-8), cov_t = (A_t − Ā)(logp_t − L̄);
//             candidates: valid, PPO's clip not binding (pg2 > pg1 false, ratio = exp(clamp(d, ±20))),
//             clip_cov_lb < cov_t < clip_cov_ub; k = max(⌊ratio·n⌋, 1); key_t = cov_hash(t, seed)
//             (verl draws torch.randperm: the seeded hash is the project's deliberate deviation).
//   kl_cov:   n_v = #valid, Ā, L̄ plain means over the valid tokens; candidates: valid;
//             k = max(1, ⌊n_v·ratio⌋) (0 when n_v = 0); key_t = order_key(cov_t).
//   picked = the k candidates with the largest key, ties to the lower index (every candidate when
//            there are at most k).
// Selection without sorting: T = the largest u32 with #{cand, key ≥ T} ≥ k, found bit by bit
// from the top (32 counting passes); then, among the candidates with key = T, the lowest
// k − #{key > T} indices, the last of them found by the same bisection on the index (20 passes,
// B·A < 2^20, checked on the host). Every count is an exact f32 sum of 0/1 (n < 2^24).
// Reference: src/reference/policyLoss.ts (covSelectRef, covHash, lowbias32).
//
// Bindings: 0 uniform P; 1 old_logprobs (B,A) f32; 2 logprobs (B,A) f32; 3 advantages (B,A) f32;
//           4 action_mask (B,A) f32; 5 cov_sel (B,A) f32 rw (1 picked, 0 not).
// Layout: ONE workgroup of WG threads (a power of two) striding over the B·A tokens; every count
//         and sum goes through lib_tree_sum (fixed order, deterministic). Control flow around the
//         barriers is uniform: the bisections always run, their results only steer data.

const WG: u32 = 256u;
const IDX_BITS: u32 = 20u; // B·A < 2^20 (checked on the host)

struct Params {
  B: u32,
  A: u32,
  mode: u32,
  clip_low: f32,
  clip_high: f32,
  ratio: f32, // clip_cov_ratio or kl_cov_ratio
  lb: f32,
  ub: f32,
  seed: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> old_logprobs: array<f32>;
@group(0) @binding(2) var<storage, read> logprobs: array<f32>;
@group(0) @binding(3) var<storage, read> advantages: array<f32>;
@group(0) @binding(4) var<storage, read> action_mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> cov_sel: array<f32>;

// @include lib_tree_sum

/** Chris Wellons' lowbias32 (the reference's lowbias32, bit for bit). */
fn lowbias32(x0: u32) -> u32 {
  var x = x0;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

/** clip_cov's seeded rank of token i: larger is picked first (covHash). */
fn cov_hash(i: u32, seed: u32) -> u32 {
  return lowbias32(i ^ lowbias32(seed));
}

/** A u32 whose order is the f32's order (±0 as one value, so they tie and go by index). */
fn order_key(f: f32) -> u32 {
  if (f == 0.0) { return 0x80000000u; }
  let b = bitcast<u32>(f);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

struct Cand {
  ok: bool,
  key: u32,
}

/** Whether token i is a candidate, and its key, given the batch means. */
fn candidate(i: u32, mean_a: f32, mean_l: f32) -> Cand {
  let m = action_mask[i];
  if (!(m > 0.0)) { return Cand(false, 0u); }
  let adv = advantages[i];
  let logp = logprobs[i];
  let cov = (adv - mean_a) * (logp - mean_l);
  if (P.mode == LOSS_MODE_KL_COV) { return Cand(true, order_key(cov)); }
  let ratio = exp(clamp(logp - old_logprobs[i], -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP));
  let pg1 = -adv * ratio;
  let pg2 = -adv * clamp(ratio, 1.0 - P.clip_low, 1.0 + P.clip_high);
  let ok = !(pg2 > pg1) && cov > P.lb && cov < P.ub;
  return Cand(ok, cov_hash(i, P.seed));
}

@compute @workgroup_size(WG)
fn cov_select(@builtin(local_invocation_index) lid: u32) {
  let N = P.B * P.A;
  // Pass 1: the masked sums (clip_cov: Σ m·x over m ≠ 0; kl_cov: plain sums over m > 0).
  var s: array<f32, 6>;
  for (var i = lid; i < N; i += WG) {
    let m = action_mask[i];
    if (m != 0.0) {
      s[0] += m;
      s[1] += m * advantages[i];
      s[2] += m * logprobs[i];
    }
    if (m > 0.0) {
      s[3] += 1.0;
      s[4] += advantages[i];
      s[5] += logprobs[i];
    }
  }
  var tot: array<f32, 6>;
  for (var j = 0u; j < 6u; j++) { tot[j] = tree_sum(lid, s[j]); }
  let clip_cov = P.mode == LOSS_MODE_CLIP_COV;
  let n_v = tot[3];
  let mean_a = select(tot[4] / max(n_v, 1.0), tot[1] / (tot[0] + 1e-8), clip_cov);
  let mean_l = select(tot[5] / max(n_v, 1.0), tot[2] / (tot[0] + 1e-8), clip_cov);
  var k = 0.0;
  if (clip_cov) {
    k = max(floor(P.ratio * tot[0]), 1.0);
  } else if (n_v > 0.0) {
    k = max(1.0, floor(n_v * P.ratio));
  }
  // Pass 2: how many candidates.
  var c = 0.0;
  for (var i = lid; i < N; i += WG) {
    if (candidate(i, mean_a, mean_l).ok) { c += 1.0; }
  }
  let n_cand = tree_sum(lid, c);
  // The k-th largest key T, bit by bit from the top.
  var t = 0u;
  for (var bit = 31i; bit >= 0i; bit--) {
    let try_t = t | (1u << u32(bit));
    var cnt = 0.0;
    for (var i = lid; i < N; i += WG) {
      let cd = candidate(i, mean_a, mean_l);
      if (cd.ok && cd.key >= try_t) { cnt += 1.0; }
    }
    if (tree_sum(lid, cnt) >= k) { t = try_t; }
  }
  var gt = 0.0;
  for (var i = lid; i < N; i += WG) {
    let cd = candidate(i, mean_a, mean_l);
    if (cd.ok && cd.key > t) { gt += 1.0; }
  }
  let need = k - tree_sum(lid, gt);
  // The largest index j0 with fewer than `need` ties below it: ties at indices ≤ j0 are picked.
  var j0 = 0u;
  for (var bit = i32(IDX_BITS) - 1i; bit >= 0i; bit--) {
    let try_j = j0 | (1u << u32(bit));
    var cnt = 0.0;
    for (var i = lid; i < N; i += WG) {
      let cd = candidate(i, mean_a, mean_l);
      if (cd.ok && cd.key == t && i < try_j) { cnt += 1.0; }
    }
    if (tree_sum(lid, cnt) < need) { j0 = try_j; }
  }
  let all = n_cand <= k;
  for (var i = lid; i < N; i += WG) {
    let cd = candidate(i, mean_a, mean_l);
    let picked = cd.ok && (all || cd.key > t || (cd.key == t && i <= j0));
    cov_sel[i] = select(0.0, 1.0, picked);
  }
}
