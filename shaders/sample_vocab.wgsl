// One autoregressive sampling step for every row over a large vocabulary (up to Qwen's 151 936
// ids): temperature, top-k (k ≤ KMAX), top-p, an inverse-CDF draw, the token, its mask bit and
// position written in place, several EOS ids. No sort and no per-token readback.
//
// Math, per row b with finished[b] = 0 (logits x (B, V) score position `pos`):
//   w_v = exp((x_v − max x)/T)   (= exp(z_v − max z), z = x/T)
//   order: u before v iff x_u > x_v, or x_u = x_v and u < v (x/T keeps the order of x for T > 0)
//   top-k (0 < k < V): keep the first k in that order; Z_k = their mass
//   top-p (p < 1): of those, keep the smallest prefix in that order whose mass before each kept
//     token is < p·Z_k (the first token always)
//   u = sample_uniform(seed, b, pos) (lib_philox);  token = the first kept v in id order with
//     Σ_{kept u ≤ v} w_u > u·Σ_kept w (the last kept token of positive weight if rounding leaves none)
//   sequences[b,pos] = token, attn_mask[b,pos] = 1, positions[b,pos] = positions[b,pos−1] + 1 (0 at
//   pos 0), finished[b] = 1 if token is one of the n_eos ids eos0 … eos7;
//   logprobs[b,pos] (has_logprobs) = log w_token − log Σ_kept w. Finished rows write PAD, 0, 0 (and 0).
// Keys: x as a u32 that orders like the float (sign-flipped bits; −0 taken as +0, so exact ties
//   of value are ties of key), so "k-th largest" and "mass at or above" are bisections on 32 bits.
// The kept set is always {key > Kt} ∪ {the first `quota` ids with key = Kt}:
//   top-k: Kt = the k-th largest key (bisection: the largest t with #{key ≥ t} ≥ k), quota = k −
//     #{key > Kt}; the k tokens are gathered into workgroup memory, ranked (O(k²)), top-p cut in
//     rank order, and thread 0 draws among them in id order.
//   top-p alone: Kt = the largest t with Σ_{key ≥ t} w ≥ p·Z (bisection), quota = the ties j
//     (in id order) with (Σ_{key > Kt} w + j·w_Kt)/Z < p, at least 1; then the draw below.
//   neither: Kt = 0, quota = 0 (every key of a finite logit is > 0).
//   Draw over the whole row: each thread takes a contiguous block of ids; block masses (and tie
//   counts, for the tie ranks) are scanned by thread 0 in order; each thread walks its block from
//   its prefix, and the smallest id whose running mass passes u·Σ_kept w wins (atomicMin).
// Reference: src/reference/seq/sampleVocab.ts (sampleVocabStepRef; the rule of sample.ts).
//
// Bindings: 0 uniform P {V, S, pos, top_k, top_p, temperature, seed, pad, has_logprobs, n_eos, eos0 … eos7}
//           1 logits (B, V) f32, 2 finished (B) i32 rw, 3 sequences (B, S) i32 rw,
//           4 attn_mask (B, S) f32 rw, 5 positions (B, S) i32 rw, 6 logprobs (B, S) f32 rw
// Precision: every mass is a compensated (Neumaier) f32 sum — per thread, across threads and along
//   the draw's walk — so a cumulative mass is within a few ulps of its float64 value however many
//   of the V weights it adds; the weights themselves are f32 exps. Counts are sums of 1.0 (exact).
// Layout: one workgroup of WG threads per row, grid (B). A workgroup total takes two barriers:
//   each thread's partial, then WG/GS threads each add GS of them, then every thread adds those
//   (a fixed order: deterministic). WG = 256, GS = 16 on a GPU; WG = 4, GS = 2 on a CPU
//   implementation of WebGPU (one SIMD group: SwiftShader builds workgroup memory word by word,
//   and a barrier there costs a coroutine switch per 4 threads).

const WG: u32 = 256u;
const GS: u32 = 16u; // threads per group of the two-level workgroup sums
const KMAX: u32 = 64u;
const NONE: u32 = 0xffffffffu;

struct Params {
  V: u32,
  S: u32,
  pos: u32,
  top_k: u32,
  top_p: f32,
  temperature: f32,
  seed: u32,
  pad: i32,
  has_logprobs: u32,
  n_eos: u32,
  eos0: i32,
  eos1: i32,
  eos2: i32,
  eos3: i32,
  eos4: i32,
  eos5: i32,
  eos6: i32,
  eos7: i32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read_write> finished: array<i32>;
@group(0) @binding(3) var<storage, read_write> sequences: array<i32>;
@group(0) @binding(4) var<storage, read_write> attn_mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> positions: array<i32>;
@group(0) @binding(6) var<storage, read_write> logprobs: array<f32>;

// @include lib_philox

var<workgroup> row_done: u32;
var<workgroup> partials: array<vec2f, WG>; // each thread's compensated partial sum
var<workgroup> groups: array<vec2f, WG / GS>; // the sums of GS consecutive partials
var<workgroup> list_n: atomic<u32>;
var<workgroup> list_key: array<u32, KMAX>;
var<workgroup> list_id: array<u32, KMAX>;
var<workgroup> list_w: array<f32, KMAX>;
var<workgroup> list_rank: array<u32, KMAX>;
var<workgroup> by_rank: array<u32, KMAX>;
var<workgroup> by_id: array<u32, KMAX>;
var<workgroup> found: atomic<u32>;
var<workgroup> last_kept: atomic<u32>;

/** The logit as a u32 in the float order (−0 as +0). */
fn key_of(x: f32) -> u32 {
  let bits = bitcast<u32>(select(x, 0.0, x == 0.0));
  return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

/** The logit of a key (key_of's inverse). */
fn value_of(k: u32) -> f32 {
  return bitcast<f32>(select(k & 0x7fffffffu, ~k, (k & 0x80000000u) == 0u));
}

/** Neumaier's compensated sum: acc = (sum, compensation), value acc.x + acc.y. */
fn kadd(acc: vec2f, x: f32) -> vec2f {
  let t = acc.x + x;
  let c = select(acc.y + ((x - t) + acc.x), acc.y + ((acc.x - t) + x), abs(acc.x) >= abs(x));
  return vec2f(t, c);
}

fn kjoin(a: vec2f, b: vec2f) -> vec2f {
  return kadd(vec2f(a.x, a.y + b.y), b.x);
}

/**
 * The workgroup's compensated total of each thread's `x`; every thread must call it and all get
 * the same value. Two levels in a fixed order (deterministic): thread g < WG/GS adds the GS
 * partials of group g, then every thread adds the group sums. Two barriers, ~2·GS reads a thread.
 */
fn wg_total(lid: u32, x: vec2f) -> vec2f {
  partials[lid] = x;
  workgroupBarrier();
  if (lid < WG / GS) {
    var acc = vec2f(0.0);
    for (var t = 0u; t < GS; t++) { acc = kjoin(acc, partials[lid * GS + t]); }
    groups[lid] = acc;
  }
  workgroupBarrier();
  var total = vec2f(0.0);
  for (var g = 0u; g < WG / GS; g++) { total = kjoin(total, groups[g]); }
  return total;
}

/** The workgroup's max of each thread's `x` (the same two levels). */
fn wg_max(lid: u32, x: f32) -> f32 {
  partials[lid] = vec2f(x, 0.0);
  workgroupBarrier();
  if (lid < WG / GS) {
    var m = partials[lid * GS].x;
    for (var t = 1u; t < GS; t++) { m = max(m, partials[lid * GS + t].x); }
    groups[lid] = vec2f(m, 0.0);
  }
  workgroupBarrier();
  var m = groups[0].x;
  for (var g = 1u; g < WG / GS; g++) { m = max(m, groups[g].x); }
  return m;
}

struct Scan {
  before: vec2f, // Σ over the threads before this one
  total: vec2f,
}

/**
 * Exclusive prefix and total of each thread's `x` in thread order (the same two levels). Every
 * read of `partials` comes before the second barrier, so the next call may overwrite them.
 */
fn wg_scan(lid: u32, x: vec2f) -> Scan {
  partials[lid] = x;
  workgroupBarrier();
  let mine = lid / GS;
  var within = vec2f(0.0);
  for (var t = mine * GS; t < lid; t++) { within = kjoin(within, partials[t]); }
  if (lid < WG / GS) {
    var acc = vec2f(0.0);
    for (var t = 0u; t < GS; t++) { acc = kjoin(acc, partials[lid * GS + t]); }
    groups[lid] = acc;
  }
  workgroupBarrier();
  var total = vec2f(0.0);
  var before = vec2f(0.0);
  for (var g = 0u; g < WG / GS; g++) {
    if (g == mine) { before = total; }
    total = kjoin(total, groups[g]);
  }
  return Scan(kjoin(before, within), total);
}

fn is_eos(tok: i32) -> bool {
  let ids = array<i32, 8>(P.eos0, P.eos1, P.eos2, P.eos3, P.eos4, P.eos5, P.eos6, P.eos7);
  var hit = false;
  for (var e = 0u; e < min(P.n_eos, 8u); e++) { hit = hit || ids[e] == tok; }
  return hit;
}

/** Writes the drawn token of row b and its log-prob (thread 0). */
fn emit(b: u32, tok: u32, logp: f32) {
  let at = b * P.S + P.pos;
  let t = i32(tok);
  sequences[at] = t;
  attn_mask[at] = 1.0;
  var p = 0;
  if (P.pos > 0u) { p = positions[at - 1u] + 1; }
  positions[at] = p;
  if (P.has_logprobs != 0u) { logprobs[at] = logp; }
  if (is_eos(t)) { finished[b] = 1; }
}

@compute @workgroup_size(WG)
fn sample_vocab(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  if (lid == 0u) { row_done = u32(finished[b] != 0); }
  if (workgroupUniformLoad(&row_done) != 0u) {
    if (lid == 0u) {
      let at = b * P.S + P.pos;
      sequences[at] = P.pad;
      attn_mask[at] = 0.0;
      positions[at] = 0;
      if (P.has_logprobs != 0u) { logprobs[at] = 0.0; }
    }
    return;
  }
  let row = b * P.V;
  var mx = logits[row];
  for (var v = lid; v < P.V; v += WG) { mx = max(mx, logits[row + v]); }
  let xmax = wg_max(lid, mx);
  let u = sample_uniform(P.seed, b, P.pos);
  if (P.top_k > 0u && P.top_k < P.V) {
    draw_top_k(b, lid, xmax, u);
  } else {
    draw_threshold(b, lid, xmax, u);
  }
}

fn weight(x: f32, xmax: f32) -> f32 {
  return exp((x - xmax) / P.temperature);
}

/** Σ over the row of 1 (as_mass = false) or w (true) for the keys ≥ t; every thread gets it. */
fn sum_at_or_above(row: u32, lid: u32, t: u32, xmax: f32, as_mass: bool) -> f32 {
  var acc = vec2f(0.0);
  for (var v = lid; v < P.V; v += WG) {
    let x = logits[row + v];
    if (key_of(x) >= t) { acc = kadd(acc, select(1.0, weight(x, xmax), as_mass)); }
  }
  let total = wg_total(lid, acc);
  return total.x + total.y;
}

/** The block [lo, hi) of ids thread lid walks in order: contiguous, ⌈V/WG⌉ ids each. */
fn block_of(lid: u32) -> vec2u {
  let per = (P.V + WG - 1u) / WG;
  let lo = min(lid * per, P.V);
  return vec2u(lo, min(lo + per, P.V));
}

/** How many ids before this thread's block have key kt: the tie rank its first tie takes. */
fn ties_before(row: u32, lid: u32, kt: u32) -> f32 {
  let blk = block_of(lid);
  var ties = 0.0;
  for (var v = blk.x; v < blk.y; v++) { ties += select(0.0, 1.0, key_of(logits[row + v]) == kt); }
  return wg_scan(lid, vec2f(ties, 0.0)).before.x;
}

fn draw_top_k(b: u32, lid: u32, xmax: f32, u: f32) {
  let row = b * P.V;
  let k = P.top_k;
  // The k-th largest key: the largest t with #{key ≥ t} ≥ k, bit by bit from the top.
  var kt = 0u;
  for (var i = 0u; i < 32u; i++) {
    let cand = kt | (1u << (31u - i));
    if (sum_at_or_above(row, lid, cand, xmax, false) >= f32(k)) { kt = cand; }
  }
  let above = select(sum_at_or_above(row, lid, kt + 1u, xmax, false), 0.0, kt == 0xffffffffu);
  let quota = f32(k) - above; // ties of key kt kept, lowest ids first
  if (lid == 0u) { atomicStore(&list_n, 0u); }
  var tie_rank = ties_before(row, lid, kt); // its barrier also orders the store above
  let blk = block_of(lid);
  for (var v = blk.x; v < blk.y; v++) {
    let x = logits[row + v];
    let key = key_of(x);
    var take = key > kt;
    if (key == kt) {
      take = tie_rank < quota;
      tie_rank += 1.0;
    }
    if (take) {
      let slot = atomicAdd(&list_n, 1u);
      list_key[slot] = key;
      list_id[slot] = v;
      list_w[slot] = weight(x, xmax);
    }
  }
  workgroupBarrier();
  // Rank of each of the k tokens in the (key descending, id ascending) order and in id order.
  for (var s = lid; s < k; s += WG) {
    var rank = 0u;
    var id_rank = 0u;
    for (var t = 0u; t < k; t++) {
      let before = list_key[t] > list_key[s] || (list_key[t] == list_key[s] && list_id[t] < list_id[s]);
      rank += select(0u, 1u, before);
      id_rank += select(0u, 1u, list_id[t] < list_id[s]);
    }
    list_rank[s] = rank;
    by_rank[rank] = s;
    by_id[id_rank] = s;
  }
  workgroupBarrier();
  if (lid != 0u) { return; }
  var z_k = vec2f(0.0);
  for (var r = 0u; r < k; r++) { z_k = kadd(z_k, list_w[by_id[r]]); }
  var n_kept = k;
  if (P.top_p < 1.0) {
    var before = vec2f(0.0);
    n_kept = 1u;
    for (var r = 1u; r < k; r++) {
      before = kadd(before, list_w[by_rank[r - 1u]]);
      if (!((before.x + before.y) / (z_k.x + z_k.y) < P.top_p)) { break; }
      n_kept = r + 1u;
    }
  }
  var kept = vec2f(0.0);
  for (var r = 0u; r < k; r++) {
    let s = by_id[r];
    if (list_rank[s] < n_kept) { kept = kadd(kept, list_w[s]); }
  }
  let total = kept.x + kept.y;
  let goal = u * total;
  var cum = vec2f(0.0);
  var pick = by_rank[0];
  var done = false;
  for (var r = 0u; r < k; r++) {
    let s = by_id[r];
    if (!done && list_rank[s] < n_kept && list_w[s] > 0.0) {
      cum = kadd(cum, list_w[s]);
      pick = s;
      done = cum.x + cum.y > goal;
    }
  }
  emit(b, list_id[pick], log(list_w[pick]) - log(total));
}

fn draw_threshold(b: u32, lid: u32, xmax: f32, u: f32) {
  let row = b * P.V;
  var kt = 0u;
  var quota = 0.0;
  if (P.top_p < 1.0) {
    let z = sum_at_or_above(row, lid, 0u, xmax, true);
    // The largest key t whose mass at or above still reaches p: the last group the prefix enters.
    for (var i = 0u; i < 32u; i++) {
      let cand = kt | (1u << (31u - i));
      if (sum_at_or_above(row, lid, cand, xmax, true) / z >= P.top_p) { kt = cand; }
    }
    let top = kt == 0xffffffffu;
    let g = select(sum_at_or_above(row, lid, kt + 1u, xmax, true), 0.0, top);
    let ties = sum_at_or_above(row, lid, kt, xmax, false) - select(sum_at_or_above(row, lid, kt + 1u, xmax, false), 0.0, top);
    quota = clamp(ceil((P.top_p * z - g) / weight(value_of(kt), xmax)), 1.0, ties);
  }
  // Kept mass of each thread's block, scanned in thread order (block prefixes and the total).
  let blk = block_of(lid);
  let first_tie = ties_before(row, lid, kt);
  var tie_rank = first_tie;
  var mass = vec2f(0.0);
  for (var v = blk.x; v < blk.y; v++) {
    let x = logits[row + v];
    let key = key_of(x);
    var keep = key > kt;
    if (key == kt) {
      keep = tie_rank < quota;
      tie_rank += 1.0;
    }
    if (keep) { mass = kadd(mass, weight(x, xmax)); }
  }
  if (lid == 0u) {
    atomicStore(&found, NONE);
    atomicStore(&last_kept, 0u);
  }
  let scan = wg_scan(lid, mass); // its barrier also orders the stores above
  let total = scan.total.x + scan.total.y;
  let goal = u * total;
  var cum = scan.before;
  tie_rank = first_tie;
  var last = 0u;
  for (var v = blk.x; v < blk.y; v++) {
    let x = logits[row + v];
    let key = key_of(x);
    var keep = key > kt;
    if (key == kt) {
      keep = tie_rank < quota;
      tie_rank += 1.0;
    }
    let w = weight(x, xmax);
    if (keep && w > 0.0) {
      last = v + 1u;
      cum = kadd(cum, w);
      if (cum.x + cum.y > goal) {
        atomicMin(&found, v);
        break;
      }
    }
  }
  atomicMax(&last_kept, last);
  workgroupBarrier();
  if (lid != 0u) { return; }
  var tok = atomicLoad(&found);
  if (tok == NONE) { tok = atomicLoad(&last_kept) - 1u; }
  emit(b, tok, log(weight(logits[row + tok], xmax)) - log(total));
}
