// What the exported job targets, and the names each engine gives the playground's choices.
// Sources (read from the engines' public code; the key lists are test fixtures in tests/fixtures):
// - verl: verl/trainer/config/_generated_ppo_trainer.yaml at commit b2df6f8 (the 0.5/0.6 line) and
//   verl/trainer/ppo/core_algos.py (kl_penalty_forward, agg_loss, AdvantageEstimator).
// - OpenRLHF 0.10.2: openrlhf/cli/train_ppo_ray.py, whose flags are dotted (--actor.*, --algo.*, …).
import type { AdvantageEstimator, PpoConfig } from '../rl/config.ts';

export type Engine = 'verl' | 'openrlhf';
export const ENGINES: readonly Engine[] = ['verl', 'openrlhf'];
export const ENGINE_TITLES: Record<Engine, string> = { verl: 'verl', openrlhf: 'OpenRLHF' };

/** The verl commit whose generated trainer config the keys were checked against (tests/fixtures/verl_config_keys.json). */
export const VERL_COMMIT = 'b2df6f8c8c9521fcc4742c40d437be40f48d8b42';
export const VERL_TARGET = 'verl 0.5/0.6 line (config keys of volcengine/verl commit b2df6f8, verl/trainer/config/_generated_ppo_trainer.yaml)';
export const OPENRLHF_TARGET = 'OpenRLHF 0.10.2 (dotted flags of openrlhf/cli/train_ppo_ray.py; earlier flat flags such as --pretrain are rejected there)';

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
 * are accepted only from verl v0.9.1 on: earlier releases pass the suffixed name on to
 * kl_penalty_forward, which raises NotImplementedError. At the targeted line the loss gradient is
 * reproduced exactly by mse (k2: same gradient logp − ref); only the logged actor/kl_loss value differs.
 */
export const VERL_KL_LOSS: Record<KlEstimator, string> = { ...VERL_KL, 'k1+': 'mse', 'k3+': 'mse' };

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
    return engine === 'verl'
      ? `# KL loss estimator ${est}: verl accepts "${est}" only from v0.9.1 (earlier releases raise NotImplementedError); ${emitted} (k2) has the same gradient, so training is the same, but actor/kl_loss logs k2's value instead of ${est.slice(0, 2)}'s`
      : `# KL loss estimator ${est}: OpenRLHF has no straight-through estimators; ${emitted} has the same gradient (k2's), so training is the same, but the logged KL loss is k2's value instead of ${est.slice(0, 2)}'s`;
  }
  if (est === 'k1+' || est === 'k3+') {
    return `# KL reward estimator ${est}: the reward carries no gradient, so ${emitted} gives the same values (the "+" only changes the gradient of a KL loss)`;
  }
  return null;
};

export const VERL_ADV: Record<AdvantageEstimator, string> = {
  gae: 'gae',
  reinforce: 'reinforce_plus_plus',
  reinforce_baseline: 'reinforce_plus_plus_baseline',
  group_norm: 'grpo',
  rloo: 'rloo',
  // Dr. GRPO in verl = GRPO without the std division (algorithm.norm_adv_by_std_in_grpo=False).
  dr_grpo: 'grpo',
};

export const OPENRLHF_ADV: Record<AdvantageEstimator, string> = {
  gae: 'gae',
  reinforce: 'reinforce',
  reinforce_baseline: 'reinforce_baseline',
  group_norm: 'group_norm',
  rloo: 'rloo',
  dr_grpo: 'dr_grpo',
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
