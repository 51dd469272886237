// Fixed-order workgroup sums (and maxima), one quantity at a time through one WG-word array (included with
// `// @include lib_tree_sum`; the including shader declares `const WG: u32`, a power of two, set per pipeline by the host).
// Workgroup memory is zero-initialised, and SwiftShader compiles that per word: one array for all
// the quantities of a kernel, instead of one each, keeps the build short (whiten's two 256-word
// arrays cost ~0.17 s of building in Node's Dawn). Each quantity goes through the same tree as
// before, so the sums keep their bits.

var<workgroup> tree: array<f32, WG>;

/** Σ over the workgroup of each thread's x, by a fixed tree; every thread must call it, and all get the total. */
fn tree_sum(lid: u32, x: f32) -> f32 {
  tree[lid] = x;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { tree[lid] += tree[lid + stride]; }
    workgroupBarrier();
  }
  let total = tree[0];
  workgroupBarrier(); // read by all before the next sum overwrites it
  return total;
}

/** max over the workgroup of each thread's x, by the same fixed tree as tree_sum; all threads get it. */
fn tree_max(lid: u32, x: f32) -> f32 {
  tree[lid] = x;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { tree[lid] = max(tree[lid], tree[lid + stride]); }
    workgroupBarrier();
  }
  let m = tree[0];
  workgroupBarrier();
  return m;
}
