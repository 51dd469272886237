// The settings of a PPO/GRPO iteration on a Hugging Face model that its callers (the command line,
// the page's worker, the bench) do not choose: the playground's defaults for the policy and value
// losses, the KL estimator, λ and gradient clipping; AdamW without weight decay on the adapters
// (PEFT/TRL's default); the critic at 5× the actor's learning rate, as the playground's defaults.
import { DEFAULT_CONFIG } from '../configKnobs.ts';
import { actorPolicyParams } from '../policyParams.ts';
import type { HfEstimator, HfPpoConfig } from './hfPpo.ts';

export interface HfPpoChoices {
  estimator: HfEstimator;
  samplesPerPrompt: number;
  maxNewTokens: number;
  seed: number;
  klCoef: number;
  lr: number;
  temperature?: number; // default 1
  ppoEpochs?: number; // default 1
  miniBatches?: number; // default 1
}

export function hfPpoConfig(c: HfPpoChoices): HfPpoConfig {
  const hp = { lr: c.lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: DEFAULT_CONFIG.maxGradNorm };
  return {
    estimator: c.estimator,
    samplesPerPrompt: c.samplesPerPrompt,
    maxNewTokens: c.maxNewTokens,
    temperature: c.temperature ?? 1,
    topP: 1,
    seed: c.seed,
    klCoef: c.klCoef,
    klEstimator: DEFAULT_CONFIG.klEstimator,
    gamma: 1,
    lam: DEFAULT_CONFIG.lam,
    ppoEpochs: c.ppoEpochs ?? 1,
    miniBatches: c.miniBatches ?? 1,
    policy: actorPolicyParams(DEFAULT_CONFIG, c.seed),
    value: { clip: DEFAULT_CONFIG.valueClip, agg: DEFAULT_CONFIG.lossAgg },
    actorHp: hp,
    criticHp: { ...hp, lr: (DEFAULT_CONFIG.criticLr / DEFAULT_CONFIG.actorLr) * c.lr },
  };
}
