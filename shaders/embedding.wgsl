// Token + position embedding and its backward (scatter-add without atomics).
//
// Math: out[r,d] = wte[v_r,d] + wpe[p_r,d], v_r = clamp(tokens[src_r], 0, V−1), p_r = clamp(positions[src_r], 0, P−1)
//   forward reads a window of columns [start, start+L) of tokens/positions seen as (B, S):
//   src_r = (r / L)·S + start + r % L (the whole tensor is S = L, start = 0: src_r = r; the
//   rollout embeds only its newest column, L = 1, in the same dispatch — no slice afterwards).
//   gradWte[v,d] += Σ_{r: v_r = v} gradOut[r,d];  gradWpe[p,d] += Σ_{r: p_r = p} gradOut[r,d]
// Determinism: the backward is a gather, not a scatter — one thread owns each (table row, d) and
//   sums the matching rows r in increasing order, so no two threads write one address
//   (cost R per thread; fine at V ≤ 128, P ≤ 128, R ≤ 4096).
// Reference: src/reference/nn/embedding.ts (embeddingRef, embeddingBackwardRef).
//
// Bindings: 0 uniform P {R, D, V, P, S, start, L} (R = output rows = B·L; backward: L = S = R,
//   start = 0); 1 tokens (B·S) i32; 2 positions (B·S) i32;
//   embedding_forward:  3 wte (V,D), 4 wpe (P,D), 5 out (R,D) rw
//   embedding_backward: 3 grad_out (R,D), 4 grad_wte (V,D) rw, 5 grad_wpe (P,D) rw    (f32)
// Layout: one thread per output element; forward over R·D, backward over (V + P)·D (the first V·D
//   threads own gradWte, the rest gradWpe). Grid may be 2-D: i = gid.x + gid.y·num_workgroups.x·WG.

override WG: u32 = 64;

struct Params {
  R: u32,
  D: u32,
  V: u32,
  P: u32,
  S: u32,
  start: u32,
  L: u32,
}

@group(0) @binding(0) var<uniform> U: Params;
@group(0) @binding(1) var<storage, read> tokens: array<i32>;
@group(0) @binding(2) var<storage, read> positions: array<i32>;
@group(0) @binding(3) var<storage, read> wte: array<f32>;
@group(0) @binding(3) var<storage, read> grad_out: array<f32>;
@group(0) @binding(4) var<storage, read> wpe: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_wte: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_wpe: array<f32>;

fn token_row(r: u32) -> u32 {
  return u32(clamp(tokens[r], 0, i32(U.V) - 1));
}

fn position_row(r: u32) -> u32 {
  return u32(clamp(positions[r], 0, i32(U.P) - 1));
}

@compute @workgroup_size(WG)
fn embedding_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= U.R * U.D) { return; }
  let r = i / U.D;
  let d = i % U.D;
  let src = (r / U.L) * U.S + U.start + r % U.L;
  out[i] = wte[token_row(src) * U.D + d] + wpe[position_row(src) * U.D + d];
}

@compute @workgroup_size(WG)
fn embedding_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  let n_wte = U.V * U.D;
  if (i >= n_wte + U.P * U.D) { return; }
  if (i < n_wte) {
    let v = i / U.D;
    let d = i % U.D;
    var s = 0.0;
    for (var r = 0u; r < U.R; r++) {
      if (token_row(r) == v) { s += grad_out[r * U.D + d]; }
    }
    grad_wte[i] += s;
  } else {
    let j = i - n_wte;
    let p = j / U.D;
    let d = j % U.D;
    var s = 0.0;
    for (var r = 0u; r < U.R; r++) {
      if (position_row(r) == p) { s += grad_out[r * U.D + d]; }
    }
    grad_wpe[j] += s;
  }
}
