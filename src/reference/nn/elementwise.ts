// float64 reference of the element-wise product (oracle for shaders/elementwise.wgsl `mul`).
// IEEE semantics, as the kernel: 0·∞ and anything·NaN are NaN; a masked product is the caller's
// business (multiply by a weight that is 0 there, as the loss weights are).

/** out[i] = a[i]·b[i] (same length). */
export function mulRef(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < out.length; i++) out[i] = a[i] * b[i];
  return out;
}
