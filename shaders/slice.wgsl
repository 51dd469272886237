// Row selections: a window of positions of every sequence (response tokens), its adjoint, and a
// row gather (minibatches). Values move as raw 32-bit words, so f32 and i32 tensors both work.
//
// Math: slice_forward:  out[b,l,d] = x[b, start+l, d]                      out (B,len,D)
//       slice_backward: out[b,s,d] = grad[b, s−start, d] if start ≤ s < start+len, else 0   out (B,S,D)
//       gather_rows:    out[i,j] = x[index[i], j] if 0 ≤ index[i] < N, else 0           out (M,row)
// Reference: src/reference/nn/slice.ts (sliceSeqRef, sliceSeqBackwardRef, gatherRowsRef).
//
// Bindings: 0 uniform (slice_*: P, gather_rows: G); 1 src (words) read; 2 dst (words) rw;
//   3 index (M) i32 (gather_rows only).
// Layout: one thread per output word, WG per workgroup; grid may be 2-D:
//   i = gid.x + gid.y·num_workgroups.x·WG.

override WG: u32 = 256;

struct Params {
  B: u32,
  S: u32,
  D: u32,
  start: u32,
  len: u32,
}

struct GatherParams {
  n_rows: u32, // N
  row: u32,    // words per row
  m: u32,      // M
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(0) var<uniform> G: GatherParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read> index: array<i32>;

@compute @workgroup_size(WG)
fn slice_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.B * P.len * P.D) { return; }
  let d = i % P.D;
  let bl = i / P.D;
  let l = bl % P.len;
  let b = bl / P.len;
  dst[i] = src[(b * P.S + P.start + l) * P.D + d];
}

@compute @workgroup_size(WG)
fn slice_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= P.B * P.S * P.D) { return; }
  let d = i % P.D;
  let bs = i / P.D;
  let s = bs % P.S;
  let b = bs / P.S;
  var w = 0u; // the bits of 0.0 and of integer 0
  if (s >= P.start && s < P.start + P.len) { w = src[(b * P.len + s - P.start) * P.D + d]; }
  dst[i] = w;
}

@compute @workgroup_size(WG)
fn gather_rows(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = G.row;
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= G.m * row) { return; }
  let k = index[i / row];
  var w = 0u;
  if (k >= 0 && u32(k) < G.n_rows) { w = src[u32(k) * row + i % row]; }
  dst[i] = w;
}
