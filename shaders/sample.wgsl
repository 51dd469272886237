// One autoregressive sampling step for every row (temperature, top-k, top-p, inverse CDF),
// writing the token, its attention-mask bit and its position in place: no readback per token.
//
// Math, per row b with finished[b] = 0 (logits (B,V) score position `pos`):
//   z_v = logits[b,v] / T;  w_v = exp(z_v − max z)
//   order: u before v iff z_u > z_v, or z_u = z_v and u < v;  rank_v = #tokens before v
//   top-k (0 < k < V): keep rank_v < k;  Z_k = Σ_{rank < k} w
//   top-p (p < 1): also require rank_v = 0 or (Σ_{u before v} w_u) / Z_k < p — the smallest
//     prefix in that order whose mass reaches p, measured on the top-k survivors
//   u = (Philox-4x32-10(counter (b, pos, 0, 0), key (seed, 0)).x >> 8) · 2^-24
//   token = first kept v in token-id order with Σ_{kept u ≤ v} w_u > u·Σ_{kept} w
//           (the last kept token of positive weight if rounding leaves none)
//   sequences[b,pos] = token, attn_mask[b,pos] = 1, positions[b,pos] = positions[b,pos−1] + 1
//   (0 at pos 0), finished[b] = 1 if token = EOS.
//   logprobs[b,pos] (when has_logprobs = 1) = log(w_token) − log(Σ_{kept} w): the drawn token's
//   log-probability under the kept, renormalised distribution (π_rollout); the max-logit token is
//   always kept with w = 1, so the sum is ≥ 1 and the log finite.
// Rows with finished[b] = 1 write PAD, 0, 0 (and log-prob 0) and stay finished.
// Reference: src/reference/seq/sample.ts (sampleStepRef). The Philox here and in
// src/util/philox.ts are the same function, so both sides draw the same u and token.
//
// Bindings: 0 uniform P {B, V, S, pos, top_k, top_p, temperature, seed, eos, pad, has_logprobs}
//           1 logits    (B, V)  f32
//           2 finished  (B)     i32
//           3 stats     (B, 3V) f32  [w | mass before | rank] per row, phase 1 → phase 2
//           4 sequences (B, S)  i32
//           5 attn_mask (B, S)  f32
//           6 positions (B, S)  i32
//           7 logprobs  (B, S)  f32  written only when has_logprobs
// Layout: sample_step: one workgroup of WG threads per row, grid (B). Phase 1 (rank_token): the
//   threads split the row's tokens; the O(V) max, rank and prefix-mass loops of every token run
//   in parallel over the vocabulary (exact tie rule, no sort). A storage barrier. Phase 2
//   (draw_row): thread 0 runs the O(V) filter and inverse-CDF scan in token order. Fixed
//   summation orders: deterministic. (Until the fused version this was two dispatches,
//   sample_rank over B·V threads and sample_draw over B, with the same per-token and per-row
//   code; one dispatch per token step now.) (Written barrier-free after intermittent crashes that were later traced to
//   Dawn's GPU object being garbage collected, see src/node/webgpu.ts, not to barriers; a
//   workgroup-reduction version would be faster for large vocabularies, V here is ~32.)

const WG: u32 = 64u;

struct Params {
  B: u32,
  V: u32,
  S: u32,
  pos: u32,
  top_k: u32,
  top_p: f32,
  temperature: f32,
  seed: u32,
  eos: i32,
  pad: i32,
  has_logprobs: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read_write> finished: array<i32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>;
@group(0) @binding(4) var<storage, read_write> sequences: array<i32>;
@group(0) @binding(5) var<storage, read_write> attn_mask: array<f32>;
@group(0) @binding(6) var<storage, read_write> positions: array<i32>;
@group(0) @binding(7) var<storage, read_write> logprobs: array<f32>;

// @include lib_philox

fn filtering() -> bool {
  return (P.top_k > 0u && P.top_k < P.V) || P.top_p < 1.0;
}

@compute @workgroup_size(WG)
fn sample_step(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let b = wid.x;
  // Phase 1: the WG threads of row b rank its tokens v = lid.x, lid.x + WG, … (no early return:
  // the barrier below must be reached by every thread of the workgroup).
  if (finished[b] == 0) {
    for (var v = lid.x; v < P.V; v += WG) { rank_token(b, v); }
  }
  storageBarrier(); // phase 1's stats writes are visible to the whole workgroup
  // Phase 2: one thread draws the row's token from the stats.
  if (lid.x == 0u) { draw_row(b); }
}

/** Weight, mass before and rank of token v in row b (stats slots [w | mass before | rank]). */
fn rank_token(b: u32, v: u32) {
  let V = P.V;
  let row = b * V;
  var m = -3.0e38;
  for (var u = 0u; u < V; u++) { m = max(m, logits[row + u] / P.temperature); }
  let zv = logits[row + v] / P.temperature;
  var rank = 0u;
  var mass_before = 0.0;
  if (filtering()) {
    for (var u = 0u; u < V; u++) {
      let zu = logits[row + u] / P.temperature;
      if (zu > zv || (zu == zv && u < v)) {
        rank++;
        mass_before += exp(zu - m);
      }
    }
  }
  let s = b * 3u * V;
  stats[s + v] = exp(zv - m);
  stats[s + V + v] = mass_before;
  stats[s + 2u * V + v] = f32(rank);
}

/** Filter, inverse-CDF draw and in-place writes of row b from its stats. */
fn draw_row(b: u32) {
  let V = P.V;
  let at = b * P.S + P.pos;
  if (finished[b] != 0) {
    sequences[at] = P.pad;
    attn_mask[at] = 0.0;
    positions[at] = 0;
    if (P.has_logprobs != 0u) { logprobs[at] = 0.0; }
    return;
  }
  let s = b * 3u * V;
  let use_top_k = P.top_k > 0u && P.top_k < V;
  let use_top_p = P.top_p < 1.0;
  let k = f32(P.top_k);
  var mass_top_k = 0.0;
  for (var v = 0u; v < V; v++) {
    if (!use_top_k || stats[s + 2u * V + v] < k) { mass_top_k += stats[s + v]; }
  }
  // Kept weight of each token, overwriting the rank slot; and their total.
  var total = 0.0;
  for (var v = 0u; v < V; v++) {
    let rank = stats[s + 2u * V + v];
    var kept = !use_top_k || rank < k;
    if (kept && use_top_p && rank > 0.0) { kept = stats[s + V + v] / mass_top_k < P.top_p; }
    let w = select(0.0, stats[s + v], kept);
    stats[s + 2u * V + v] = w;
    total += w;
  }
  let u = f32(philox4x32_10(vec4u(b, P.pos, 0u, 0u), vec2u(P.seed, 0u)).x >> 8u) * (1.0 / 16777216.0);
  let target_mass = u * total;
  var token = 0u;
  var found = false;
  var cum = 0.0;
  for (var v = 0u; v < V; v++) {
    let w = stats[s + 2u * V + v];
    if (w > 0.0 && !found) {
      cum += w;
      token = v;
      found = cum > target_mass;
    }
  }
  let tok = i32(token);
  if (P.has_logprobs != 0u) { logprobs[at] = log(stats[s + 2u * V + token]) - log(total); }
  sequences[at] = tok;
  attn_mask[at] = 1.0;
  var p = 0;
  if (P.pos > 0u) { p = positions[at - 1u] + 1; }
  positions[at] = p;
  if (tok == P.eos) { finished[b] = 1; }
}
