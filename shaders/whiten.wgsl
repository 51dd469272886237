// Masked whitening over every action token of the batch, in one workgroup.
//
// Math (over all n = B·A positions, m = mask ∈ {0,1}):
//   cnt  = Σ m;   mean = Σ m·x / cnt            (0 when cnt = 0)
//   var  = Σ m·(x − mean)² / (cnt − 1)          (Bessel; 0 when cnt < 2)
//   out  = (x − mean)·inverseSqrt(var + 1e-8)  (+ mean when shift_mean = 0), at EVERY position
// Reference: src/reference/whiten.ts (whitenRef).
//
// Bindings: 0 uniform P {n: element count, shift_mean: 1 = subtract the mean, 0 = add it back}
//           1 x (n) f32, 2 mask (n) f32, 3 out (n) f32
// Layout: a single workgroup of WG threads (WG a power of two, ≤ 256). Each thread accumulates a
// strided slice of the positions in a fixed order, then a tree reduction in workgroup memory
// (lib_tree_sum, one quantity at a time) combines the WG partials. Pass 1 gives the count and a float32 mean; pass 2 sums d = x − mean and
// d² (the corrected two-pass algorithm of Chan, Golub & LeVeque): mean' = mean + Σd/cnt and
// Σ(x − mean')² = Σd² − (Σd)²/cnt, which removes pass 1's rounding error (about 1e-5 at an offset
// of 100) instead of carrying it into every output, and avoids the cancellation of E[x²] − mean².
// The summation order depends only on n and WG, so the result is deterministic. Masked-out x never
// enters a sum.

const WG: u32 = 256u;

struct Params {
  n: u32,
  shift_mean: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// @include lib_tree_sum

@compute @workgroup_size(WG)
fn whiten(@builtin(local_invocation_index) lid: u32) {
  var sum = 0.0;
  var cnt = 0.0;
  for (var i = lid; i < P.n; i += WG) {
    let m = mask[i];
    if (m != 0.0) {
      sum += m * x[i];
      cnt += m;
    }
  }
  let total = tree_sum(lid, cnt);
  let mean = select(0.0, tree_sum(lid, sum) / total, total > 0.0);

  // Pass 2 about the pass-1 mean: d = x − mean is exact in float32 (Sterbenz) for data near the
  // mean, so Σd and Σd² carry no error from a large common offset; Σd/total corrects the mean.
  var s1 = 0.0;
  var s2 = 0.0;
  for (var i = lid; i < P.n; i += WG) {
    let m = mask[i];
    if (m != 0.0) {
      let d = x[i] - mean;
      s1 += m * d;
      s2 += m * d * d;
    }
  }
  let sum_d = tree_sum(lid, s1);
  let sum_d2 = tree_sum(lid, s2);
  let correction = select(0.0, sum_d / total, total > 0.0);
  let ssd = max(sum_d2 - sum_d * correction, 0.0);
  let variance = select(0.0, ssd / (total - 1.0), total >= 2.0);
  let scale = inverseSqrt(variance + 1e-8);
  let shift = select(mean + correction, 0.0, P.shift_mean != 0u);
  for (var i = lid; i < P.n; i += WG) {
    out[i] = ((x[i] - mean) - correction) * scale + shift;
  }
}
