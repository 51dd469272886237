// float64 reference: generalized advantage estimation (verl convention for masked positions).

/**
 * Per row, reverse over t with next = 0, last = 0 past the end. Where mask[b,t] ≠ 0:
 * δ = r_t + γ·next − v_t; last = δ + γλ·last; next = v_t. Masked positions leave both unchanged.
 * advantages[b,t] = last (so masked positions carry the running value); returns = advantages + values.
 * rewards / values / mask (B,A) → advantages (B,A), returns (B,A).
 */
export function gaeRef(
  rewards: ArrayLike<number>,
  values: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  gamma: number,
  lam: number,
): { advantages: Float64Array; returns: Float64Array } {
  const advantages = new Float64Array(B * A);
  const returns = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    let next = 0;
    let last = 0;
    for (let t = A - 1; t >= 0; t--) {
      const i = b * A + t;
      if (mask[i] !== 0) {
        const delta = rewards[i] + gamma * next - values[i];
        last = delta + gamma * lam * last;
        next = values[i];
      }
      advantages[i] = last;
      returns[i] = last + values[i];
    }
  }
  return { advantages, returns };
}
