// float64 reference of GELU, tanh approximation (GPT-2), and its exact derivative (oracle for shaders/elementwise.wgsl).
//
// With u = c(x + A x³) and s = ½(1 + tanh u) = sigmoid(2u):
//   gelu(x)  = x·s
//   gelu'(x) = s + x·(1 − tanh²u)/2·c(1 + 3A x²) = s + 2x·s(1 − s)·c(1 + 3A x²)
// s and s(1 − s) are formed from e = exp(−2|u|) ≤ 1, which avoids the cancellation of 1 + tanh u
// for negative x (in float32 it loses all digits past x ≈ −4) and the overflow of exp(2|u|).

const C = Math.sqrt(2 / Math.PI);
const A = 0.044715;

/** s = sigmoid(2u), from e = exp(−2|u|). */
function sigmoid2(u: number, e: number): number {
  return u >= 0 ? 1 / (1 + e) : e / (1 + e);
}

/** u = c(x + A x³). */
const uOf = (x: number) => C * (x + A * x * x * x);

export function geluValue(x: number): number {
  const u = uOf(x);
  return x * sigmoid2(u, Math.exp(-2 * Math.abs(u)));
}

export function geluDerivative(x: number): number {
  const u = uOf(x);
  const e = Math.exp(-2 * Math.abs(u));
  const s = sigmoid2(u, e);
  const s1s = e / ((1 + e) * (1 + e)); // s(1 − s)
  // s1s underflows to 0 long before the polynomial overflows; skip it then (0·∞ would be NaN)
  return s1s === 0 ? s : s + 2 * x * s1s * C * (1 + 3 * A * x * x);
}

// Plain loops: Float64Array.from with a mapping callback made GELU a tenth of a CPU-backend run.
export function geluRef(x: ArrayLike<number>): Float64Array {
  const y = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) y[i] = geluValue(x[i]);
  return y;
}

export function geluBackwardRef(gradY: ArrayLike<number>, x: ArrayLike<number>): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) g[i] = gradY[i] * geluDerivative(x[i]);
  return g;
}
