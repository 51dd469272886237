// The playground config as verl Hydra overrides (python3 -m verl.trainer.main_ppo key=value …).
// Every knob is either mapped to a key with the same meaning, or named in a `#` note that says what
// differs. Keys are checked against verl's generated trainer config in tests/cli/export_keys.test.ts.
// A key written `+a.b` is appended with Hydra's `+` (read by verl's code, absent from its config).
import { rewardScriptNote } from './rewardFunctionPy.ts';
import type { AdvantageEstimator } from '../rl/config.ts';
import { divisorAtMost, groupKlOrderNote, klNearestNote, NO_CLIP, num, VERL_ADV, VERL_KL, VERL_KL_LOSS } from './engines.ts';
import { ENGINE_KEYS } from './engineKeys.ts';
import { JobError, modelNote, type JobPlan } from './plan.ts';
import { isAllLinear, type JobLora, VERL_LORA_KEYS, VERL_LORA_LOAD_FORMAT } from './model.ts';
import { covKnobs, sapoTemperatures } from '../reference/policyLoss.ts';

export interface VerlOverride {
  key: string;
  /** Raw value; a leading `$` marks a shell variable (rendered in double quotes). */
  value: string;
}

export interface VerlCommand {
  engine: 'verl';
  notes: string[];
  /** Shell lines run before the program (none at the targeted release). */
  setup: string[];
  program: string;
  overrides: VerlOverride[];
}

/**
 * At the targeted release DAPO runs from main_ppo: its V1 trainer reads algorithm.filter_groups
 * (verl/trainer/ppo/v1/trainer_base.py), and the overlong buffer is a keyword of the reward-loop
 * dapo manager (config.reward.reward_kwargs.overlong_buffer_cfg, verl/experimental/reward_loop/
 * reward_manager/dapo.py). The recipe folder of the 0.5/0.6 line left the repository.
 */
export const VERL_MAIN = 'python3 -m verl.trainer.main_ppo';

/** PEFT's settings under a verl model block (actor_rollout_ref.model or critic.model): all-linear as a bare string, names as a Hydra list. */
function loraOverrides(block: string, l: JobLora): VerlOverride[] {
  const targets = isAllLinear(l.targets) ? l.targets[0] : `[${l.targets.join(',')}]`;
  return [
    { key: `${block}.${VERL_LORA_KEYS.rank}`, value: num(l.r) },
    { key: `${block}.${VERL_LORA_KEYS.alpha}`, value: num(l.alpha) },
    { key: `${block}.${VERL_LORA_KEYS.targets}`, value: targets },
  ];
}

/** Every estimator but GAE works from one score per sequence and its group. */
const isGroup = (e: AdvantageEstimator) => e !== 'gae';
const bool = (b: boolean) => (b ? 'True' : 'False');
/** Per-GPU micro-batches: the largest divisor of the per-GPU share up to this many sequences. */
const MICRO_CAP = 8;

export function verlCommand(plan: JobPlan): VerlCommand {
  const c = plan.config;
  const gpus = plan.options.gpus;
  const notes: string[] = [];
  const o: VerlOverride[] = [];
  const set = (key: string, value: string | number) => o.push({ key, value: typeof value === 'number' ? num(value) : value });
  const gae = c.advantageEstimator === 'gae';
  const lora = plan.options.model?.lora ?? null;

  // Data: the exported Parquet files; prompts are chat messages, so verl applies the model's template.
  set('data.train_files', '$JOB_DIR/train.parquet');
  set('data.val_files', '$JOB_DIR/test.parquet');
  set('data.prompt_key', 'prompt');
  set('data.max_prompt_length', 256);
  set(ENGINE_KEYS.maxResponseLength.verl, c.maxResponseLength);
  notes.push(`# response budget ${c.maxResponseLength}: characters in the playground, tokens here (a token holds several characters, so the same budget leaves more room)`);
  notes.push(`# seed ${c.seed}: drew the prompts in train.parquet; verl shuffles them with its own seed`);

  // Batch: verl counts train_batch_size and ppo_mini_batch_size in prompts; each brings rollout.n responses.
  set(ENGINE_KEYS.promptsPerBatch.verl, c.promptsPerBatch);
  set(ENGINE_KEYS.samplesPerPrompt.verl, c.samplesPerPrompt);
  const miniPrompts = c.promptsPerBatch / c.miniBatches;
  const mini = Math.max(1, Math.round(miniPrompts));
  if (!Number.isInteger(miniPrompts)) {
    notes.push(
      `# minibatches: verl sizes minibatches in whole prompts; ${c.promptsPerBatch} prompts / ${c.miniBatches} minibatches is not whole, so ppo_mini_batch_size=${mini} (${mini * c.samplesPerPrompt} sequences instead of ${plan.seqsPerMinibatch})`,
    );
  }
  const miniSeqsPerGpu = (mini * c.samplesPerPrompt) / gpus;
  if (!Number.isInteger(miniSeqsPerGpu)) {
    throw new JobError({ kind: 'verlGpuSplit', gpus, sequences: mini * c.samplesPerPrompt });
  }
  const micro = divisorAtMost(miniSeqsPerGpu, MICRO_CAP);
  set('actor_rollout_ref.actor.ppo_mini_batch_size', mini);
  set('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', micro);
  set('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', micro);
  set('actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', micro);
  set(ENGINE_KEYS.ppoEpochs.verl, c.ppoEpochs);

  // Model and rollout engine.
  set('actor_rollout_ref.model.path', '$MODEL');
  if (lora) {
    o.push(...loraOverrides('actor_rollout_ref.model', lora));
    set(VERL_LORA_LOAD_FORMAT.key, VERL_LORA_LOAD_FORMAT.value);
    notes.push(
      `# LoRA rank ${lora.r}, alpha ${lora.alpha} (scale ${num(lora.alpha / lora.r)}) on ${lora.targets.join(', ')}: only the adapters train${gae ? ', in the critic too' : ''}; the reference policy is the base model with the adapters off (verl's ref_in_actor), and vLLM loads the base weights from safetensors and takes the adapters after each step`,
    );
  }
  set('actor_rollout_ref.rollout.name', 'vllm');
  set('actor_rollout_ref.rollout.tensor_model_parallel_size', 1);
  set('actor_rollout_ref.rollout.gpu_memory_utilization', 0.5);
  set(ENGINE_KEYS.temperature.verl, c.temperature);
  set(ENGINE_KEYS.topK.verl, c.topK === 0 ? -1 : c.topK); // vLLM: -1 = off
  set(ENGINE_KEYS.topP.verl, c.topP);

  // Advantages.
  set(ENGINE_KEYS.advantageEstimator.verl, VERL_ADV[c.advantageEstimator]);
  if (c.advantageEstimator === 'dr_grpo') set('algorithm.norm_adv_by_std_in_grpo', 'False');
  // grpo_passk reads the same switch (core_algos.py 498–499); the playground divides by the std, verl's default.
  if (c.advantageEstimator === 'grpo_passk') set('algorithm.norm_adv_by_std_in_grpo', 'True');
  if (c.advantageEstimator === 'remax') {
    notes.push(
      '# remax: verl samples one greedy response per prompt (do_sample=False) beside the rollout.n samples and passes its reward as reward_baselines, as the playground does; the KL in the reward stays a per-token reward-to-go',
    );
  }
  set(ENGINE_KEYS.gamma.verl, c.gamma);
  set(ENGINE_KEYS.lam.verl, c.lam);
  if (!gae) notes.push(`# λ = ${num(c.lam)}: used only by GAE; no effect with ${c.advantageEstimator}`);
  // γ < 1 is allowed for GAE and reinforce (verl's compute_reinforce_plus_plus_outcome_advantage
  // discounts with algorithm.gamma); validateConfig keeps γ = 1 for the group estimators, which
  // verl computes from one summed score and so never discounts.

  // KL in the reward, with its controller. The playground's target is per token, as verl's: the
  // mean over responses of each response's token-mean KL (verl apply_kl_penalty).
  set(ENGINE_KEYS.klInReward.verl, bool(c.klInReward));
  set(ENGINE_KEYS.klEstimator.verl, VERL_KL[c.klEstimator]);
  set(ENGINE_KEYS.klController.verl, c.klController);
  set(ENGINE_KEYS.klCoef.verl, c.klCoef);
  if (!c.klInReward) notes.push(`# KL in the reward is off: kl_penalty and kl_coef ${num(c.klCoef)} are inert`);
  else {
    const n = klNearestNote('verl', 'reward', c.klEstimator, VERL_KL[c.klEstimator]);
    if (n) notes.push(n);
  }
  if (c.klController === 'adaptive') {
    set(ENGINE_KEYS.klTarget.verl, c.klTarget);
    set(ENGINE_KEYS.klHorizon.verl, c.klHorizon);
    if (!c.klInReward && c.useKlLoss) {
      notes.push(
        `# adaptive KL with the KL only in the loss: the playground adapts the KL-loss coefficient (as OpenRLHF does); verl adapts only the in-reward coefficient, so here kl_loss_coef stays fixed at ${num(c.klLossCoef)} and kl_ctrl is inert`,
      );
    } else if (!c.klInReward) {
      notes.push('# adaptive KL: no KL term is on, so the controller is inert');
    }
  }
  if (c.klInReward && isGroup(c.advantageEstimator)) {
    const n = groupKlOrderNote('verl', c.advantageEstimator, c.groupKlOrder);
    if (n) notes.push(n);
  }

  // Policy loss.
  set(ENGINE_KEYS.clipLow.verl, c.clipLow);
  set(ENGINE_KEYS.clipHigh.verl, c.clipHigh);
  if (c.dualClip === null) {
    notes.push('# dual clip is off here; verl always applies it, so clip_ratio_c=1e9 makes it a no-op');
    set(ENGINE_KEYS.dualClip.verl, NO_CLIP);
  } else {
    set(ENGINE_KEYS.dualClip.verl, c.dualClip);
  }
  // Policy-loss family: vanilla, gspo, cispo, sapo, gpg, geo_mean, clip_cov and kl_cov are all registered in
  // core_algos' POLICY_LOSS_REGISTRY at the target.
  set(ENGINE_KEYS.lossMode.verl, c.lossMode);
  if (c.lossMode === 'gspo') {
    notes.push('# loss mode gspo: verl, like the playground, aggregates GSPO seq-mean-token-mean whatever loss_agg_mode says and applies no dual clip');
  }
  if (c.lossMode === 'sapo') {
    const { sapoTauPos, sapoTauNeg } = sapoTemperatures(c);
    set(ENGINE_KEYS.sapoTauPos.verl, sapoTauPos);
    set(ENGINE_KEYS.sapoTauNeg.verl, sapoTauNeg);
    notes.push(
      '# loss mode sapo: a soft sigmoid gate on the ratio replaces the clip (clip_ratio_* and clip_ratio_c are inert); verl, like the playground, aggregates it seq-mean-token-mean whatever loss_agg_mode says',
    );
  }
  if (c.lossMode === 'gpg') {
    notes.push('# loss mode gpg: −A·logπ with no ratio and no clip (clip_ratio_* and clip_ratio_c are inert); verl reports no pg_clipfrac or ppo_kl for it');
  }
  if (c.lossMode === 'geo_mean') {
    notes.push(
      '# loss mode geo_mean (GMPO): clip_ratio_low/high clip each token log-ratio (ε in log space), one geometric-mean ratio per response times its mean advantage; verl, like the playground, averages over all responses whatever loss_agg_mode says and applies no dual clip',
    );
  }
  if (c.lossMode === 'clip_cov') {
    const k = covKnobs(c);
    set(ENGINE_KEYS.clipCovRatio.verl, k.clipCovRatio);
    set(ENGINE_KEYS.clipCovLb.verl, k.clipCovLb);
    set(ENGINE_KEYS.clipCovUb.verl, k.clipCovUb);
    notes.push(
      '# loss mode clip_cov: PPO clip (no dual clip; clip_ratio_c is inert) whose loss is zeroed on up to max(⌊clip_cov_ratio·n⌋, 1) tokens of each micro-batch with covariance in (clip_cov_lb, clip_cov_ub); verl picks them with torch.randperm, the playground with a seeded hash, so which tokens differ run to run',
    );
  }
  if (c.lossMode === 'kl_cov') {
    const k = covKnobs(c);
    set(ENGINE_KEYS.klCovRatio.verl, k.klCovRatio);
    set(ENGINE_KEYS.ppoKlCoef.verl, k.ppoKlCoef);
    notes.push(
      '# loss mode kl_cov: −A·ratio with no clip (clip_ratio_* and clip_ratio_c are inert), plus ppo_kl_coef·|log-ratio| on the top max(1, ⌊kl_cov_ratio·n⌋) covariance tokens of each micro-batch; verl reports ppo_kl as the mean |log-ratio|',
    );
  }
  set(ENGINE_KEYS.lossAgg.verl, c.lossAgg);
  if (c.lossAgg === 'seq-mean-token-sum-norm' && c.normScale === 'verl') {
    notes.push(
      `# seq-mean-token-sum-norm with norm scale "verl" (verl ≤ 0.7.0: Σ of the responses' token sums / A, no division by their number): since v0.7.1 verl's agg_loss also divides by the number of non-empty responses (the playground's per_seq form), so here the loss and gradient are 1/B of the playground's; no key restores the old form`,
    );
  }
  set(ENGINE_KEYS.entropyCoef.verl, c.entropyCoef);
  set(ENGINE_KEYS.useKlLoss.verl, bool(c.useKlLoss));
  set(ENGINE_KEYS.klLossCoef.verl, c.klLossCoef);
  set(ENGINE_KEYS.klLossEstimator.verl, VERL_KL_LOSS[c.klLossEstimator]);
  if (c.useKlLoss) {
    const n = klNearestNote('verl', 'loss', c.klLossEstimator, VERL_KL_LOSS[c.klLossEstimator]);
    if (n) notes.push(n);
  }

  // Truncated importance sampling (token level): rollout correction in decoupled mode (π_old
  // recomputed, weight min(π_old/π_rollout, cap) multiplied into every loss mode's token losses),
  // which needs the rollout's log-probs.
  // Sequence level, the IcePop band ("lower_upper", a quoted string for Hydra) and rejection
  // sampling are the same block's keys (verl/trainer/config/algorithm/rollout_correction.yaml, v0.9.0).
  if (c.tisCap !== null) {
    set(ENGINE_KEYS.rolloutIs.verl, c.rolloutIs);
    set(ENGINE_KEYS.tisCap.verl, c.icepopLower !== null ? `"${num(c.icepopLower)}_${num(c.tisCap)}"` : c.tisCap);
    if (c.tisLower !== null) {
      notes.push(`# TIS lower bound ${num(c.tisLower)}: verl has no floor for its IS weights (a lower threshold there means the IcePop band), so they are capped only`);
    }
  }
  if (c.rolloutRs !== 'off') {
    set(ENGINE_KEYS.rolloutRs.verl, c.rolloutRs);
    set(ENGINE_KEYS.rolloutRsThreshold.verl, c.rolloutRsThreshold);
  }
  if (c.tisCap !== null || c.rolloutRs !== 'off') {
    set('algorithm.rollout_correction.bypass_mode', 'False');
    set('actor_rollout_ref.rollout.calculate_log_probs', 'True');
  }

  // Actor optimiser.
  set(ENGINE_KEYS.actorLr.verl, c.actorLr);
  set(ENGINE_KEYS.warmupSteps.verl, c.warmupSteps);
  set(ENGINE_KEYS.weightDecay.verl, c.weightDecay);
  set('actor_rollout_ref.actor.optim.betas', `[${num(c.adamBeta1)},${num(c.adamBeta2)}]`);
  // verl clips to max norm 0 (zero gradients) where the playground reads 0 as "no clipping".
  const gradClip = c.maxGradNorm === 0 ? NO_CLIP : num(c.maxGradNorm);
  if (c.maxGradNorm === 0) notes.push('# max grad norm 0 means no clipping here; verl would clip every gradient to zero, so grad_clip=1e9');
  set(ENGINE_KEYS.maxGradNorm.verl, gradClip);

  // The critic exists only for GAE in verl.
  if (gae) {
    set('critic.model.path', '$MODEL');
    if (lora) o.push(...loraOverrides('critic.model', lora));
    set('critic.ppo_micro_batch_size_per_gpu', micro);
    set(ENGINE_KEYS.criticLr.verl, c.criticLr);
    set('critic.optim.lr_warmup_steps', c.warmupSteps);
    set('critic.optim.weight_decay', c.weightDecay);
    set('critic.optim.betas', `[${num(c.adamBeta1)},${num(c.adamBeta2)}]`);
    set('critic.grad_clip', gradClip);
    if (c.valueClip === null) {
      notes.push('# value clip is off here; verl always clips values, so critic.cliprange_value=1e9 makes it a no-op');
      set(ENGINE_KEYS.valueClip.verl, NO_CLIP);
    } else {
      set(ENGINE_KEYS.valueClip.verl, c.valueClip);
    }
  } else {
    notes.push(`# critic: unused by ${c.advantageEstimator} (critic learning rate ${num(c.criticLr)} and value clip have no effect)`);
  }

  // Reward: the exported rule (see reward.py), which also applies the score clip and no-EOS penalty.
  set('reward.custom_reward_function.path', '$JOB_DIR/reward.py');
  set('reward.custom_reward_function.name', 'compute_score');
  const rewardNote = rewardScriptNote(c);
  if (rewardNote) notes.push(rewardNote);
  notes.push(
    `# score clip ±${num(c.scoreClip)} and no-EOS penalty ${num(c.noEosPenalty)}: applied inside reward.py (verl has no flags for them); verl decodes responses without special tokens, so a response cut at the length limit is scored as if it had stopped`,
  );
  if (c.targetKl !== null) notes.push(`# early-stop KL ${num(c.targetKl)}: verl has no per-epoch early stop on approx KL`);

  // DAPO: dynamic sampling (the V1 trainer's group filter) and the soft overlong penalty (a keyword
  // of the reward-loop dapo manager, appended with Hydra's `+`; it also needs the response budget).
  if (c.overlongBuffer > 0) {
    set('reward.reward_manager.name', 'dapo');
    set('+reward.reward_kwargs.overlong_buffer_cfg.enable', 'True');
    set(ENGINE_KEYS.overlongBuffer.verl, c.overlongBuffer);
    set(ENGINE_KEYS.overlongPenalty.verl, c.overlongPenalty);
    set('+reward.reward_kwargs.overlong_buffer_cfg.log', 'False');
    set('+reward.reward_kwargs.max_resp_len', c.maxResponseLength);
  }
  if (c.dynamicSampling) {
    set(ENGINE_KEYS.dynamicSampling.verl, 'True');
    // Looked up in each response's reward_extra_info: for a float compute_score the reward manager
    // stores it as "acc" (the score of reward.py, before the overlong penalty).
    set('algorithm.filter_groups.metric', 'acc');
    notes.push(
      `# dynamic sampling: verl's V1 trainer drops groups whose "acc" (reward.py's score) is the same for every response and generates more until the batch is full; it ignores a cap on generation rounds (filter_groups.max_num_gen_batches), so max extra rollouts ${c.maxExtraRollouts} has no counterpart${c.overlongBuffer > 0 ? ', and it compares the score before the overlong penalty where the playground compares the final score' : ''}`,
    );
  }

  // Trainer: one node, the GPU count the batch sizes were checked for, one pass over train.parquet.
  set('trainer.nnodes', 1);
  set('trainer.n_gpus_per_node', gpus);
  set('trainer.total_epochs', 1);
  set('trainer.logger', '["console"]');
  set('trainer.project_name', 'ppo_playground');
  set('trainer.experiment_name', `${c.task}_${c.advantageEstimator}`);
  set('trainer.save_freq', -1);
  // Held-out evaluation every N iterations (verl: -1 = never).
  set(ENGINE_KEYS.evalEvery.verl, c.evalEvery > 0 ? c.evalEvery : -1);
  set('trainer.val_before_train', bool(c.evalEvery > 0));
  notes.push(modelNote(plan));
  return { engine: 'verl', notes, setup: [], program: VERL_MAIN, overrides: o };
}
