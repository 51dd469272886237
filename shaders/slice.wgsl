// Row selections: a window of positions of every sequence (response tokens), its adjoint, and a
// row gather (minibatches), also of two or three tensors by the same rows in one dispatch. Values
// move as raw 32-bit words, so f32 and i32 tensors both work.
//
// Math: slice_forward:  out[b,l,d] = x[b, start+l, d]                      out (B,len,D)
//       slice_backward: out[b,s,d] = grad[b, s−start, d] if start ≤ s < start+len, else 0   out (B,S,D)
//       gather_rows:    out[i,j] = x[index[i], j] if 0 ≤ index[i] < N, else 0           out (M,row)
//       gather_rows_K:  out_k[i,j] = x_k[index[i], j], likewise, for k < K ∈ {2, 3}       out_k (M,w_k)
// Reference: src/reference/nn/slice.ts (sliceSeqRef, sliceSeqBackwardRef, gatherRowsRef).
//
// Bindings: 0 uniform (slice_*: P, gather_rows: G, gather_rows_K: GM); 1 src (words) read;
//   2 dst (words) rw; 3 index (M) i32 (gathers only); gather_rows_K: 4 src1 read, 5 dst1 rw,
//   6 src2 read, 7 dst2 rw (x_0, out_0 are src, dst). Three tensors take 7 storage buffers, within
//   the 8 per stage every adapter offers (src/gpu/device.ts REQUIRED_LIMITS).
// Layout: one thread per output word, WG per workgroup; grid may be 2-D:
//   i = gid.x + gid.y·num_workgroups.x·WG. gather_rows_K: the outputs' words back to back, out_0's
//   first, so a thread finds its tensor by comparing i with the running ends M·w_0, M·(w_0 + w_1).

const WG: u32 = 256u;

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

struct GatherManyParams {
  n_rows: u32, // N, shared by every x_k
  m: u32,      // M
  w0: u32,     // words per row of x_0
  w1: u32,
  w2: u32,     // 0 for gather_rows_2
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(0) var<uniform> G: GatherParams;
@group(0) @binding(0) var<uniform> GM: GatherManyParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read> index: array<i32>;
@group(0) @binding(4) var<storage, read> src1: array<u32>;
@group(0) @binding(5) var<storage, read_write> dst1: array<u32>;
@group(0) @binding(6) var<storage, read> src2: array<u32>;
@group(0) @binding(7) var<storage, read_write> dst2: array<u32>;

const NO_ROW: u32 = 0xffffffffu;

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

// The source word of output word j of a tensor w words per row, NO_ROW when its row index is
// outside [0, N) (the output word is then 0).
fn gathered_word(j: u32, w: u32) -> u32 {
  let k = index[j / w];
  if (k < 0 || u32(k) >= GM.n_rows) { return NO_ROW; }
  return u32(k) * w + j % w;
}

@compute @workgroup_size(WG)
fn gather_rows_2(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  let end0 = GM.m * GM.w0;
  let end1 = end0 + GM.m * GM.w1;
  if (i < end0) {
    let s = gathered_word(i, GM.w0);
    var w = 0u;
    if (s != NO_ROW) { w = src[s]; }
    dst[i] = w;
  } else if (i < end1) {
    let s = gathered_word(i - end0, GM.w1);
    var w = 0u;
    if (s != NO_ROW) { w = src1[s]; }
    dst1[i - end0] = w;
  }
}

@compute @workgroup_size(WG)
fn gather_rows_3(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  let end0 = GM.m * GM.w0;
  let end1 = end0 + GM.m * GM.w1;
  let end2 = end1 + GM.m * GM.w2;
  if (i < end0) {
    let s = gathered_word(i, GM.w0);
    var w = 0u;
    if (s != NO_ROW) { w = src[s]; }
    dst[i] = w;
  } else if (i < end1) {
    let s = gathered_word(i - end0, GM.w1);
    var w = 0u;
    if (s != NO_ROW) { w = src1[s]; }
    dst1[i - end0] = w;
  } else if (i < end2) {
    let s = gathered_word(i - end1, GM.w2);
    var w = 0u;
    if (s != NO_ROW) { w = src2[s]; }
    dst2[i - end1] = w;
  }
}
