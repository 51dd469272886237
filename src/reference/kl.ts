// float64 reference: per-token KL estimators on d = logp − ref_logp (README, Numerical conventions).
// Mirrors verl verl/trainer/ppo/core_algos.py kl_penalty / kl_penalty_forward: k1, abs, k2 ("mse"),
// k3 ("low_var_kl", both clamps), and the straight-through "+" variants whose value is k1 / k3 and
// whose gradient is k2's (d). 'k1_clamped' is AlpacaFarm's one-sided penalty max(d, 0).

/**
 * Per-token KL estimators on d = logp − ref (README, Numerical conventions; verl core_algos.kl_penalty / kl_penalty_forward):
 * k1 = d, abs = |d|, k2 = ½d², k3 = clamp(e^{−d'} + d' − 1, ±10) with d' = clamp(d, ±20);
 * 'k1+' / 'k3+': the value of k1 / k3 with the gradient of k2 (d), verl's straight-through "+" suffix;
 * 'k1_clamped': max(d, 0), AlpacaFarm's one-sided penalty (gradient 1 where d > 0, else 0).
 */
export type KlEstimator = 'k1' | 'abs' | 'k2' | 'k3' | 'k1+' | 'k3+' | 'k1_clamped';
export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'abs', 'k2', 'k3', 'k1+', 'k3+', 'k1_clamped'];

/** verl's low_var_kl (k3) clamps d to ±20 before exp, as the policy loss clamps its own log-ratio. */
export const KL_LOG_RATIO_CLAMP = 20;
/** verl's low_var_kl (k3) clamps the estimate itself to ±10. */
export const KL_K3_CLAMP = 10;

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

export function klValue(logp: number, refLogp: number, estimator: KlEstimator): number {
  const d = logp - refLogp;
  switch (estimator) {
    case 'k1':
      return d;
    case 'abs':
      return Math.abs(d);
    case 'k2':
      return 0.5 * d * d;
    case 'k3':
    case 'k3+': {
      const dc = clamp(d, -KL_LOG_RATIO_CLAMP, KL_LOG_RATIO_CLAMP);
      return clamp(Math.exp(-dc) + dc - 1, -KL_K3_CLAMP, KL_K3_CLAMP);
    }
    case 'k1+':
      return d;
    case 'k1_clamped':
      return Math.max(d, 0);
  }
}

/**
 * ∂KL/∂logp; zero where a clamp is active (as autograd through clamp gives). For 'k1+' / 'k3+' the
 * straight-through gradient of ½d², i.e. d; for 'k1_clamped' 1 where d > 0, else 0.
 */
export function klGradValue(logp: number, refLogp: number, estimator: KlEstimator): number {
  const d = logp - refLogp;
  switch (estimator) {
    case 'k1':
      return 1;
    case 'abs':
      return d > 0 ? 1 : d < 0 ? -1 : 0;
    case 'k2':
      return d;
    case 'k3': {
      if (d < -KL_LOG_RATIO_CLAMP || d > KL_LOG_RATIO_CLAMP) return 0;
      const v = Math.exp(-d) + d - 1;
      if (v > KL_K3_CLAMP) return 0; // v ≥ 0 always, so only the upper clamp can bind
      return 1 - Math.exp(-d);
    }
    case 'k1+':
    case 'k3+':
      return d;
    case 'k1_clamped':
      return d > 0 ? 1 : 0;
  }
}

export function klRef(logp: ArrayLike<number>, refLogp: ArrayLike<number>, estimator: KlEstimator): Float64Array {
  const out = new Float64Array(logp.length);
  for (let i = 0; i < out.length; i++) out[i] = klValue(logp[i], refLogp[i], estimator);
  return out;
}

export function klGradRef(logp: ArrayLike<number>, refLogp: ArrayLike<number>, estimator: KlEstimator): Float64Array {
  const out = new Float64Array(logp.length);
  for (let i = 0; i < out.length; i++) out[i] = klGradValue(logp[i], refLogp[i], estimator);
  return out;
}
