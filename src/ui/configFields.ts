// What the settings panel shows for each PpoConfig knob: group, label, one-line explanation.
// Ranges and choices come from NUMERIC_RULES / CHOICE_RULES so the UI and validator never disagree.
import type { PpoConfig } from '../rl/config.ts';

export const GROUPS = ['Task & model', 'Rollout', 'Reward & KL', 'Advantages', 'PPO update', 'Optimiser', 'Evaluation'] as const;
export type Group = (typeof GROUPS)[number];

export interface FieldMeta {
  key: keyof PpoConfig;
  group: Group;
  label: string;
  help: string;
}

export const FIELDS: readonly FieldMeta[] = [
  { key: 'task', group: 'Task & model', label: 'Task', help: 'What the policy is rewarded for: solving sums, writing positive text, or stopping on time.' },
  { key: 'rewardSource', group: 'Task & model', label: 'Reward source', help: 'A hand-written rule, or a learned reward model read at the EOS token.' },
  { key: 'nLayer', group: 'Task & model', label: 'Layers', help: 'Transformer blocks in actor and critic.' },
  { key: 'nHead', group: 'Task & model', label: 'Attention heads', help: 'Heads per attention layer; must divide the model width.' },
  { key: 'dModel', group: 'Task & model', label: 'Model width', help: 'Hidden size d_model of the residual stream.' },
  { key: 'seed', group: 'Task & model', label: 'Seed', help: 'Seeds initialisation, prompts and sampling: the same seed reproduces the run.' },
  { key: 'promptsPerBatch', group: 'Rollout', label: 'Prompts per batch', help: 'Distinct prompts sampled each PPO iteration.' },
  { key: 'samplesPerPrompt', group: 'Rollout', label: 'Samples per prompt', help: 'Responses per prompt; group estimators (GRPO, RLOO) compare these.' },
  { key: 'maxResponseLength', group: 'Rollout', label: 'Max response length', help: 'Tokens generated before a response is cut off without EOS.' },
  { key: 'temperature', group: 'Rollout', label: 'Temperature', help: 'Logits are divided by T when sampling and when scoring log-probs.' },
  { key: 'topK', group: 'Rollout', label: 'Top-k', help: 'Sample only among the k likeliest tokens (0 = off).' },
  { key: 'topP', group: 'Rollout', label: 'Top-p', help: 'Nucleus sampling: the smallest token set with this much probability (1 = off).' },
  { key: 'dynamicSampling', group: 'Rollout', label: 'Dynamic sampling', help: 'DAPO: drop prompts whose samples all scored the same (no learning signal) and sample more prompts until the batch is full.' },
  { key: 'maxExtraRollouts', group: 'Rollout', label: 'Max extra rollouts', help: 'Extra sampling rounds dynamic sampling may spend per iteration; a batch still short is filled with dropped prompts.' },
  { key: 'klCoef', group: 'Reward & KL', label: 'KL coefficient β', help: 'Weight of the per-token penalty −β·KL that keeps the policy near the reference.' },
  { key: 'klEstimator', group: 'Reward & KL', label: 'KL estimator', help: 'On d = logπ − logπ_ref: k1 = d, abs = |d|, k2 = ½d², k3 = e^−d + d − 1; k1+ / k3+ = value of k1 / k3 with k2’s gradient (verl); k1_clamped = max(d, 0), AlpacaFarm’s one-sided penalty.' },
  { key: 'klInReward', group: 'Reward & KL', label: 'KL in reward', help: 'Subtract β·KL from each token reward (classic RLHF).' },
  { key: 'useKlLoss', group: 'Reward & KL', label: 'KL loss', help: 'Add KL to the policy loss instead (GRPO style).' },
  { key: 'klLossCoef', group: 'Reward & KL', label: 'KL loss coefficient', help: 'Weight of the KL term in the policy loss.' },
  { key: 'klLossEstimator', group: 'Reward & KL', label: 'KL loss estimator', help: 'Estimator used by the KL loss (k3 is unbiased and low-variance; k1+ / k3+ take k2’s gradient, as verl’s straight-through estimators).' },
  { key: 'klController', group: 'Reward & KL', label: 'KL controller', help: 'Fixed β, or adapt β to hold the KL near a target. It drives the reward β, or the KL-loss coefficient when the KL is only in the loss (as OpenRLHF).' },
  { key: 'klTarget', group: 'Reward & KL', label: 'KL target (per token)', help: 'The adaptive controller nudges β so kl_token_mean — the mean over responses of each response’s per-token KL, verl’s scale — approaches this (verl’s default: 0.1).' },
  { key: 'klHorizon', group: 'Reward & KL', label: 'KL horizon', help: 'How slowly the adaptive controller moves β (in samples).' },
  { key: 'scoreClip', group: 'Reward & KL', label: 'Score clip', help: 'Task scores are clipped to ±this before shaping.' },
  { key: 'noEosPenalty', group: 'Reward & KL', label: 'No-EOS penalty', help: 'Score added to responses that never emit EOS (≤ 0).' },
  { key: 'overlongBuffer', group: 'Reward & KL', label: 'Overlong buffer', help: 'DAPO’s soft overlong penalty: responses longer than max length − this lose up to the penalty below, linearly (0 = off).' },
  { key: 'overlongPenalty', group: 'Reward & KL', label: 'Overlong penalty', help: 'Score lost by a response that reaches the max length (DAPO’s penalty factor).' },
  { key: 'advantageEstimator', group: 'Advantages', label: 'Advantage estimator', help: 'GAE uses the critic; the group estimators (GRPO, RLOO, …) compare samples of a prompt.' },
  { key: 'gamma', group: 'Advantages', label: 'Discount γ', help: 'Discount of future rewards (1 = none, usual for RLHF).' },
  { key: 'lam', group: 'Advantages', label: 'GAE λ', help: 'Bias–variance trade-off of GAE: 0 = one-step TD, 1 = Monte Carlo.' },
  { key: 'ppoEpochs', group: 'PPO update', label: 'PPO epochs', help: 'Passes over each batch of experience.' },
  { key: 'miniBatches', group: 'PPO update', label: 'Minibatches', help: 'Optimiser steps per epoch; must divide the batch evenly.' },
  { key: 'clipLow', group: 'PPO update', label: 'Clip ε', help: 'The ratio is clipped below at 1 − ε: limits how far one update moves the policy.' },
  { key: 'clipHigh', group: 'PPO update', label: 'Clip ε (high)', help: 'Upper clip 1 + ε_high; raising it alone is DAPO’s “clip-higher”.' },
  { key: 'dualClip', group: 'PPO update', label: 'Dual clip c', help: 'For A < 0 the loss is capped at −c·A (empty = off).' },
  { key: 'valueClip', group: 'PPO update', label: 'Value clip', help: 'New values stay within ±this of the old values in the value loss (empty = off).' },
  { key: 'lossMode', group: 'PPO update', label: 'Policy loss', help: 'vanilla = PPO’s clipped surrogate; gspo = one length-normalised ratio per sequence (GSPO); cispo = clipped importance weight as a stop-gradient coefficient of A·logπ (CISPO).' },
  { key: 'lossAgg', group: 'PPO update', label: 'Loss aggregation', help: 'How token losses are averaged: over all tokens (DAPO’s token-level loss), per sequence, per-sequence sums, or Dr. GRPO’s constant norm.' },
  { key: 'normScale', group: 'PPO update', label: 'Constant-norm scale', help: 'seq-mean-token-sum-norm only: per_seq divides by the number of sequences too (Dr. GRPO paper); verl does not (B× larger).' },
  { key: 'tisCap', group: 'PPO update', label: 'TIS cap', help: 'Token-level truncated importance sampling: weight each token’s loss by min(π_old/π_rollout, cap) to correct for the sampler’s top-k/top-p (empty = off).' },
  { key: 'entropyCoef', group: 'PPO update', label: 'Entropy bonus', help: 'Rewards keeping the policy’s token distribution broad.' },
  { key: 'targetKl', group: 'PPO update', label: 'Early-stop KL', help: 'Stop the update after an epoch whose approx KL exceeds this, as Spinning Up’s and Stable-Baselines3’s target_kl (empty = never).' },
  { key: 'actorLr', group: 'Optimiser', label: 'Learning rate', help: 'AdamW step size of the policy (actor).' },
  { key: 'criticLr', group: 'Optimiser', label: 'Critic learning rate', help: 'AdamW step size of the value model (critic).' },
  { key: 'warmupSteps', group: 'Optimiser', label: 'Warm-up steps', help: 'Linear learning-rate warm-up from 0.' },
  { key: 'weightDecay', group: 'Optimiser', label: 'Weight decay', help: 'Decoupled AdamW weight decay.' },
  { key: 'maxGradNorm', group: 'Optimiser', label: 'Max grad norm', help: 'Gradients are rescaled to at most this global norm.' },
  { key: 'adamBeta1', group: 'Optimiser', label: 'Adam β₁', help: 'Momentum of the gradient average.' },
  { key: 'adamBeta2', group: 'Optimiser', label: 'Adam β₂', help: 'Momentum of the squared-gradient average.' },
  { key: 'evalEvery', group: 'Evaluation', label: 'Evaluate every', help: 'Score held-out prompts (never trained on) every this many iterations; 0 = never.' },
];
