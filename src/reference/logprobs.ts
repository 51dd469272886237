// float64 reference: temperature log-softmax gathered at the taken token, entropy, and the
// gradient wrt logits. Matches shaders/logprobs.wgsl (logprobs_forward, logprobs_backward).
//
// A token id outside [0, V) is clamped into range (the kernel does the same so that it can never
// read outside the row); callers are expected to pass valid ids.

export const clampToken = (tok: number, V: number): number => Math.min(V - 1, Math.max(0, Math.trunc(tok)));

/** Row statistics of z = logits/T, shifted by the row max so that ±1e4 logits at small T stay finite. */
function rowSoftmax(logits: ArrayLike<number>, base: number, V: number, T: number) {
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, logits[base + v]);
  const d = new Float64Array(V); // z − max z
  const e = new Float64Array(V); // exp(z − max z)
  let s = 0;
  let s1 = 0; // Σ e·d
  for (let v = 0; v < V; v++) {
    d[v] = (logits[base + v] - m) / T;
    e[v] = Math.exp(d[v]);
    s += e[v];
    s1 += e[v] * d[v];
  }
  return { d, e, s, s1 };
}

export function logprobsRef(
  logits: ArrayLike<number>, // (B, A, V)
  tokens: ArrayLike<number>, // (B, A) integer ids
  B: number,
  A: number,
  V: number,
  T: number,
): { logprobs: Float64Array; entropy: Float64Array } {
  const logprobs = new Float64Array(B * A);
  const entropy = new Float64Array(B * A);
  for (let r = 0; r < B * A; r++) {
    const { d, s, s1 } = rowSoftmax(logits, r * V, V, T);
    const lse = Math.log(s); // logsumexp(z) − max z
    logprobs[r] = d[clampToken(tokens[r], V)] - lse;
    entropy[r] = lse - s1 / s; // lse − Σ p·z, both shifted by max z
  }
  return { logprobs, entropy };
}

/** ∂/∂logits of Σ gLogp·logprobs + Σ gEnt·entropy: (1/T)·[gLogp·(onehot − p) − gEnt·p·(z − Σ p z)]. */
export function logprobsBackwardRef(
  logits: ArrayLike<number>,
  tokens: ArrayLike<number>,
  B: number,
  A: number,
  V: number,
  T: number,
  gradLogprobs: ArrayLike<number>, // (B, A)
  gradEntropy: ArrayLike<number> | null, // (B, A)
): Float64Array {
  const out = new Float64Array(B * A * V);
  for (let r = 0; r < B * A; r++) {
    const { d, e, s, s1 } = rowSoftmax(logits, r * V, V, T);
    const tok = clampToken(tokens[r], V);
    const gl = gradLogprobs[r];
    const ge = gradEntropy ? gradEntropy[r] : 0;
    const meanZ = s1 / s;
    for (let v = 0; v < V; v++) {
      const p = e[v] / s;
      const oneHotMinusP = v === tok ? 1 - p : -p;
      out[r * V + v] = (gl * oneHotMinusP - ge * p * (d[v] - meanZ)) / T;
    }
  }
  return out;
}
