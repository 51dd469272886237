// Test oracle: float64 transliteration of OpenRLHF's advantage path, written op by op in the order
// the PyTorch code applies them, independently of src/reference/. Source read: OpenRLHF/OpenRLHF
// tag v0.11.0, commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7:
// openrlhf/trainer/ppo_utils/experience_maker.py (compute_advantages_and_returns,
// get_cumulative_returns) and openrlhf/models/utils.py (compute_reward).

type Arr = ArrayLike<number>;

export type OpenRlhfEstimator = 'reinforce' | 'rloo' | 'reinforce_baseline' | 'group_norm' | 'dr_grpo';

/**
 * compute_advantages_and_returns for the outcome estimators, with the KL in the reward: the raw
 * scores of each prompt's n samples (rows b·n … b·n+n−1, the order OpenRLHF restores with `indices`)
 * get the group baseline (rloo: leave-one-out mean; reinforce_baseline, dr_grpo: mean; group_norm:
 * (r − mean) / (unbiased std + 1e-9)); compute_reward puts each on the last action token and adds
 * −kl_coef·kl (kl as given, per token); get_cumulative_returns sums rewards·mask backwards with γ
 * (forced to 1 for all but reinforce); advantages = returns, normalised for reinforce and
 * reinforce_baseline with the mean and the biased variance (Σ/num_actions, clamped at 1e-8).
 */
export function advantagesAndReturns(
  estimator: OpenRlhfEstimator,
  scores: Arr,
  kl: Arr,
  m: Arr,
  B: number,
  A: number,
  n: number,
  klCoef: number,
  gamma: number,
): { advantages: Float64Array; returns: Float64Array } {
  const r = Float64Array.from(scores);
  for (let g = 0; g < B / n; g++) {
    const xs = Array.from({ length: n }, (_, j) => scores[g * n + j]);
    const sum = xs.reduce((s, x) => s + x, 0);
    const mean = sum / n;
    const std = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
    for (let j = 0; j < n; j++) {
      const x = xs[j];
      if (estimator === 'rloo') r[g * n + j] = x - (sum - x) / (n - 1);
      else if (estimator === 'reinforce_baseline' || estimator === 'dr_grpo') r[g * n + j] = x - mean;
      else if (estimator === 'group_norm') r[g * n + j] = (x - mean) / (std + 1e-9);
    }
  }
  const coef = Math.max(klCoef, 0); // kl_coef <= 0 → 0
  const g = estimator === 'reinforce' ? gamma : 1;
  const returns = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    // eos_indices: the last position where the mask is set (argmax of the flipped mask).
    let eos = A - 1;
    for (let t = A - 1; t >= 0; t--)
      if (m[b * A + t] > 0.5) {
        eos = t;
        break;
      }
    let cumulative = 0;
    for (let t = A - 1; t >= 0; t--) {
      const i = b * A + t;
      const reward = (t === eos ? r[b] : 0) - coef * kl[i];
      cumulative = m[i] * reward + g * cumulative;
      returns[i] = cumulative;
    }
  }
  const advantages = Float64Array.from(returns);
  if (estimator === 'reinforce' || estimator === 'reinforce_baseline') {
    let num = 0,
      s = 0;
    for (let i = 0; i < B * A; i++) {
      num += m[i];
      s += advantages[i] * m[i];
    }
    const mean = s / num;
    let v = 0;
    for (let i = 0; i < B * A; i++) v += (advantages[i] - mean) ** 2 * m[i];
    const rstd = 1 / Math.sqrt(Math.max(v / num, 1e-8));
    for (let i = 0; i < B * A; i++) advantages[i] = (advantages[i] - mean) * rstd;
  }
  return { advantages, returns };
}
