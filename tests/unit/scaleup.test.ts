// The verl / OpenRLHF command lines carry every knob of the current config: mapped to a flag with
// the same value, or named in a comment line. Checked by parsing the generated text back.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import { openRlhfCommand, renderCommand, verlCommand, type ScaleUpCommand } from '../../src/ui/scaleUp.ts';

const cfg = (over: Partial<PpoConfig>): PpoConfig => {
  const c = { ...DEFAULT_CONFIG, ...over };
  expect(validateConfig(c as PpoConfig & Record<string, unknown>)).toEqual([]);
  return c;
};

/** verl `key=value` overrides as a map (each key at most once). */
function verlArgs(cmd: ScaleUpCommand): Map<string, string> {
  const m = new Map<string, string>();
  for (const a of cmd.args) {
    const eq = a.indexOf('=');
    expect(eq).toBeGreaterThan(0);
    const key = a.slice(0, eq);
    expect(m.has(key), `duplicate ${key}`).toBe(false);
    m.set(key, a.slice(eq + 1));
  }
  return m;
}

/** OpenRLHF `--flag v1 v2` arguments as a map from flag to its value words. */
function rlhfArgs(cmd: ScaleUpCommand): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const a of cmd.args) {
    const [flag, ...vals] = a.split(' ');
    expect(flag.startsWith('--')).toBe(true);
    expect(m.has(flag), `duplicate ${flag}`).toBe(false);
    m.set(flag, vals);
  }
  return m;
}

describe('verl command', () => {
  it('maps the default PPO config to Hydra overrides with the same numbers', () => {
    const v = verlArgs(verlCommand(DEFAULT_CONFIG));
    expect(v.get('algorithm.adv_estimator')).toBe('gae');
    expect(v.get('algorithm.gamma')).toBe('1');
    expect(v.get('algorithm.lam')).toBe('0.95');
    expect(v.get('algorithm.use_kl_in_reward')).toBe('True');
    expect(v.get('algorithm.kl_penalty')).toBe('kl');
    expect(v.get('algorithm.kl_ctrl.type')).toBe('fixed');
    expect(v.get('algorithm.kl_ctrl.kl_coef')).toBe('0.05');
    expect(v.get('algorithm.kl_ctrl.target_kl')).toBe('6');
    expect(v.get('algorithm.kl_ctrl.horizon')).toBe('10000');
    expect(v.get('actor_rollout_ref.actor.clip_ratio_low')).toBe('0.2');
    expect(v.get('actor_rollout_ref.actor.clip_ratio_high')).toBe('0.2');
    expect(v.get('actor_rollout_ref.actor.clip_ratio_c')).toBe('3');
    expect(v.get('actor_rollout_ref.actor.ppo_epochs')).toBe('2');
    // 8 prompts in 2 minibatches: verl counts minibatches in prompts.
    expect(v.get('actor_rollout_ref.actor.ppo_mini_batch_size')).toBe('4');
    expect(v.get('data.train_batch_size')).toBe('8');
    expect(v.get('actor_rollout_ref.rollout.n')).toBe('4');
    expect(v.get('actor_rollout_ref.actor.loss_agg_mode')).toBe('token-mean');
    expect(v.get('actor_rollout_ref.actor.entropy_coeff')).toBe('0');
    expect(v.get('actor_rollout_ref.actor.use_kl_loss')).toBe('False');
    expect(v.get('actor_rollout_ref.actor.kl_loss_type')).toBe('low_var_kl');
    expect(v.get('actor_rollout_ref.actor.optim.lr')).toBe('0.0001');
    expect(v.get('critic.optim.lr')).toBe('0.0005');
    expect(v.get('critic.cliprange_value')).toBe('0.2');
    expect(v.get('actor_rollout_ref.actor.grad_clip')).toBe('1');
    expect(v.get('actor_rollout_ref.rollout.top_k')).toBe('-1');
    expect(v.get('actor_rollout_ref.rollout.top_p')).toBe('1');
    expect(v.get('actor_rollout_ref.rollout.temperature')).toBe('1');
    expect(v.get('data.max_response_length')).toBe('8');
    expect(v.get('data.seed')).toBe('1');
  });

  it('spells GRPO / Dr. GRPO, the KL loss and the k2 estimator the verl way, and drops the critic', () => {
    const c = cfg({ advantageEstimator: 'dr_grpo', useKlLoss: true, klInReward: false, klLossEstimator: 'k2', klLossCoef: 0.001, lossAgg: 'seq-mean-token-sum-norm', topK: 20 });
    const cmd = verlCommand(c);
    const v = verlArgs(cmd);
    expect(v.get('algorithm.adv_estimator')).toBe('grpo');
    expect(v.get('algorithm.norm_adv_by_std_in_grpo')).toBe('False');
    expect(v.get('actor_rollout_ref.actor.kl_loss_type')).toBe('mse');
    expect(v.get('actor_rollout_ref.actor.kl_loss_coef')).toBe('0.001');
    expect(v.get('actor_rollout_ref.actor.loss_agg_mode')).toBe('seq-mean-token-sum-norm');
    expect(v.get('actor_rollout_ref.rollout.top_k')).toBe('20');
    expect([...v.keys()].some((k) => k.startsWith('critic.'))).toBe(false);
    expect(cmd.notes.join('\n')).toMatch(/critic: unused by dr_grpo/);
    expect(verlArgs(verlCommand(cfg({ advantageEstimator: 'group_norm' }))).get('algorithm.norm_adv_by_std_in_grpo')).toBeUndefined();
  });

  it('names knobs without an equivalent in comment lines instead of dropping them', () => {
    const cmd = verlCommand(cfg({ dualClip: null, valueClip: null, targetKl: 0.05, noEosPenalty: -1, promptsPerBatch: 6, samplesPerPrompt: 4, miniBatches: 4 }));
    const notes = cmd.notes.join('\n');
    expect(notes).toMatch(/dual clip is off/);
    expect(notes).toMatch(/value clip is off/);
    expect(notes).toMatch(/early-stop KL 0.05/);
    expect(notes).toMatch(/no-EOS penalty -1/);
    // 6 prompts / 4 minibatches is not whole in prompts.
    expect(notes).toMatch(/minibatches: .*not whole/);
    expect(verlArgs(cmd).get('actor_rollout_ref.actor.clip_ratio_c')).toBe('1e9');
  });
});

describe('OpenRLHF command', () => {
  it('maps the default PPO config to train_ppo_ray flags with the same numbers', () => {
    const o = rlhfArgs(openRlhfCommand(DEFAULT_CONFIG));
    expect(o.get('--advantage_estimator')).toEqual(['gae']);
    expect(o.get('--init_kl_coef')).toEqual(['0.05']);
    expect(o.get('--kl_estimator')).toEqual(['k1']);
    expect(o.has('--use_kl_loss')).toBe(false);
    expect(o.has('--kl_target')).toBe(false);
    expect(o.get('--eps_clip_low_high')).toEqual(['0.2', '0.2']);
    expect(o.get('--dual_clip')).toEqual(['3']);
    expect(o.get('--value_clip')).toEqual(['0.2']);
    expect(o.get('--gamma')).toEqual(['1']);
    expect(o.get('--lambd')).toEqual(['0.95']);
    expect(o.get('--n_samples_per_prompt')).toEqual(['4']);
    expect(o.get('--rollout_batch_size')).toEqual(['8']);
    // 32 sequences in 2 minibatches of 16.
    expect(o.get('--train_batch_size')).toEqual(['16']);
    expect(16 % Number(o.get('--micro_train_batch_size')![0])).toBe(0);
    expect(o.get('--max_epochs')).toEqual(['2']);
    expect(o.get('--actor_learning_rate')).toEqual(['0.0001']);
    expect(o.get('--critic_learning_rate')).toEqual(['0.0005']);
    expect(o.get('--temperature')).toEqual(['1']);
    expect(o.get('--top_p')).toEqual(['1']);
    expect(o.get('--generate_max_len')).toEqual(['8']);
    expect(o.get('--max_norm')).toEqual(['1']);
    expect(o.get('--seed')).toEqual(['1']);
    expect(o.get('--reward_clip_range')).toEqual(['-10', '10']);
    expect(o.get('--adam_betas')).toEqual(['0.9', '0.999']);
  });

  it('uses the KL loss coefficient with --use_kl_loss and the adaptive controller flags', () => {
    const o = rlhfArgs(openRlhfCommand(cfg({ useKlLoss: true, klInReward: false, klLossCoef: 0.002, klLossEstimator: 'k3', klController: 'adaptive', klTarget: 3, klHorizon: 500, entropyCoef: 0.01 })));
    expect(o.has('--use_kl_loss')).toBe(true);
    expect(o.get('--init_kl_coef')).toEqual(['0.002']);
    expect(o.get('--kl_estimator')).toEqual(['k3']);
    expect(o.get('--kl_target')).toEqual(['3']);
    expect(o.get('--kl_horizon')).toEqual(['500']);
    expect(o.get('--entropy_loss_coef')).toEqual(['0.01']);
    expect(rlhfArgs(openRlhfCommand(cfg({ klInReward: false }))).get('--init_kl_coef')).toEqual(['0']);
  });

  it('comments on the abs estimator, top-k and non-token-mean aggregation', () => {
    const cmd = openRlhfCommand(cfg({ klEstimator: 'abs', topK: 5, lossAgg: 'seq-mean-token-mean', dualClip: null }));
    const notes = cmd.notes.join('\n');
    expect(notes).toMatch(/"abs": OpenRLHF offers k1, k2, k3 only/);
    expect(notes).toMatch(/top-k 5/);
    expect(notes).toMatch(/seq-mean-token-mean/);
    expect(rlhfArgs(cmd).has('--kl_estimator')).toBe(false);
    expect(rlhfArgs(cmd).has('--dual_clip')).toBe(false);
  });
});

describe('both commands', () => {
  // Another valid value for every knob; changing it must change at least one of the two commands.
  const ALT: { [K in keyof PpoConfig]: PpoConfig[K] } = {
    task: 'sentiment', rewardSource: 'model', nLayer: 3, nHead: 4, dModel: 128, seed: 7,
    promptsPerBatch: 16, samplesPerPrompt: 2, maxResponseLength: 12, temperature: 0.7, topK: 10, topP: 0.9,
    klCoef: 0.1, klEstimator: 'k3', klInReward: false, useKlLoss: true, klLossCoef: 0.2, klLossEstimator: 'k2',
    klController: 'adaptive', klTarget: 2, klHorizon: 100, scoreClip: 5, noEosPenalty: -2,
    advantageEstimator: 'rloo', gamma: 0.99, lam: 0.9, ppoEpochs: 4, miniBatches: 4, clipLow: 0.1, clipHigh: 0.28,
    dualClip: 5, valueClip: 0.5, lossAgg: 'seq-mean-token-mean', entropyCoef: 0.01, targetKl: 0.1,
    actorLr: 3e-4, criticLr: 1e-3, warmupSteps: 10, weightDecay: 0.01, maxGradNorm: 0.5, adamBeta1: 0.8, adamBeta2: 0.99,
  };
  const text = (c: PpoConfig) => renderCommand(verlCommand(c)) + '\n' + renderCommand(openRlhfCommand(c));

  for (const key of Object.keys(DEFAULT_CONFIG) as (keyof PpoConfig)[]) {
    it(`reflects ${key}`, () => {
      // klEstimator only shows while KL is in the reward; klLossCoef/estimator only while the loss is on.
      const base: Partial<PpoConfig> = key === 'klLossCoef' || key === 'klLossEstimator' ? { useKlLoss: true } : {};
      const before = cfg(base);
      const after = cfg({ ...base, [key]: ALT[key] });
      expect(text(after)).not.toBe(text(before));
    });
  }

  it('renders a valid shell continuation with comments only above the command and no missing values', () => {
    for (const c of [DEFAULT_CONFIG, cfg({ advantageEstimator: 'group_norm', dualClip: null, valueClip: null, topK: 3 })]) {
      for (const cmd of [verlCommand(c), openRlhfCommand(c)]) {
        const lines = renderCommand(cmd).split('\n');
        const first = lines.findIndex((l) => !l.startsWith('#'));
        expect(lines[first]).toBe(`${cmd.program} \\`);
        const rest = lines.slice(first);
        rest.forEach((l, i) => {
          expect(l.startsWith('#')).toBe(false);
          expect(l.endsWith(' \\')).toBe(i < rest.length - 1);
        });
        expect(renderCommand(cmd)).not.toMatch(/undefined|NaN|null|Infinity/);
      }
    }
  });
});
