// "Scale it up": the playground config as a launch command for verl and for OpenRLHF, so what a
// learner tuned here can be tried on real models. Flag names were checked against verl's
// ppo_trainer.yaml (Hydra overrides) and OpenRLHF's train_ppo_ray argument parser. A knob with
// no counterpart becomes a `#` comment line above the command, so the copied text stays a valid
// shell script and nothing is silently dropped.
import type { KlEstimator } from '../backend/ppoOps.ts';
import type { AdvantageEstimator, PpoConfig } from '../rl/config.ts';

export type ScaleUpTarget = 'verl' | 'openrlhf';

export interface ScaleUpCommand {
  target: ScaleUpTarget;
  /** Lines starting with `#`: knobs without an equivalent, and what to fill in. */
  notes: string[];
  /** The program, e.g. `python3 -m verl.trainer.main_ppo`. */
  program: string;
  /** One argument per entry: `key=value` (verl) or `--flag value…` (OpenRLHF). */
  args: string[];
}

// Numbers as Python parses them: integers plain, others in JS's shortest round-trip form.
const num = (x: number): string => String(x);

// verl spells the four estimators by name (core_algos.kl_penalty).
const VERL_KL: Record<KlEstimator, string> = { k1: 'kl', abs: 'abs', k2: 'mse', k3: 'low_var_kl' };

const VERL_ADV: Record<AdvantageEstimator, string> = {
  gae: 'gae',
  reinforce: 'reinforce_plus_plus',
  reinforce_baseline: 'reinforce_plus_plus_baseline',
  group_norm: 'grpo',
  rloo: 'rloo',
  // Dr. GRPO in verl = GRPO without the std division (plus the seq-mean-token-sum-norm aggregation).
  dr_grpo: 'grpo',
};

const describeModel = (c: PpoConfig) =>
  `# model: the playground trains a ${c.nLayer}-layer, ${c.nHead}-head, d_model ${c.dModel} character transformer from scratch; point $SFT_MODEL at a real SFT checkpoint instead`;

const describeTask = (c: PpoConfig, fill: string) =>
  c.rewardSource === 'rule'
    ? `# task "${c.task}" is scored by a rule here: ${fill}`
    : `# task "${c.task}" is scored by a learned reward model here: point $REWARD_MODEL at a trained reward model`;

/** Largest divisor of n that is at most cap (a per-GPU micro-batch that tiles the batch). */
function divisorAtMost(n: number, cap: number): number {
  for (let d = Math.min(n, cap); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

export function verlCommand(c: PpoConfig): ScaleUpCommand {
  const notes: string[] = [describeModel(c), describeTask(c, 'put the rule in $REWARD_FN (a compute_score function)')];
  const a: string[] = ['data.train_files=$TRAIN_PARQUET', 'actor_rollout_ref.model.path=$SFT_MODEL'];
  const gae = c.advantageEstimator === 'gae';

  a.push(`algorithm.adv_estimator=${VERL_ADV[c.advantageEstimator]}`);
  if (c.advantageEstimator === 'dr_grpo') a.push('algorithm.norm_adv_by_std_in_grpo=False');
  a.push(`algorithm.gamma=${num(c.gamma)}`, `algorithm.lam=${num(c.lam)}`);

  // KL in the reward, with its controller.
  a.push(`algorithm.use_kl_in_reward=${c.klInReward ? 'True' : 'False'}`);
  a.push(`algorithm.kl_penalty=${VERL_KL[c.klEstimator]}`);
  a.push(`algorithm.kl_ctrl.type=${c.klController}`, `algorithm.kl_ctrl.kl_coef=${num(c.klCoef)}`);
  a.push(`algorithm.kl_ctrl.target_kl=${num(c.klTarget)}`, `algorithm.kl_ctrl.horizon=${num(c.klHorizon)}`);

  // Batch: verl counts train_batch_size and ppo_mini_batch_size in prompts; each brings rollout.n responses.
  a.push(`data.train_batch_size=${c.promptsPerBatch}`, `actor_rollout_ref.rollout.n=${c.samplesPerPrompt}`);
  const miniPrompts = c.promptsPerBatch / c.miniBatches;
  const mini = Math.max(1, Math.round(miniPrompts));
  if (!Number.isInteger(miniPrompts)) {
    notes.push(
      `# minibatches: verl sizes minibatches in whole prompts; ${c.promptsPerBatch} prompts / ${c.miniBatches} minibatches is not whole, so ppo_mini_batch_size=${mini} (${mini * c.samplesPerPrompt} sequences instead of ${(c.promptsPerBatch * c.samplesPerPrompt) / c.miniBatches})`,
    );
  }
  a.push(`actor_rollout_ref.actor.ppo_mini_batch_size=${mini}`, `actor_rollout_ref.actor.ppo_epochs=${c.ppoEpochs}`);
  a.push(`data.max_response_length=${c.maxResponseLength}`);

  // Rollout sampling (vLLM: top_k = -1 is off).
  a.push(`actor_rollout_ref.rollout.temperature=${num(c.temperature)}`);
  a.push(`actor_rollout_ref.rollout.top_k=${c.topK === 0 ? -1 : c.topK}`, `actor_rollout_ref.rollout.top_p=${num(c.topP)}`);

  // Policy loss.
  a.push(`actor_rollout_ref.actor.clip_ratio_low=${num(c.clipLow)}`, `actor_rollout_ref.actor.clip_ratio_high=${num(c.clipHigh)}`);
  if (c.dualClip === null) {
    notes.push('# dual clip is off here; verl always applies it, so clip_ratio_c=1e9 makes it a no-op');
    a.push('actor_rollout_ref.actor.clip_ratio_c=1e9');
  } else {
    a.push(`actor_rollout_ref.actor.clip_ratio_c=${num(c.dualClip)}`);
  }
  a.push(`actor_rollout_ref.actor.loss_agg_mode=${c.lossAgg}`, `actor_rollout_ref.actor.entropy_coeff=${num(c.entropyCoef)}`);
  a.push(`actor_rollout_ref.actor.use_kl_loss=${c.useKlLoss ? 'True' : 'False'}`);
  a.push(`actor_rollout_ref.actor.kl_loss_coef=${num(c.klLossCoef)}`, `actor_rollout_ref.actor.kl_loss_type=${VERL_KL[c.klLossEstimator]}`);

  // Actor optimiser.
  a.push(`actor_rollout_ref.actor.optim.lr=${num(c.actorLr)}`, `actor_rollout_ref.actor.optim.lr_warmup_steps=${c.warmupSteps}`);
  a.push(`actor_rollout_ref.actor.optim.weight_decay=${num(c.weightDecay)}`, `actor_rollout_ref.actor.optim.betas=[${num(c.adamBeta1)},${num(c.adamBeta2)}]`);
  a.push(`actor_rollout_ref.actor.grad_clip=${num(c.maxGradNorm)}`);

  // The critic exists only for GAE in verl.
  if (gae) {
    a.push('critic.model.path=$SFT_MODEL', `critic.optim.lr=${num(c.criticLr)}`, `critic.optim.weight_decay=${num(c.weightDecay)}`);
    a.push(`critic.optim.betas=[${num(c.adamBeta1)},${num(c.adamBeta2)}]`, `critic.grad_clip=${num(c.maxGradNorm)}`);
    if (c.valueClip === null) {
      notes.push('# value clip is off here; verl always clips values, so critic.cliprange_value=1e9 makes it a no-op');
      a.push('critic.cliprange_value=1e9');
    } else {
      a.push(`critic.cliprange_value=${num(c.valueClip)}`);
    }
    if (c.warmupSteps > 0) notes.push(`# critic warm-up: set critic.optim.lr_warmup_steps_ratio so that it covers ${c.warmupSteps} steps`);
  } else {
    notes.push(`# critic: unused by ${c.advantageEstimator} (critic learning rate ${num(c.criticLr)} and value clip have no effect)`);
  }

  if (c.rewardSource === 'model') a.push('reward_model.enable=True', 'reward_model.model.path=$REWARD_MODEL');
  else a.push('custom_reward_function.path=$REWARD_FN');

  notes.push(`# score clip ±${num(c.scoreClip)}: verl has no reward clipping flag; clip inside the reward function`);
  if (c.noEosPenalty !== 0) notes.push(`# no-EOS penalty ${num(c.noEosPenalty)}: no verl flag; add it in the reward function for responses without EOS`);
  if (c.targetKl !== null) notes.push(`# early-stop KL ${num(c.targetKl)}: verl has no per-epoch early stop on approx KL`);
  a.push(`data.seed=${c.seed}`);
  return { target: 'verl', notes, program: 'python3 -m verl.trainer.main_ppo', args: a };
}

export function openRlhfCommand(c: PpoConfig): ScaleUpCommand {
  const notes: string[] = [describeModel(c), describeTask(c, 'put the rule in $REWARD_FN (a reward_func python file)')];
  const a: string[] = ['--pretrain $SFT_MODEL', '--prompt_data $PROMPTS'];
  const gae = c.advantageEstimator === 'gae';
  a.push(`--advantage_estimator ${c.advantageEstimator}`);
  a.push(`--gamma ${num(c.gamma)}`, `--lambd ${num(c.lam)}`);

  // OpenRLHF has one KL coefficient and one estimator: in the reward, or (with --use_kl_loss) in the loss.
  if (c.useKlLoss) {
    a.push('--use_kl_loss', `--init_kl_coef ${num(c.klLossCoef)}`);
    if (c.klLossEstimator === 'abs') notes.push('# KL loss estimator "abs": OpenRLHF offers k1, k2, k3 only');
    else a.push(`--kl_estimator ${c.klLossEstimator}`);
    if (c.klInReward) notes.push(`# KL in reward (β = ${num(c.klCoef)}) together with the KL loss: OpenRLHF uses one or the other, here the loss`);
  } else if (c.klInReward) {
    a.push(`--init_kl_coef ${num(c.klCoef)}`);
    if (c.klEstimator === 'abs') notes.push('# KL estimator "abs": OpenRLHF offers k1, k2, k3 only');
    else a.push(`--kl_estimator ${c.klEstimator}`);
  } else {
    a.push('--init_kl_coef 0');
  }
  if (c.klController === 'adaptive') a.push(`--kl_target ${num(c.klTarget)}`, `--kl_horizon ${num(c.klHorizon)}`);

  // Batch: rollout_batch_size counts prompts, train_batch_size counts sequences per optimiser step.
  const seqs = c.promptsPerBatch * c.samplesPerPrompt;
  const train = seqs / c.miniBatches;
  a.push(`--rollout_batch_size ${c.promptsPerBatch}`, `--n_samples_per_prompt ${c.samplesPerPrompt}`);
  a.push(`--train_batch_size ${train}`, `--micro_train_batch_size ${divisorAtMost(train, 8)}`, `--max_epochs ${c.ppoEpochs}`);
  a.push(`--generate_max_len ${c.maxResponseLength}`, `--temperature ${num(c.temperature)}`, `--top_p ${num(c.topP)}`);
  if (c.topK > 0) notes.push(`# top-k ${c.topK}: train_ppo_ray has no top-k flag (OpenRLHF samples with top-k off)`);

  const [lo, hi] = [c.clipLow, c.clipHigh];
  a.push(`--eps_clip_low_high ${num(lo)} ${num(hi)}`);
  if (c.dualClip !== null) a.push(`--dual_clip ${num(c.dualClip)}`);
  if (gae) {
    if (c.valueClip === null) {
      notes.push('# value clip is off here; OpenRLHF always clips values, so --value_clip 1e9 makes it a no-op');
      a.push('--value_clip 1e9');
    } else {
      a.push(`--value_clip ${num(c.valueClip)}`);
    }
  }
  if (c.lossAgg !== 'token-mean') notes.push(`# loss aggregation "${c.lossAgg}": OpenRLHF averages the policy loss over tokens (token-mean); no flag`);
  if (c.entropyCoef > 0) a.push(`--entropy_loss_coef ${num(c.entropyCoef)}`);

  a.push(`--actor_learning_rate ${num(c.actorLr)}`);
  if (gae) a.push('--critic_pretrain $SFT_MODEL', `--critic_learning_rate ${num(c.criticLr)}`);
  else notes.push(`# critic: unused by ${c.advantageEstimator} (critic learning rate ${num(c.criticLr)} has no effect)`);
  a.push('--lr_scheduler constant_with_warmup', '--lr_warmup_ratio 0');
  if (c.warmupSteps > 0) notes.push(`# warm-up ${c.warmupSteps} steps: OpenRLHF takes a ratio; set --lr_warmup_ratio to ${c.warmupSteps} / (total optimiser steps)`);
  a.push(`--l2 ${num(c.weightDecay)}`, `--adam_betas ${num(c.adamBeta1)} ${num(c.adamBeta2)}`, `--max_norm ${num(c.maxGradNorm)}`);

  a.push(`--reward_clip_range ${num(-c.scoreClip)} ${num(c.scoreClip)}`);
  if (c.rewardSource === 'model') a.push('--reward_pretrain $REWARD_MODEL');
  else a.push('--remote_rm_url $REWARD_FN');
  if (c.noEosPenalty !== 0) notes.push(`# no-EOS penalty ${num(c.noEosPenalty)}: no OpenRLHF flag; add it in the reward function for responses without EOS`);
  if (c.targetKl !== null) notes.push(`# early-stop KL ${num(c.targetKl)}: OpenRLHF has no per-epoch early stop on approx KL`);
  a.push(`--seed ${c.seed}`);
  return { target: 'openrlhf', notes, program: 'python3 -m openrlhf.cli.train_ppo_ray', args: a };
}

export function scaleUpCommand(target: ScaleUpTarget, c: PpoConfig): ScaleUpCommand {
  return target === 'verl' ? verlCommand(c) : openRlhfCommand(c);
}

/** The copyable shell text: notes, then the program with one argument per continued line. */
export function renderCommand(cmd: ScaleUpCommand): string {
  const head = `# ${cmd.target === 'verl' ? 'verl' : 'OpenRLHF'} equivalent of the PPO Playground config. Fill in the $VARIABLES.`;
  const body = [cmd.program, ...cmd.args].map((part, i, all) => `${i === 0 ? '' : '  '}${part}${i < all.length - 1 ? ' \\' : ''}`);
  return [head, ...cmd.notes, ...body].join('\n');
}
