// The playground config as an OpenRLHF 0.11.0 launch (python3 -m openrlhf.cli.train_ppo_ray with
// dotted flags). Every knob is mapped to a flag with the same meaning or named in a `#` note.
// Flags are checked against OpenRLHF's argument parser in tests/cli/export_keys.test.ts.
import { rewardScriptNote } from './rewardFunctionPy.ts';
import type { AdvantageEstimator, PpoConfig } from '../rl/config.ts';
import { divisorAtMost, groupKlOrderNote, klNearestNote, NO_CLIP, num, OPENRLHF_ADV, OPENRLHF_ADV_MISSING, OPENRLHF_KL, OPENRLHF_KL_LOSS, OPENRLHF_VERSION } from './engines.ts';
import { ENGINE_KEYS } from './engineKeys.ts';
import { modelNote, type JobPlan } from './plan.ts';
import { isAllLinear, OPENRLHF_LORA_FLAGS } from './model.ts';

export interface OpenRlhfFlag {
  flag: string;
  /** Raw values (none for a switch); a leading `$` marks a shell variable. */
  values: string[];
}

export interface OpenRlhfCommand {
  engine: 'openrlhf';
  notes: string[];
  program: string;
  flags: OpenRlhfFlag[];
}

const isGroup = (e: AdvantageEstimator) => e !== 'gae';
const MICRO_CAP = 8;

export function openRlhfCommand(plan: JobPlan): OpenRlhfCommand {
  const c = plan.config;
  const gpus = plan.options.gpus;
  const notes: string[] = [];
  const f: OpenRlhfFlag[] = [];
  const set = (flag: string, ...values: (string | number)[]) => f.push({ flag, values: values.map((v) => (typeof v === 'number' ? num(v) : v)) });
  const gae = c.advantageEstimator === 'gae';
  const lora = plan.options.model?.lora ?? null;

  // Placement: one node, actor/ref/critic and the vLLM engines share the same GPUs.
  set('--actor.model_name_or_path', '$MODEL');
  if (lora) {
    // One set of LoRA flags for actor and critic; the reference model loads the actor's path without adapters.
    set(OPENRLHF_LORA_FLAGS.rank, lora.r);
    set(OPENRLHF_LORA_FLAGS.alpha, lora.alpha);
    // The flag takes a list (nargs="*"), and PEFT expands all-linear only as a bare string: the
    // parser's default is that string, so all-linear is left to it.
    if (!isAllLinear(lora.targets)) set(OPENRLHF_LORA_FLAGS.targets, ...lora.targets);
    notes.push(
      `# LoRA rank ${lora.r}, alpha ${lora.alpha} (scale ${num(lora.alpha / lora.r)}) on ${lora.targets.join(', ')}: only the adapters train${gae ? ', in the critic too (OpenRLHF shares --ds.lora.* between them)' : ''}; the reference model is the base model${isAllLinear(lora.targets) ? `; ${OPENRLHF_LORA_FLAGS.targets} is left at its default all-linear, since the flag would pass it as a list, which PEFT reads as a module name` : ''}`,
    );
  }
  set('--actor.num_nodes', 1);
  set('--actor.num_gpus_per_node', gpus);
  set('--ref.num_nodes', 1);
  set('--ref.num_gpus_per_node', gpus);
  set('--vllm.num_engines', gpus);
  set('--vllm.tensor_parallel_size', 1);
  set('--vllm.gpu_memory_utilization', 0.5);
  set('--train.colocate_all');
  set('--ds.attn_implementation', 'sdpa'); // no flash-attn build needed for a small model

  // Data: chat-message prompts and the rule's ground truth as the label reward_func receives.
  set('--data.prompt_dataset', '$JOB_DIR/train.parquet');
  set('--eval.dataset', '$JOB_DIR/test.parquet');
  set('--data.input_key', 'prompt');
  set('--data.label_key', 'label');
  set('--data.apply_chat_template');
  set('--data.max_len', 256 + c.maxResponseLength);
  set(ENGINE_KEYS.maxResponseLength.openrlhf, c.maxResponseLength);
  notes.push(`# response budget ${c.maxResponseLength}: characters in the playground, tokens here`);

  // Batch: rollout.batch_size counts prompts; train.batch_size counts sequences per optimiser step (global).
  const microPerGpu = divisorAtMost(plan.seqsPerMinibatch / gpus, MICRO_CAP);
  set(ENGINE_KEYS.promptsPerBatch.openrlhf, c.promptsPerBatch);
  set(ENGINE_KEYS.samplesPerPrompt.openrlhf, c.samplesPerPrompt);
  set('--rollout.micro_batch_size', microPerGpu);
  set('--train.batch_size', plan.seqsPerMinibatch);
  set('--train.micro_batch_size', microPerGpu);
  set(ENGINE_KEYS.ppoEpochs.openrlhf, c.ppoEpochs);
  set('--train.num_episodes', 1);
  set(ENGINE_KEYS.seed.openrlhf, c.seed);
  set(ENGINE_KEYS.temperature.openrlhf, c.temperature);
  set(ENGINE_KEYS.topP.openrlhf, c.topP);
  if (c.topK > 0) notes.push(`# top-k ${c.topK}: train_ppo_ray has no top-k flag (OpenRLHF samples with top-k off)`);

  // Advantages.
  set(ENGINE_KEYS.advantageEstimator.openrlhf, OPENRLHF_ADV[c.advantageEstimator]);
  const noAdv = OPENRLHF_ADV_MISSING[c.advantageEstimator];
  if (noAdv) notes.push(`# estimator ${c.advantageEstimator}: OpenRLHF ${OPENRLHF_VERSION} has no ${noAdv}`);
  set(ENGINE_KEYS.gamma.openrlhf, c.gamma);
  set(ENGINE_KEYS.lam.openrlhf, c.lam);
  // γ < 1 is allowed for GAE and reinforce (get_cumulative_returns discounts); OpenRLHF forces γ = 1
  // for the group estimators, as validateConfig does.

  // KL: OpenRLHF has one coefficient and one estimator, used in the reward or (with use_loss) in the
  // loss. Its adaptive controller reads the mean over responses of each response's token-mean KL,
  // the playground's scale, so the target passes through unchanged.
  const klEstimator = (which: 'reward' | 'loss', est: PpoConfig['klEstimator']) => {
    const name = (which === 'loss' ? OPENRLHF_KL_LOSS : OPENRLHF_KL)[est];
    if (name === null) {
      notes.push(`# KL ${which} estimator "${est}": OpenRLHF offers k1, k2, k3 only; left at its default`);
      return;
    }
    set('--algo.kl.estimator', name);
    const n = klNearestNote('OpenRLHF', which, est, name);
    if (n) notes.push(n);
  };
  const adaptive = () => {
    set(ENGINE_KEYS.klTarget.openrlhf, c.klTarget);
    set(ENGINE_KEYS.klHorizon.openrlhf, c.klHorizon);
  };
  if (c.useKlLoss) {
    set(ENGINE_KEYS.useKlLoss.openrlhf);
    set('--algo.kl.init_coef', c.klLossCoef);
    klEstimator('loss', c.klLossEstimator);
    if (c.klInReward) notes.push(`# KL in reward (β = ${num(c.klCoef)}) together with the KL loss: OpenRLHF uses one or the other, here the loss`);
    if (c.klController === 'adaptive') {
      if (c.klInReward) {
        notes.push(
          '# adaptive KL with the KL in the reward and in the loss: the playground adapts the in-reward β and keeps the KL-loss coefficient fixed; OpenRLHF would adapt its only (loss) coefficient, so the controller is left fixed (no --algo.kl.target)',
        );
      } else {
        adaptive();
        notes.push('# adaptive KL with the KL only in the loss: OpenRLHF and the playground both adapt the KL-loss coefficient (loss = policy loss + kl_ctl.value · KL loss)');
      }
    }
  } else if (c.klInReward) {
    set('--algo.kl.init_coef', c.klCoef);
    klEstimator('reward', c.klEstimator);
    if (isGroup(c.advantageEstimator)) {
      const n = groupKlOrderNote('openrlhf', c.advantageEstimator, c.groupKlOrder);
      if (n) notes.push(n);
    }
    if (c.klController === 'adaptive') adaptive();
  } else {
    // No KL at all: init_coef 0 also skips the reference model.
    set('--algo.kl.init_coef', 0);
    if (c.klController === 'adaptive') notes.push(`# adaptive KL (target ${num(c.klTarget)}): no KL term is on, so there is nothing to adapt`);
  }

  // Policy loss.
  set('--actor.eps_clip_low_high', c.clipLow, c.clipHigh);
  if (c.dualClip !== null) set(ENGINE_KEYS.dualClip.openrlhf, c.dualClip);
  // Policy-loss family: --actor.policy_loss_type takes ppo or gspo.
  const noOpenRlhfLoss: Partial<Record<typeof c.lossMode, string>> = {
    cispo: 'CISPO (policy_loss_type ppo or gspo); PPO clip is emitted instead, which zeroes the gradient of clipped tokens where CISPO keeps it',
    sapo: "SAPO (policy_loss_type ppo or gspo); PPO clip is emitted instead, a hard clip where SAPO's sigmoid gate is soft",
    gpg: 'GPG (policy_loss_type ppo or gspo); PPO clip is emitted instead, ratio-weighted and clipped where GPG is −A·logπ',
    geo_mean: 'GMPO / geo_mean (policy_loss_type ppo or gspo); PPO clip is emitted instead, with token ratios where GMPO takes one geometric-mean ratio per response',
    clip_cov: 'Clip-Cov (policy_loss_type ppo or gspo); PPO clip is emitted instead, which keeps the loss of the high-covariance tokens Clip-Cov zeroes',
    kl_cov: 'KL-Cov (policy_loss_type ppo or gspo); PPO clip is emitted instead, with no |log-ratio| penalty on the high-covariance tokens',
  };
  const missing = noOpenRlhfLoss[c.lossMode];
  if (missing) {
    set(ENGINE_KEYS.lossMode.openrlhf, 'ppo');
    notes.push(`# loss mode ${c.lossMode}: OpenRLHF ${OPENRLHF_VERSION} has no ${missing}`);
  } else {
    set(ENGINE_KEYS.lossMode.openrlhf, c.lossMode === 'gspo' ? 'gspo' : 'ppo');
  }
  if (c.lossAgg !== 'token-mean') {
    const norm = c.lossAgg === 'seq-mean-token-sum-norm' ? ` (norm scale ${c.normScale})` : '';
    notes.push(`# loss aggregation "${c.lossAgg}"${norm}: OpenRLHF ${OPENRLHF_VERSION} averages the policy loss over tokens (token-mean); no flag`);
  }

  // Truncated importance sampling: π_old/π_rollout clamped to [low, high]; low 0 never binds, so only the cap acts, as here.
  // OpenRLHF's IS correction is token level only: 'tis' clamps to [low, high] (the playground's
  // tisLower, 0 when unset), 'icepop' zeroes outside it (openrlhf/models/loss.py L197–214, v0.11.0).
  if (c.tisCap !== null) {
    set('--algo.advantage.is_correction_enable');
    set(ENGINE_KEYS.icepopLower.openrlhf, c.icepopLower !== null ? 'icepop' : 'tis');
    set(ENGINE_KEYS.tisCap.openrlhf, c.icepopLower ?? c.tisLower ?? 0, c.tisCap);
    if (c.rolloutIs === 'sequence') {
      notes.push(
        `# sequence-level IS (the product of the token ratios, capped at ${c.tisCap}): OpenRLHF ${OPENRLHF_VERSION} has token-level IS only, so the job weights each token by its own ratio`,
      );
    }
    if (c.lossMode === 'gspo') {
      notes.push('# TIS with gspo: OpenRLHF applies the IS correction only with policy_loss_type ppo (openrlhf/models/loss.py PolicyLoss), so the GSPO loss runs without it here');
    }
  }

  if (c.rolloutRs !== 'off') {
    notes.push(
      `# rejection sampling ${c.rolloutRs} (threshold ${c.rolloutRsThreshold}): OpenRLHF ${OPENRLHF_VERSION} has no rejection by KL estimate (its seq-mask-tis filters on the sequence's geometric-mean ratio with the IS thresholds), so no tokens are dropped`,
    );
  }

  // DAPO: dynamic sampling and the soft overlong penalty.
  if (c.dynamicSampling) {
    set(ENGINE_KEYS.dynamicSampling.openrlhf);
    set('--algo.dynamic_filtering_range', 0, 1);
    notes.push(
      `# dynamic sampling: OpenRLHF keeps a prompt when its mean score lies strictly inside --algo.dynamic_filtering_range (0, 1), i.e. it drops all-wrong and all-right groups of a 0–1 score, but keeps a group whose samples all got the same partial score, which the playground drops. It samples until the batch is full, with no cap (max extra rollouts ${c.maxExtraRollouts} has no counterpart)`,
    );
  }
  if (c.overlongBuffer > 0) {
    set(ENGINE_KEYS.overlongBuffer.openrlhf, c.overlongBuffer);
    set(ENGINE_KEYS.overlongPenalty.openrlhf, c.overlongPenalty);
  }
  set(ENGINE_KEYS.entropyCoef.openrlhf, c.entropyCoef);
  if (c.targetKl !== null) notes.push(`# early-stop KL ${num(c.targetKl)}: OpenRLHF has no per-epoch early stop on approx KL`);

  // Optimisers: Adam with constant LR after a linear warm-up given as a ratio of all optimiser steps.
  const warmupRatio = plan.optimizerSteps > 0 ? Math.min(1, c.warmupSteps / plan.optimizerSteps) : 0;
  const adam = (who: 'actor' | 'critic', lr: number) => {
    set(`--${who}.adam.lr`, lr);
    set(`--${who}.adam.betas`, c.adamBeta1, c.adamBeta2);
    set(`--${who}.adam.weight_decay`, c.weightDecay);
    set(`--${who}.lr_scheduler`, 'constant_with_warmup');
    set(`--${who}.lr_warmup_ratio`, warmupRatio);
    // DeepSpeed reads gradient clipping 0 as "off", the same meaning as here.
    set(`--${who}.max_norm`, c.maxGradNorm);
  };
  adam('actor', c.actorLr);
  if (c.warmupSteps > 0) notes.push(`# warm-up ${c.warmupSteps} steps = ratio ${num(warmupRatio)} of the job's ${plan.optimizerSteps} optimiser steps`);
  if (gae) {
    set('--critic.model_name_or_path', '$MODEL');
    set('--critic.num_nodes', 1);
    set('--critic.num_gpus_per_node', gpus);
    adam('critic', c.criticLr);
    if (c.valueClip === null) {
      notes.push('# value clip is off here; OpenRLHF always clips values, so --critic.value_clip 1e9 makes it a no-op');
      set(ENGINE_KEYS.valueClip.openrlhf, NO_CLIP);
    } else {
      set(ENGINE_KEYS.valueClip.openrlhf, c.valueClip);
    }
  } else {
    notes.push(`# critic: unused by ${c.advantageEstimator} (critic learning rate ${num(c.criticLr)} and value clip have no effect)`);
  }

  // Reward: the exported rule. reward.py clips and adds the no-EOS penalty itself, so the engine's
  // clip range is widened to never bind.
  set('--reward.remote_url', '$JOB_DIR/reward.py');
  const bound = c.scoreClip + Math.abs(c.noEosPenalty);
  set('--reward.clip_range', -bound, bound);
  notes.push(`# score clip ±${num(c.scoreClip)} and no-EOS penalty ${num(c.noEosPenalty)}: applied inside reward.py, which sees the EOS token in OpenRLHF's decoded queries`);
  const rewardNote = rewardScriptNote(c);
  if (rewardNote) notes.push(rewardNote);

  // Evaluation and output.
  set(ENGINE_KEYS.evalEvery.openrlhf, c.evalEvery > 0 ? c.evalEvery : -1);
  set('--eval.temperature', c.temperature);
  set('--eval.n_samples_per_prompt', 1);
  set('--ckpt.output_dir', '$JOB_DIR/output');
  set('--ckpt.save_steps', -1);
  set('--logger.logging_steps', 1);
  notes.push(modelNote(plan));
  return { engine: 'openrlhf', notes, program: 'python3 -m openrlhf.cli.train_ppo_ray', flags: f };
}
