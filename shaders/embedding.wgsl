// Token + position embedding and its backward (scatter-add without atomics).
//
// Math: out[r,d] = wte[v_r,d] + wpe[p_r,d], v_r = clamp(tokens[src_r], 0, V−1), p_r = clamp(positions[src_r], 0, P−1)
//   forward reads a window of columns [start, start+L) of tokens/positions seen as (B, S):
//   src_r = (r / L)·S + start + r % L (the whole tensor is S = L, start = 0: src_r = r; the
//   rollout embeds only its newest column, L = 1, in the same dispatch — no slice afterwards).
//   gradWte[v,d] += Σ_{r: v_r = v} gradOut[r,d];  gradWpe[p,d] += Σ_{r: p_r = p} gradOut[r,d]
// Determinism: the backward is a gather, not a scatter — one thread owns 8 columns d of one table
//   row and sums the matching rows r in increasing order, so no two threads write one address
//   (cost R id loads per thread, plus 8 gradient loads per matching r; fine at V ≤ 128, P ≤ 128,
//   R ≤ 4096).
// Reference: src/reference/nn/embedding.ts (embeddingRef, embeddingBackwardRef).
//
// Bindings: 0 uniform P {R, D, V, P, S, start, L} (R = output rows = B·L; backward: L = S = R,
//   start = 0); 1 tokens (B·S) i32; 2 positions (B·S) i32;
//   embedding_forward:  3 wte (V,D), 4 wpe (P,D), 5 out (R,D) rw
//   embedding_backward: 3 grad_out (R,D), 4 grad_wte (V,D) rw, 5 grad_wpe (P,D) rw    (f32)
// Layout: forward: one thread per output element, over R·D. Backward: one thread per 8 columns of
//   a table row, over (V + P)·⌈D/8⌉ (the first V·⌈D/8⌉ own gradWte rows, the rest gradWpe rows);
//   consecutive threads take consecutive column blocks of a row, so the 4 lanes of a CPU
//   adapter's SIMD group agree on which r match. Grid may be 2-D: i = gid.x + gid.y·num_workgroups.x·WG.

const WG: u32 = 64u;

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
  let D = U.D;
  let nd = (D + 7u) / 8u;
  let table_row = i / nd;
  if (table_row >= U.V + U.P) { return; }
  let d0 = (i % nd) * 8u;
  let is_wte = table_row < U.V;
  let want = select(table_row - U.V, table_row, is_wte);
  var c: array<u32, 8>;
  for (var k = 0u; k < 8u; k++) { c[k] = min(d0 + k, D - 1u); }
  var lo = vec4f(0.0);
  var hi = vec4f(0.0);
  for (var r = 0u; r < U.R; r++) {
    let id = select(position_row(r), token_row(r), is_wte);
    if (id == want) {
      let g = r * D;
      lo += vec4f(grad_out[g + c[0]], grad_out[g + c[1]], grad_out[g + c[2]], grad_out[g + c[3]]);
      hi += vec4f(grad_out[g + c[4]], grad_out[g + c[5]], grad_out[g + c[6]], grad_out[g + c[7]]);
    }
  }
  for (var k = 0u; k < 8u; k++) {
    let d = d0 + k;
    if (d >= D) { break; }
    let s = select(hi[k & 3u], lo[k & 3u], k < 4u);
    if (is_wte) { grad_wte[want * D + d] += s; } else { grad_wpe[want * D + d] += s; }
  }
}
