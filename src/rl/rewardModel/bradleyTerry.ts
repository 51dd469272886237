// Bradley–Terry preference loss of the reward-model stage of RLHF (InstructGPT, OpenRLHF
// PairWiseLoss): for N pairs with scores r_c (chosen) and r_r (rejected), Δ = r_c − r_r,
//   L = (1/N) Σ −log σ(Δ) = (1/N) Σ softplus(−Δ)
//   ∂L/∂r_c = −(1 − σ(Δ))/N = −σ(−Δ)/N,   ∂L/∂r_r = +σ(−Δ)/N.
// The scores are read back every step anyway (accuracy is reported), and N is small, so this runs
// on the host in float64; it is the float64 reference itself. softplus and σ are written in their
// overflow-free forms so |Δ| up to 1e300 gives finite values (never NaN).

/** softplus(x) = log(1 + eˣ), stable for any finite x. */
export function softplus(x: number): number {
  return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
}

/** σ(x) = 1/(1 + e⁻ˣ), stable for any finite x. */
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

export interface BradleyTerryResult {
  /** Mean −log σ(r_c − r_r) over pairs. */
  loss: number;
  /** ∂L/∂r_c per pair (N). */
  gradChosen: Float64Array;
  /** ∂L/∂r_r per pair (N). */
  gradRejected: Float64Array;
  /** Share of pairs with r_c > r_r (ties count as wrong: the model did not separate them). */
  accuracy: number;
  /** Mean of r_c − r_r. */
  marginMean: number;
}

export function bradleyTerry(chosen: ArrayLike<number>, rejected: ArrayLike<number>): BradleyTerryResult {
  const N = chosen.length;
  if (rejected.length !== N) throw new Error(`bradleyTerry: ${N} chosen scores but ${rejected.length} rejected`);
  if (N === 0) throw new Error('bradleyTerry: no pairs');
  const gradChosen = new Float64Array(N);
  const gradRejected = new Float64Array(N);
  let loss = 0;
  let correct = 0;
  let margin = 0;
  for (let i = 0; i < N; i++) {
    const d = chosen[i] - rejected[i];
    if (!Number.isFinite(d)) throw new Error(`bradleyTerry: score difference of pair ${i} is ${d} (chosen ${chosen[i]}, rejected ${rejected[i]})`);
    loss += softplus(-d);
    const g = sigmoid(-d) / N;
    gradChosen[i] = -g;
    gradRejected[i] = g;
    if (d > 0) correct++;
    margin += d;
  }
  return { loss: loss / N, gradChosen, gradRejected, accuracy: correct / N, marginMean: margin / N };
}
