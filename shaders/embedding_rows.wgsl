// Token embedding without positions (Llama, Qwen): rows of a table held as row parts, each within
// one storage binding (Qwen3-0.6B's 151 936 × 1 024 table is 622 MB in f32, 311 MB in f16), in f32
// or in f16 (two values a word, read with the core unpack2x16float), and its backward.
//
// Math: v_r = clamp(tokens[r], 0, V − 1);  out[r, d] = table[v_r, d] (f16 widened exactly);
//   gradTable[v, d] += Σ_{r: v_r = v} gradOut[r, d], rows r in increasing order.
// One dispatch per part: the part holds rows [row_start, row_start + part_rows) and writes only
// the rows whose token falls there, so the parts together write every row once.
// Determinism without float atomics (the backward is a gather, not a scatter):
//   rows_links, one thread per row r: links[r] = the next row r' > r with the same token (−1: none),
//   links[R + r] = 1 when no earlier row has r's token (r heads its token's chain);
//   rows_backward, one thread per (head row r, column d): walks the chain r → links[r] → … adding
//   gradOut[·, d] in row order, and adds the sum into the part's row v_r. One thread writes each
//   (v, d); the work is R·D loads plus the R² id comparisons of the links.
// Reference: src/reference/nn/embeddingRows.ts (embeddingRowsRef, embeddingRowsBackwardRef).
//
// Bindings (uniform P {R, D, V, row_start, part_rows} at 0):
//   rows_forward:     1 tokens (R) i32, 2 part (part_rows, D) f32, 3 out (R, D) f32 rw
//   rows_forward_f16: 1 tokens (R) i32, 2 part_f16 (part_rows·D f16 as ⌈·/2⌉ u32), 3 out (R, D) f32 rw
//   rows_links:       1 tokens (R) i32, 2 links (2R) i32 rw
//   rows_backward:    1 tokens (R) i32, 2 chain (2R) i32, 3 grad_out (R, D) f32, 4 grad_part (part_rows, D) f32 rw
// Layout: forward and backward: one thread per (r, d), consecutive threads along d (coalesced),
//   WG per workgroup, grid ⌈R·D/WG⌉ folded 2-D past 65535 (i = gid.x + gid.y·num_workgroups.x·WG).
//   rows_links: one thread per row, grid ⌈R/WG⌉ folded the same way.

const WG: u32 = 64u;

struct Params {
  R: u32,
  D: u32,
  V: u32,
  row_start: u32,
  part_rows: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> tokens: array<i32>;
@group(0) @binding(2) var<storage, read> part: array<f32>;
@group(0) @binding(2) var<storage, read> part_f16: array<u32>;
@group(0) @binding(2) var<storage, read_write> links: array<i32>;
@group(0) @binding(2) var<storage, read> chain: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read> grad_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_part: array<f32>;

fn token_row(r: u32) -> u32 {
  return u32(clamp(tokens[r], 0, i32(P.V) - 1));
}

fn thread_index(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(WG)
fn rows_forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = thread_index(gid, nwg);
  if (i >= P.R * P.D) { return; }
  let v = token_row(i / P.D);
  if (v < P.row_start || v >= P.row_start + P.part_rows) { return; }
  out[i] = part[(v - P.row_start) * P.D + i % P.D];
}

@compute @workgroup_size(WG)
fn rows_forward_f16(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = thread_index(gid, nwg);
  if (i >= P.R * P.D) { return; }
  let v = token_row(i / P.D);
  if (v < P.row_start || v >= P.row_start + P.part_rows) { return; }
  let e = (v - P.row_start) * P.D + i % P.D;
  out[i] = unpack2x16float(part_f16[e >> 1u])[e & 1u];
}

@compute @workgroup_size(WG)
fn rows_links(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = thread_index(gid, nwg);
  if (r >= P.R) { return; }
  let v = token_row(r);
  var head = 1;
  for (var k = 0u; k < r; k++) {
    if (token_row(k) == v) {
      head = 0;
      break;
    }
  }
  var next = -1;
  for (var k = r + 1u; k < P.R; k++) {
    if (token_row(k) == v) {
      next = i32(k);
      break;
    }
  }
  links[r] = next;
  links[P.R + r] = head;
}

@compute @workgroup_size(WG)
fn rows_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = thread_index(gid, nwg);
  if (i >= P.R * P.D) { return; }
  let r = i / P.D;
  if (chain[P.R + r] == 0) { return; }
  let v = token_row(r);
  if (v < P.row_start || v >= P.row_start + P.part_rows) { return; }
  let d = i % P.D;
  var s = 0.0;
  var k = i32(r);
  while (k >= 0) {
    s += grad_out[u32(k) * P.D + d];
    k = chain[k];
  }
  grad_part[(v - P.row_start) * P.D + d] += s;
}
