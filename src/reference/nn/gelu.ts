// float64 reference of GELU, tanh approximation (GPT-2), and its exact derivative (oracle for shaders/elementwise.wgsl).
//
// With u = c(x + A x³) and s = ½(1 + tanh u) = sigmoid(2u):
//   gelu(x)  = x·s
//   gelu'(x) = s + x·(1 − tanh²u)/2·c(1 + 3A x²) = s + 2x·s(1 − s)·c(1 + 3A x²)
// s and s(1 − s) are formed from e = exp(−2|u|) ≤ 1, which avoids the cancellation of 1 + tanh u
// for negative x (in float32 it loses all digits past x ≈ −4) and the overflow of exp(2|u|).

const C = Math.sqrt(2 / Math.PI);
const A = 0.044715;

/** [s, s(1 − s)] for s = sigmoid(2u). */
function sigmoid2(u: number): [number, number] {
  const e = Math.exp(-2 * Math.abs(u));
  const s = u >= 0 ? 1 / (1 + e) : e / (1 + e);
  return [s, e / ((1 + e) * (1 + e))];
}

export function geluValue(x: number): number {
  return x * sigmoid2(C * (x + A * x * x * x))[0];
}

export function geluDerivative(x: number): number {
  const [s, s1s] = sigmoid2(C * (x + A * x * x * x));
  // s1s underflows to 0 long before the polynomial overflows; skip it then (0·∞ would be NaN)
  return s1s === 0 ? s : s + 2 * x * s1s * C * (1 + 3 * A * x * x);
}

export function geluRef(x: ArrayLike<number>): Float64Array {
  return Float64Array.from(x, geluValue);
}

export function geluBackwardRef(gradY: ArrayLike<number>, x: ArrayLike<number>): Float64Array {
  return Float64Array.from(x, (v, i) => gradY[i] * geluDerivative(v));
}
