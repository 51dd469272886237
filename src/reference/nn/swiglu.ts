// float64 reference of the gated MLP activation of Llama/Qwen (LlamaMLP: down(act(gate(x)) · up(x))
// with hidden_act silu) and its backward:
//   y = silu(g)·u,  silu(g) = g·σ(g)
//   dg = dy·u·σ(g)·(1 + g·(1 − σ(g))),   du = dy·silu(g)
// σ is formed from e = exp(−|g|) ≤ 1 so that neither branch overflows for large |g|.

/** σ(g) without overflow. */
export function sigmoid(g: number): number {
  const e = Math.exp(-Math.abs(g));
  return g >= 0 ? 1 / (1 + e) : e / (1 + e);
}

export function siluValue(g: number): number {
  return g * sigmoid(g);
}

export function siluDerivative(g: number): number {
  const s = sigmoid(g);
  return s * (1 + g * (1 - s));
}

/** y (n) = silu(gate)·up. */
export function swigluRef(gate: ArrayLike<number>, up: ArrayLike<number>): Float64Array {
  const y = new Float64Array(gate.length);
  for (let i = 0; i < y.length; i++) y[i] = siluValue(gate[i]) * up[i];
  return y;
}

export function swigluBackwardRef(gradY: ArrayLike<number>, gate: ArrayLike<number>, up: ArrayLike<number>): { gradGate: Float64Array; gradUp: Float64Array } {
  const gradGate = new Float64Array(gate.length);
  const gradUp = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) {
    gradGate[i] = gradY[i] * up[i] * siluDerivative(gate[i]);
    gradUp[i] = gradY[i] * siluValue(gate[i]);
  }
  return { gradGate, gradUp };
}
