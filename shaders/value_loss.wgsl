// Clipped value loss per token fused with the per-row masked sums that agg_finalize
// (aggregate.wgsl) turns into [loss, clipfrac] and the weighted gradient.
//
// Math per token (docs/algorithms.md, Numerical conventions), has_clip with ε = clip:
//   dv = v − old;  vclip = v if |dv| < ε else old ± ε (= old + clamp(dv, −ε, ε); taking v itself
//   inside the band keeps rounding from flipping l2 > l1)
//   l1 = (v − R)²;  l2 = (vclip − R)²;  L = ½·max(l1, l2);  clipped = l2 > l1
//   g = ∂L/∂v = clipped ? (vclip − R)·[|dv| < ε] : (v − R)
// without clip: L = ½·(v − R)², clipped = false, g = v − R.
// Masked positions write g = 0 and add nothing.
// Row partials (B, 5) = [n_b, Σ m·L, Σ m·clipped, −, −] (aggregate.wgsl layout); agg_finalize
// with K = 2 then scales g in place by the aggregation weights.
// Reference: src/reference/valueLoss.ts (valueTokenRef, valueLossRef).
//
// Bindings: 0 uniform P, 1 values (B,A) f32, 2 old_values (B,A) f32, 3 returns (B,A) f32,
//           4 action_mask (B,A) f32, 5 grad_values (B,A) f32 rw (unweighted g), 6 rows (B,5) f32 rw
// Layout: one workgroup of WG threads (a power of two) per row b (grid B); threads stride over A,
//         then a deterministic tree reduction in workgroup memory.

const WG: u32 = 64u;
const ROW_STRIDE: u32 = 5u;
const SUMS: u32 = 3u;

struct Params {
  B: u32,
  A: u32,
  clip: f32,
  has_clip: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read> old_values: array<f32>;
@group(0) @binding(3) var<storage, read> returns: array<f32>;
@group(0) @binding(4) var<storage, read> action_mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_values: array<f32>;
@group(0) @binding(6) var<storage, read_write> rows: array<f32>;

// @include lib_tree_sum

@compute @workgroup_size(WG)
fn value_rows(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.x;
  var acc: array<f32, SUMS>;
  for (var a = lid; a < P.A; a += WG) {
    let i = b * P.A + a;
    let m = action_mask[i];
    var g = 0.0;
    if (m != 0.0) {
      let v = values[i];
      let err = v - returns[i];
      let l1 = err * err;
      var loss = 0.5 * l1;
      var clipped = false;
      g = err;
      if (P.has_clip != 0u) {
        let old = old_values[i];
        let dv = v - old;
        let inside = abs(dv) < P.clip;
        var vclip = v;
        if (!inside) { vclip = old + select(-P.clip, P.clip, dv > 0.0); }
        let err2 = vclip - returns[i];
        let l2 = err2 * err2;
        clipped = l2 > l1;
        loss = 0.5 * max(l1, l2);
        if (clipped) { g = select(0.0, err2, inside); }
      }
      acc[0] += m;
      acc[1] += m * loss;
      acc[2] += m * select(0.0, 1.0, clipped);
    }
    grad_values[i] = g;
  }
  for (var j = 0u; j < SUMS; j++) {
    let total = tree_sum(lid, acc[j]);
    if (lid == 0u) { rows[b * ROW_STRIDE + j] = total; }
  }
}
