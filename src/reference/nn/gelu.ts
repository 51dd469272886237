// float64 reference of GELU, tanh approximation (GPT-2), and its exact derivative (oracle for shaders/elementwise.wgsl).

const C = Math.sqrt(2 / Math.PI);
const A = 0.044715;

export function geluValue(x: number): number {
  return 0.5 * x * (1 + Math.tanh(C * (x + A * x * x * x)));
}

/** d/dx of geluValue: ½(1 + t) + ½x(1 − t²)·C(1 + 3A x²), t = tanh(C(x + A x³)). */
export function geluDerivative(x: number): number {
  const t = Math.tanh(C * (x + A * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * C * (1 + 3 * A * x * x);
}

export function geluRef(x: ArrayLike<number>): Float64Array {
  return Float64Array.from(x, geluValue);
}

export function geluBackwardRef(gradY: ArrayLike<number>, x: ArrayLike<number>): Float64Array {
  return Float64Array.from(x, (v, i) => gradY[i] * geluDerivative(v));
}
