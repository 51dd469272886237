// Each knob's name in verl (Hydra key) and OpenRLHF (flag), where the engine has the same knob:
// the keys the exported jobs set from it (src/export/verl.ts, src/export/openrlhf.ts read them
// here), checked against the commands they build in tests/unit/config_schema.test.ts (80 keys for 48 knobs).
import type { PpoConfig } from '../rl/config.ts';

export interface EngineKeys {
  /** verl Hydra key the exported job sets from this knob. */
  verl?: string;
  /** OpenRLHF flag the exported job sets from this knob. */
  openrlhf?: string;
}

export const ENGINE_KEYS = {
  seed: { openrlhf: '--train.seed' },
  promptsPerBatch: { verl: 'data.train_batch_size', openrlhf: '--rollout.batch_size' },
  samplesPerPrompt: { verl: 'actor_rollout_ref.rollout.n', openrlhf: '--rollout.n_samples_per_prompt' },
  maxResponseLength: { verl: 'data.max_response_length', openrlhf: '--rollout.max_new_tokens' },
  temperature: { verl: 'actor_rollout_ref.rollout.temperature', openrlhf: '--rollout.temperature' },
  topK: { verl: 'actor_rollout_ref.rollout.top_k' },
  topP: { verl: 'actor_rollout_ref.rollout.top_p', openrlhf: '--rollout.top_p' },
  dynamicSampling: { verl: 'algorithm.filter_groups.enable', openrlhf: '--algo.dynamic_filtering_enable' },
  klCoef: { verl: 'algorithm.kl_ctrl.kl_coef', openrlhf: '--algo.kl.init_coef' },
  klEstimator: { verl: 'algorithm.kl_penalty', openrlhf: '--algo.kl.estimator' },
  klInReward: { verl: 'algorithm.use_kl_in_reward' },
  useKlLoss: { verl: 'actor_rollout_ref.actor.use_kl_loss', openrlhf: '--algo.kl.use_loss' },
  klLossCoef: { verl: 'actor_rollout_ref.actor.kl_loss_coef', openrlhf: '--algo.kl.init_coef' },
  klLossEstimator: { verl: 'actor_rollout_ref.actor.kl_loss_type', openrlhf: '--algo.kl.estimator' },
  klController: { verl: 'algorithm.kl_ctrl.type' },
  klTarget: { verl: 'algorithm.kl_ctrl.target_kl', openrlhf: '--algo.kl.target' },
  klHorizon: { verl: 'algorithm.kl_ctrl.horizon', openrlhf: '--algo.kl.horizon' },
  overlongBuffer: { verl: '+reward.reward_kwargs.overlong_buffer_cfg.len', openrlhf: '--reward.overlong_buffer_len' },
  overlongPenalty: { verl: '+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor', openrlhf: '--reward.overlong_penalty_factor' },
  advantageEstimator: { verl: 'algorithm.adv_estimator', openrlhf: '--algo.advantage.estimator' },
  gamma: { verl: 'algorithm.gamma', openrlhf: '--algo.advantage.gamma' },
  lam: { verl: 'algorithm.lam', openrlhf: '--algo.advantage.lambd' },
  ppoEpochs: { verl: 'actor_rollout_ref.actor.ppo_epochs', openrlhf: '--train.max_epochs' },
  clipLow: { verl: 'actor_rollout_ref.actor.clip_ratio_low', openrlhf: '--actor.eps_clip_low_high' },
  clipHigh: { verl: 'actor_rollout_ref.actor.clip_ratio_high', openrlhf: '--actor.eps_clip_low_high' },
  dualClip: { verl: 'actor_rollout_ref.actor.clip_ratio_c', openrlhf: '--actor.dual_clip' },
  valueClip: { verl: 'critic.cliprange_value', openrlhf: '--critic.value_clip' },
  lossMode: { verl: 'actor_rollout_ref.actor.policy_loss.loss_mode', openrlhf: '--actor.policy_loss_type' },
  sapoTauPos: { verl: 'actor_rollout_ref.actor.tau_pos' },
  sapoTauNeg: { verl: 'actor_rollout_ref.actor.tau_neg' },
  clipCovRatio: { verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_ratio' },
  clipCovLb: { verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_lb' },
  clipCovUb: { verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_ub' },
  klCovRatio: { verl: 'actor_rollout_ref.actor.policy_loss.kl_cov_ratio' },
  ppoKlCoef: { verl: 'actor_rollout_ref.actor.policy_loss.ppo_kl_coef' },
  lossAgg: { verl: 'actor_rollout_ref.actor.loss_agg_mode' },
  tisCap: { verl: 'algorithm.rollout_correction.rollout_is_threshold', openrlhf: '--algo.advantage.is_correction_threshold' },
  rolloutIs: { verl: 'algorithm.rollout_correction.rollout_is' },
  icepopLower: { openrlhf: '--algo.advantage.is_correction_type' },
  rolloutRs: { verl: 'algorithm.rollout_correction.rollout_rs' },
  rolloutRsThreshold: { verl: 'algorithm.rollout_correction.rollout_rs_threshold' },
  entropyCoef: { verl: 'actor_rollout_ref.actor.entropy_coeff', openrlhf: '--actor.entropy_coef' },
  actorLr: { verl: 'actor_rollout_ref.actor.optim.lr', openrlhf: '--actor.adam.lr' },
  criticLr: { verl: 'critic.optim.lr', openrlhf: '--critic.adam.lr' },
  warmupSteps: { verl: 'actor_rollout_ref.actor.optim.lr_warmup_steps', openrlhf: '--actor.lr_warmup_ratio' },
  weightDecay: { verl: 'actor_rollout_ref.actor.optim.weight_decay', openrlhf: '--actor.adam.weight_decay' },
  maxGradNorm: { verl: 'actor_rollout_ref.actor.grad_clip', openrlhf: '--actor.max_norm' },
  evalEvery: { verl: 'trainer.test_freq', openrlhf: '--eval.steps' },
} as const satisfies Partial<Record<keyof PpoConfig, EngineKeys>>;

/** The verl / OpenRLHF keys of knob `key`, if the engines have it. */
export function engineKeysOf(key: keyof PpoConfig): EngineKeys | undefined {
  return (ENGINE_KEYS as Partial<Record<keyof PpoConfig, EngineKeys>>)[key];
}
