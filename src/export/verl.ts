// The playground config as verl Hydra overrides (python3 -m verl.trainer.main_ppo key=value …).
// Every knob is either mapped to a key with the same meaning, or named in a `#` note that says what
// differs. Keys are checked against verl's generated trainer config in tests/unit/export_keys.test.ts.
import type { AdvantageEstimator } from '../rl/config.ts';
import { divisorAtMost, klNearestNote, NO_CLIP, num, VERL_ADV, VERL_COMMIT, VERL_KL, VERL_KL_LOSS } from './engines.ts';
import { JobError, playgroundModelText, type JobPlan } from './plan.ts';

export interface VerlOverride {
  key: string;
  /** Raw value; a leading `$` marks a shell variable (rendered in double quotes). */
  value: string;
}

export interface VerlCommand {
  engine: 'verl';
  notes: string[];
  /** Shell lines run before the program (the DAPO recipe runs from a verl checkout). */
  setup: string[];
  program: string;
  overrides: VerlOverride[];
}

export const VERL_MAIN = 'python3 -m verl.trainer.main_ppo';
/**
 * DAPO's dynamic sampling (algorithm.filter_groups.*, data.gen_batch_size) and soft overlong penalty
 * (reward_model.overlong_buffer.*) exist only in the DAPO recipe's config (recipe/dapo/config/
 * dapo_trainer.yaml = ppo_trainer + those keys); main_ppo rejects them ("Key 'filter_groups' is not
 * in struct"). The recipe lives in verl's repository, not in the pip package, and its Hydra search
 * path (file://verl/trainer/config) is relative, so it runs from a checkout's root.
 */
export const VERL_DAPO_MAIN = 'python3 -m recipe.dapo.main_dapo';

/** True when the job needs verl's DAPO recipe entry point. */
export const needsDapoRecipe = (c: JobPlan['config']): boolean => c.dynamicSampling || c.overlongBuffer > 0;

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

  // Data: the exported Parquet files; prompts are chat messages, so verl applies the model's template.
  set('data.train_files', '$JOB_DIR/train.parquet');
  set('data.val_files', '$JOB_DIR/test.parquet');
  set('data.prompt_key', 'prompt');
  set('data.max_prompt_length', 256);
  set('data.max_response_length', c.maxResponseLength);
  notes.push(`# response budget ${c.maxResponseLength}: characters in the playground, tokens here (a token holds several characters, so the same budget leaves more room)`);
  notes.push(`# seed ${c.seed}: drew the prompts in train.parquet; verl shuffles them with its own seed`);

  // Batch: verl counts train_batch_size and ppo_mini_batch_size in prompts; each brings rollout.n responses.
  set('data.train_batch_size', c.promptsPerBatch);
  set('actor_rollout_ref.rollout.n', c.samplesPerPrompt);
  const miniPrompts = c.promptsPerBatch / c.miniBatches;
  const mini = Math.max(1, Math.round(miniPrompts));
  if (!Number.isInteger(miniPrompts)) {
    notes.push(
      `# minibatches: verl sizes minibatches in whole prompts; ${c.promptsPerBatch} prompts / ${c.miniBatches} minibatches is not whole, so ppo_mini_batch_size=${mini} (${mini * c.samplesPerPrompt} sequences instead of ${plan.seqsPerMinibatch})`,
    );
  }
  const miniSeqsPerGpu = (mini * c.samplesPerPrompt) / gpus;
  if (!Number.isInteger(miniSeqsPerGpu)) {
    throw new JobError(`gpus = ${gpus}: verl's minibatch of ${mini * c.samplesPerPrompt} sequences must split evenly over the GPUs`);
  }
  const micro = divisorAtMost(miniSeqsPerGpu, MICRO_CAP);
  set('actor_rollout_ref.actor.ppo_mini_batch_size', mini);
  set('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', micro);
  set('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', micro);
  set('actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', micro);
  set('actor_rollout_ref.actor.ppo_epochs', c.ppoEpochs);

  // Model and rollout engine.
  set('actor_rollout_ref.model.path', '$MODEL');
  set('actor_rollout_ref.rollout.name', 'vllm');
  set('actor_rollout_ref.rollout.tensor_model_parallel_size', 1);
  set('actor_rollout_ref.rollout.gpu_memory_utilization', 0.5);
  set('actor_rollout_ref.rollout.temperature', c.temperature);
  set('actor_rollout_ref.rollout.top_k', c.topK === 0 ? -1 : c.topK); // vLLM: -1 = off
  set('actor_rollout_ref.rollout.top_p', c.topP);

  // Advantages.
  set('algorithm.adv_estimator', VERL_ADV[c.advantageEstimator]);
  if (c.advantageEstimator === 'dr_grpo') set('algorithm.norm_adv_by_std_in_grpo', 'False');
  set('algorithm.gamma', c.gamma);
  set('algorithm.lam', c.lam);
  if (!gae) notes.push(`# λ = ${num(c.lam)}: used only by GAE; no effect with ${c.advantageEstimator}`);
  // γ ≠ 1 is GAE-only in the playground (validateConfig), so verl ignoring algorithm.gamma in grpo,
  // rloo and reinforce_plus_plus_baseline changes nothing.

  // KL in the reward, with its controller. The playground's target is per token, as verl's: the
  // mean over responses of each response's token-mean KL (verl apply_kl_penalty).
  set('algorithm.use_kl_in_reward', bool(c.klInReward));
  set('algorithm.kl_penalty', VERL_KL[c.klEstimator]);
  set('algorithm.kl_ctrl.type', c.klController);
  set('algorithm.kl_ctrl.kl_coef', c.klCoef);
  if (!c.klInReward) notes.push(`# KL in the reward is off: kl_penalty and kl_coef ${num(c.klCoef)} are inert`);
  else {
    const n = klNearestNote('verl', 'reward', c.klEstimator, VERL_KL[c.klEstimator]);
    if (n) notes.push(n);
  }
  if (c.klController === 'adaptive') {
    set('algorithm.kl_ctrl.target_kl', c.klTarget);
    set('algorithm.kl_ctrl.horizon', c.klHorizon);
    if (!c.klInReward && c.useKlLoss) {
      notes.push(
        `# adaptive KL with the KL only in the loss: the playground adapts the KL-loss coefficient (as OpenRLHF does); verl adapts only the in-reward coefficient, so here kl_loss_coef stays fixed at ${num(c.klLossCoef)} and kl_ctrl is inert`,
      );
    } else if (!c.klInReward) {
      notes.push('# adaptive KL: no KL term is on, so the controller is inert');
    }
  }
  if (c.klInReward && isGroup(c.advantageEstimator)) {
    notes.push(
      `# KL with ${c.advantageEstimator}: verl subtracts β·ΣKL from each score before the group statistics; the playground forms the group advantages from the raw scores and adds −β·KL per token afterwards`,
    );
  }

  // Policy loss.
  set('actor_rollout_ref.actor.clip_ratio_low', c.clipLow);
  set('actor_rollout_ref.actor.clip_ratio_high', c.clipHigh);
  if (c.dualClip === null) {
    notes.push('# dual clip is off here; verl always applies it, so clip_ratio_c=1e9 makes it a no-op');
    set('actor_rollout_ref.actor.clip_ratio_c', NO_CLIP);
  } else {
    set('actor_rollout_ref.actor.clip_ratio_c', c.dualClip);
  }
  // Policy-loss family (core_algos POLICY_LOSS_REGISTRY at the target: vanilla, gspo, gpg, clip_cov, kl_cov, geo_mean).
  if (c.lossMode === 'cispo') {
    set('actor_rollout_ref.actor.policy_loss.loss_mode', 'vanilla');
    notes.push(
      '# loss mode cispo: not registered in verl at the targeted commit (later releases add loss_mode=cispo); PPO clip (vanilla) is emitted instead, which zeroes the gradient of clipped tokens where CISPO keeps it',
    );
  } else {
    set('actor_rollout_ref.actor.policy_loss.loss_mode', c.lossMode);
  }
  if (c.lossMode === 'gspo') {
    notes.push('# loss mode gspo: verl, like the playground, aggregates GSPO seq-mean-token-mean whatever loss_agg_mode says and applies no dual clip');
  }
  set('actor_rollout_ref.actor.loss_agg_mode', c.lossAgg);
  if (c.lossAgg === 'seq-mean-token-sum-norm' && c.normScale === 'per_seq') {
    notes.push(
      `# seq-mean-token-sum-norm with norm scale per_seq: the playground also divides by the number of responses (the Dr. GRPO paper's form); verl's agg_loss divides only by the padded response length (norm scale "verl"), so its loss and gradient are B× larger (B = responses in a micro-batch); no key at the targeted commit changes that`,
    );
  }
  set('actor_rollout_ref.actor.entropy_coeff', c.entropyCoef);
  set('actor_rollout_ref.actor.use_kl_loss', bool(c.useKlLoss));
  set('actor_rollout_ref.actor.kl_loss_coef', c.klLossCoef);
  set('actor_rollout_ref.actor.kl_loss_type', VERL_KL_LOSS[c.klLossEstimator]);
  if (c.useKlLoss) {
    const n = klNearestNote('verl', 'loss', c.klLossEstimator, VERL_KL_LOSS[c.klLossEstimator]);
    if (n) notes.push(n);
  }

  // Truncated importance sampling (token level): π_old/π_rollout capped, which needs the rollout's log-probs.
  if (c.tisCap !== null) {
    set('actor_rollout_ref.actor.tis_imp_ratio_cap', c.tisCap);
    set('actor_rollout_ref.rollout.calculate_log_probs', 'True');
    notes.push(
      `# TIS cap ${num(c.tisCap)}: actor.tis_imp_ratio_cap with rollout.calculate_log_probs=True (verl ≥ 0.6 moves this to algorithm.rollout_correction.rollout_is=token, rollout_is_threshold)`,
    );
    if (c.lossMode === 'gspo') {
      notes.push(
        '# TIS with gspo: verl multiplies the cap-truncated ratio into the loss only in compute_policy_loss_vanilla; its GSPO loss ignores the rollout log-probs, so TIS is not applied here',
      );
    }
  }

  // Actor optimiser.
  set('actor_rollout_ref.actor.optim.lr', c.actorLr);
  set('actor_rollout_ref.actor.optim.lr_warmup_steps', c.warmupSteps);
  set('actor_rollout_ref.actor.optim.weight_decay', c.weightDecay);
  set('actor_rollout_ref.actor.optim.betas', `[${num(c.adamBeta1)},${num(c.adamBeta2)}]`);
  // verl clips to max norm 0 (zero gradients) where the playground reads 0 as "no clipping".
  const gradClip = c.maxGradNorm === 0 ? NO_CLIP : num(c.maxGradNorm);
  if (c.maxGradNorm === 0) notes.push('# max grad norm 0 means no clipping here; verl would clip every gradient to zero, so grad_clip=1e9');
  set('actor_rollout_ref.actor.grad_clip', gradClip);

  // The critic exists only for GAE in verl.
  if (gae) {
    set('critic.model.path', '$MODEL');
    set('critic.ppo_micro_batch_size_per_gpu', micro);
    set('critic.optim.lr', c.criticLr);
    set('critic.optim.lr_warmup_steps', c.warmupSteps);
    set('critic.optim.weight_decay', c.weightDecay);
    set('critic.optim.betas', `[${num(c.adamBeta1)},${num(c.adamBeta2)}]`);
    set('critic.grad_clip', gradClip);
    if (c.valueClip === null) {
      notes.push('# value clip is off here; verl always clips values, so critic.cliprange_value=1e9 makes it a no-op');
      set('critic.cliprange_value', NO_CLIP);
    } else {
      set('critic.cliprange_value', c.valueClip);
    }
  } else {
    notes.push(`# critic: unused by ${c.advantageEstimator} (critic learning rate ${num(c.criticLr)} and value clip have no effect)`);
  }

  // Reward: the exported rule (see reward.py), which also applies the score clip and no-EOS penalty.
  set('custom_reward_function.path', '$JOB_DIR/reward.py');
  set('custom_reward_function.name', 'compute_score');
  if (c.rewardSource === 'model') {
    notes.push("# reward: the playground scores this run with a learned reward model; the job exports the task's lexicon rule instead (reward.py)");
  }
  notes.push(
    `# score clip ±${num(c.scoreClip)} and no-EOS penalty ${num(c.noEosPenalty)}: applied inside reward.py (verl has no flags for them); verl decodes responses without special tokens, so a response cut at the length limit is scored as if it had stopped`,
  );
  if (c.targetKl !== null) notes.push(`# early-stop KL ${num(c.targetKl)}: verl has no per-epoch early stop on approx KL`);

  // DAPO: dynamic sampling and the soft overlong penalty, both only in the DAPO recipe's config.
  const dapo = needsDapoRecipe(c);
  const setup: string[] = [];
  if (dapo) {
    notes.push(
      `# DAPO (${[c.dynamicSampling ? 'dynamic sampling' : '', c.overlongBuffer > 0 ? 'overlong penalty' : ''].filter(Boolean).join(', ')}): runs verl's DAPO recipe (${VERL_DAPO_MAIN}); its config adds algorithm.filter_groups, data.gen_batch_size and reward_model.overlong_buffer to main_ppo's. The recipe is in verl's repository, not in the pip package: set VERL_REPO to a checkout of the same release`,
    );
    setup.push(`# The DAPO recipe runs from the root of a verl checkout: git clone https://github.com/volcengine/verl && git -C verl checkout ${VERL_COMMIT.slice(0, 7)}`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, written for bash
    setup.push('cd "${VERL_REPO:?set VERL_REPO to a checkout of volcengine/verl: the DAPO recipe is not in the pip package}"');
    set('reward_model.reward_manager', 'dapo');
    set('reward_model.overlong_buffer.enable', bool(c.overlongBuffer > 0));
    if (c.overlongBuffer > 0) {
      set('reward_model.overlong_buffer.len', c.overlongBuffer);
      set('reward_model.overlong_buffer.penalty_factor', c.overlongPenalty);
    }
    set('algorithm.filter_groups.enable', bool(c.dynamicSampling));
    if (c.dynamicSampling) {
      // seq_reward = the summed token_level_scores (rule score + overlong penalty, before any KL), which
      // is what the playground compares; seq_final_reward would include the in-reward KL.
      set('algorithm.filter_groups.metric', 'seq_reward');
      // verl counts the first generation batch too: 1 + extra rounds.
      set('algorithm.filter_groups.max_num_gen_batches', 1 + c.maxExtraRollouts);
      set('data.gen_batch_size', c.promptsPerBatch);
      notes.push(
        `# dynamic sampling: at most ${1 + c.maxExtraRollouts} generation batches of ${c.promptsPerBatch} prompts per step (max extra rollouts ${c.maxExtraRollouts}); when they are spent verl raises an error where the playground fills the batch with dropped groups. Each batch consumes prompts of train.parquet, so an epoch has fewer steps`,
      );
    }
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
  set('trainer.test_freq', c.evalEvery > 0 ? c.evalEvery : -1);
  set('trainer.val_before_train', bool(c.evalEvery > 0));
  notes.push(`# model: the playground run trained ${playgroundModelText(plan.options.actor, plan.config)}; here MODEL is a pretrained instruct model`);
  return { engine: 'verl', notes, setup, program: dapo ? VERL_DAPO_MAIN : VERL_MAIN, overrides: o };
}
