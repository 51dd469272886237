// What the exported job targets, and the names each engine gives the playground's choices.
// Sources (read from the engines' public code; the key lists are test fixtures in tests/fixtures):
// - verl v0.9.0 (verl-project/verl, commit 483b8a0): verl/trainer/config/_generated_ppo_trainer.yaml
//   and verl/trainer/ppo/core_algos.py (kl_penalty, agg_loss, AdvantageEstimator, POLICY_LOSS_REGISTRY).
// - OpenRLHF v0.11.0 (commit 3c3be62): openrlhf/cli/train_ppo_ray.py, whose flags are dotted (--actor.*, --algo.*, …).
import { GROUP_ESTIMATOR_SPECS } from '../reference/groupAdvantages.ts';
import type { AdvantageEstimator, GroupKlOrder, PpoConfig } from '../rl/config.ts';

export type Engine = 'verl' | 'openrlhf';
export const ENGINES: readonly Engine[] = ['verl', 'openrlhf'];
export const ENGINE_TITLES: Record<Engine, string> = { verl: 'verl', openrlhf: 'OpenRLHF' };

/** The verl release whose generated trainer config the keys were checked against (tests/fixtures/verl_config_keys.json). */
export const VERL_VERSION = '0.9.0';
export const VERL_COMMIT = '483b8a009ba3a97563edee3a19887e4862b8094a';
export const VERL_TARGET = `verl ${VERL_VERSION} (config keys of verl-project/verl tag v${VERL_VERSION}, commit ${VERL_COMMIT.slice(0, 7)}, verl/trainer/config/_generated_ppo_trainer.yaml)`;
/** The OpenRLHF release whose argument parser the flags were checked against (tests/fixtures/openrlhf_ppo_flags.json). */
export const OPENRLHF_VERSION = '0.11.0';
export const OPENRLHF_COMMIT = '3c3be6234e0cb353e76bb8019947db9dfe99fca7';
export const OPENRLHF_TARGET = `OpenRLHF ${OPENRLHF_VERSION} (dotted flags of openrlhf/cli/train_ppo_ray.py at commit ${OPENRLHF_COMMIT.slice(0, 7)}; the flat flags of older releases such as --pretrain are rejected there)`;

/** A small instruct model that runs on one 24 GB GPU; the scripts take MODEL from the environment. */
export const DEFAULT_MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';

type KlEstimator = PpoConfig['klEstimator'];

/**
 * verl's names for the KL in the reward (core_algos.kl_penalty_forward); the long names work on every
 * release. The reward is computed without gradient, so the straight-through "+" estimators equal
 * their plain forms there: k1+ → kl and k3+ → low_var_kl are exact. k1_clamped (AlpacaFarm's
 * max(d, 0)) has no counterpart: kl is the nearest (equal wherever d ≥ 0), with a note.
 */
export const VERL_KL: Record<KlEstimator, string> = { k1: 'kl', abs: 'abs', k2: 'mse', k3: 'low_var_kl', 'k1+': 'kl', 'k3+': 'low_var_kl', k1_clamped: 'kl' };

/**
 * verl's names for the KL loss (actor.kl_loss_type). "k1+"/"k3+" (value of k1/k3, gradient of k2)
 * are verl's own straight-through names: core_algos.kl_penalty strips the "+" before
 * kl_penalty_forward since v0.8.0 (v0.7.1 passed "k3+" on unchanged and raised NotImplementedError).
 */
export const VERL_KL_LOSS: Record<KlEstimator, string> = { ...VERL_KL, 'k1+': 'k1+', 'k3+': 'k3+' };

/** OpenRLHF --algo.kl.estimator for the KL in the reward: k1, k2, k3 only; "+" forms are exact there (no gradient). */
export const OPENRLHF_KL: Record<KlEstimator, string | null> = { k1: 'k1', abs: null, k2: 'k2', k3: 'k3', 'k1+': 'k1', 'k3+': 'k3', k1_clamped: 'k1' };

/** OpenRLHF --algo.kl.estimator for the KL loss: "+" forms → k2, the estimator with the same gradient. */
export const OPENRLHF_KL_LOSS: Record<KlEstimator, string | null> = { ...OPENRLHF_KL, 'k1+': 'k2', 'k3+': 'k2' };

/** Knob values whose engine name above is only the nearest, not the same estimator. */
export const klNearestNote = (engine: 'verl' | 'OpenRLHF', which: 'reward' | 'loss', est: KlEstimator, emitted: string): string | null => {
  if (est === 'k1_clamped') {
    return `# KL ${which} estimator k1_clamped (AlpacaFarm's one-sided max(logp − ref, 0)): ${engine} has no clamped estimator; ${emitted} (plain k1) is the nearest and differs where the policy is less likely than the reference`;
  }
  if ((est === 'k1+' || est === 'k3+') && which === 'loss') {
    // verl takes the same name (VERL_KL_LOSS), so only OpenRLHF needs a note.
    return engine === 'verl'
      ? null
      : `# KL loss estimator ${est}: OpenRLHF has no straight-through estimators; ${emitted} has the same gradient (k2's), so training is the same, but the logged KL loss is k2's value instead of ${est.slice(0, 2)}'s`;
  }
  if (est === 'k1+' || est === 'k3+') {
    return `# KL reward estimator ${est}: the reward carries no gradient, so ${emitted} gives the same values (the "+" only changes the gradient of a KL loss)`;
  }
  return null;
};

/**
 * With the KL in the reward, the group estimators (all but plain REINFORCE) differ in where the
 * penalty enters. verl (ray_trainer.apply_kl_penalty, then compute_grpo_outcome_advantage / rloo /
 * reinforce_plus_plus_baseline) sums the token rewards score − β·KL_t into one score before the group
 * statistics; OpenRLHF (experience_maker.compute_advantages_and_returns) forms the group statistics
 * from the raw scores and adds −β·KL_t afterwards, as a reward-to-go (compute_reward,
 * get_cumulative_returns). The config's groupKlOrder picks one; each engine can only do its own.
 */
export function groupKlOrderNote(engine: Engine, estimator: AdvantageEstimator, order: GroupKlOrder): string | null {
  // REINFORCE and ReMax keep the KL per token in verl as well (spec row tokenKl): no difference to note.
  if (estimator === 'gae' || GROUP_ESTIMATOR_SPECS[estimator].tokenKl) return null;
  const verlWay = 'subtracts β·ΣKL from each score before the group statistics (one advantage per response)';
  const rlhfWay = 'forms the group statistics from the raw scores and adds −β·KL per token afterwards, as a reward-to-go';
  const own = engine === 'verl' ? verlWay : rlhfWay;
  if (order === engine) return `# KL with ${estimator}: ${ENGINE_TITLES[engine]}, like the playground (group KL order ${order}), ${own}`;
  return `# KL with ${estimator}: the playground (group KL order ${order}) ${order === 'verl' ? verlWay : rlhfWay}; ${ENGINE_TITLES[engine]} can only do its own order: it ${own}, so the advantages differ (export with group KL order ${engine} to match)`;
}

export const VERL_ADV: Record<AdvantageEstimator, string> = {
  gae: 'gae',
  reinforce: 'reinforce_plus_plus',
  reinforce_baseline: 'reinforce_plus_plus_baseline',
  group_norm: 'grpo',
  rloo: 'rloo',
  // Dr. GRPO in verl = GRPO without the std division (algorithm.norm_adv_by_std_in_grpo=False).
  dr_grpo: 'grpo',
  // Registered in core_algos at v0.9.0 (compute_opo_outcome_advantage, compute_grpo_passk_outcome_
  // advantage, compute_remax_outcome_advantage); ray_trainer adds ReMax's greedy rollout itself.
  opo: 'opo',
  grpo_passk: 'grpo_passk',
  remax: 'remax',
};

export const OPENRLHF_ADV: Record<AdvantageEstimator, string> = {
  gae: 'gae',
  reinforce: 'reinforce',
  reinforce_baseline: 'reinforce_baseline',
  group_norm: 'group_norm',
  rloo: 'rloo',
  dr_grpo: 'dr_grpo',
  // No counterpart in OpenRLHF (experience_maker.compute_advantages_and_returns names only the five
  // above): the nearest estimator is emitted and OPENRLHF_ADV_MISSING says what differs.
  opo: 'dr_grpo',
  grpo_passk: 'group_norm',
  remax: 'reinforce',
};

/** What the stand-in of OPENRLHF_ADV changes, for an estimator OpenRLHF does not have. */
export const OPENRLHF_ADV_MISSING: Partial<Record<AdvantageEstimator, string>> = {
  opo: 'OPO (the length-weighted group mean as the baseline); dr_grpo is emitted instead, whose baseline is the plain group mean',
  grpo_passk: 'GRPO pass@k (only the best response of a group gets (best − runner-up)/std); group_norm is emitted instead, which gives every response its GRPO advantage',
  remax: 'ReMax (a greedy response per prompt whose reward is the baseline); reinforce is emitted instead, with no per-prompt baseline (its batch whitening centres the returns)',
};

/** Numbers as Python parses them: integers plain, others in JS's shortest round-trip form. */
export const num = (x: number): string => String(x);

/** Stands in for a disabled clip: large enough never to bind. */
export const NO_CLIP = '1e9';

/** Largest divisor of n that is at most cap (a per-GPU micro-batch that tiles the batch). */
export function divisorAtMost(n: number, cap: number): number {
  for (let d = Math.min(n, cap); d > 1; d--) if (n % d === 0) return d;
  return 1;
}
