// "Scale it up" carries every knob of the current config into the verl / OpenRLHF launch scripts:
// mapped to a key with the same value, or named in a `#` note saying what differs.
// (Key names and choices are checked against the engines in export_keys.test.ts.)
import { describe, expect, it } from 'vitest';
import { planJob } from '../../src/export/plan.ts';
import { engineCommand, renderScript } from '../../src/export/script.ts';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../../src/rl/config.ts';

const cfg = (over: Partial<PpoConfig>): PpoConfig => {
  const c = { ...DEFAULT_CONFIG, ...over };
  expect(validateConfig(c as PpoConfig & Record<string, unknown>)).toEqual([]);
  return c;
};

const script = (engine: 'verl' | 'openrlhf', c: PpoConfig) => {
  const plan = planJob(c, { engine, gpus: 1, trainRows: 256 });
  return renderScript(plan, engineCommand(plan));
};
const notes = (engine: 'verl' | 'openrlhf', c: PpoConfig) =>
  script(engine, c)
    .split('\n')
    .filter((l) => l.startsWith('# '))
    .join('\n');

describe('notes for knobs without a counterpart', () => {
  it('verl: disabled clips, early stop, no-EOS penalty, minibatches not whole in prompts, max grad norm 0', () => {
    const n = notes('verl', cfg({ dualClip: null, valueClip: null, targetKl: 0.05, noEosPenalty: -1, promptsPerBatch: 6, samplesPerPrompt: 4, miniBatches: 4, maxGradNorm: 0 }));
    expect(n).toMatch(/dual clip is off/);
    expect(n).toMatch(/value clip is off/);
    expect(n).toMatch(/early-stop KL 0\.05/);
    expect(n).toMatch(/no-EOS penalty -1: applied inside reward\.py/);
    expect(n).toMatch(/minibatches: .*not whole/);
    expect(n).toMatch(/max grad norm 0 means no clipping here/);
  });

  it('verl: KL before the group statistics; the per-token KL target passes through with no conversion note', () => {
    const n = notes('verl', cfg({ advantageEstimator: 'group_norm', klController: 'adaptive', klTarget: 0.3 }));
    expect(n).toMatch(/subtracts β·ΣKL from each score before the group statistics/);
    expect(n).not.toMatch(/per sequence|response budget\) =/);
    expect(script('verl', cfg({ klController: 'adaptive', klTarget: 0.3, maxResponseLength: 12 }))).toContain('algorithm.kl_ctrl.target_kl=0.3 \\');
    expect(script('openrlhf', cfg({ klController: 'adaptive', klTarget: 0.3, maxResponseLength: 12 }))).toContain('--algo.kl.target 0.3 \\');
  });

  it('adaptive KL with the KL only in the loss: OpenRLHF adapts the loss coefficient as here; verl keeps it fixed, and says so', () => {
    const c = cfg({ useKlLoss: true, klInReward: false, klController: 'adaptive', klTarget: 0.2, klLossCoef: 0.01 });
    expect(notes('verl', c)).toMatch(
      /playground adapts the KL-loss coefficient \(as OpenRLHF does\); verl adapts only the in-reward coefficient, so here kl_loss_coef stays fixed at 0\.01/,
    );
    const o = script('openrlhf', c);
    expect(o).toContain('--algo.kl.target 0.2 \\');
    expect(o).toMatch(/# adaptive KL with the KL only in the loss: OpenRLHF and the playground both adapt the KL-loss coefficient/);
    // KL in the reward and in the loss: the playground adapts β, OpenRLHF would adapt its one (loss) coefficient.
    const both = cfg({ useKlLoss: true, klInReward: true, klController: 'adaptive' });
    expect(script('openrlhf', both)).not.toMatch(/^ {2}--algo\.kl\.target /m);
    expect(notes('openrlhf', both)).toMatch(/the controller is left fixed/);
  });

  it('OpenRLHF: abs estimator, top-k, loss aggregation', () => {
    const n = notes('openrlhf', cfg({ klEstimator: 'abs', topK: 5, lossAgg: 'seq-mean-token-mean', dualClip: null }));
    expect(n).toMatch(/"abs": OpenRLHF offers k1, k2, k3 only/);
    expect(n).toMatch(/top-k 5/);
    expect(n).toMatch(/seq-mean-token-mean/);
    expect(script('openrlhf', cfg({ klEstimator: 'abs' }))).not.toMatch(/--algo\.kl\.estimator/);
  });

  it('loss mode: GSPO → verl loss_mode=gspo / OpenRLHF policy_loss_type gspo; CISPO → PPO clip and a note in both', () => {
    const g = cfg({ lossMode: 'gspo' });
    expect(script('verl', g)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=gspo \\');
    expect(script('openrlhf', g)).toContain('--actor.policy_loss_type gspo \\');
    expect(script('verl', DEFAULT_CONFIG)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=vanilla \\');
    expect(script('openrlhf', DEFAULT_CONFIG)).toContain('--actor.policy_loss_type ppo \\');
    const k = cfg({ lossMode: 'cispo' });
    expect(script('verl', k)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=vanilla \\');
    expect(notes('verl', k)).toMatch(/loss mode cispo: not registered in verl at the targeted commit/);
    expect(script('openrlhf', k)).toContain('--actor.policy_loss_type ppo \\');
    expect(notes('openrlhf', k)).toMatch(/loss mode cispo: OpenRLHF 0\.10\.2 has no CISPO/);
  });

  it('TIS: verl tis_imp_ratio_cap with the rollout log-probs, OpenRLHF is_correction tis [0, cap]', () => {
    const t = cfg({ tisCap: 2 });
    const v = script('verl', t);
    expect(v).toContain('actor_rollout_ref.actor.tis_imp_ratio_cap=2 \\');
    expect(v).toContain('actor_rollout_ref.rollout.calculate_log_probs=True \\');
    const o = script('openrlhf', t);
    expect(o).toContain('--algo.advantage.is_correction_enable \\');
    expect(o).toContain('--algo.advantage.is_correction_type tis \\');
    expect(o).toContain('--algo.advantage.is_correction_threshold 0 2 \\');
    for (const e of ['verl', 'openrlhf'] as const) expect(script(e, DEFAULT_CONFIG)).not.toMatch(/tis_imp_ratio_cap|calculate_log_probs|is_correction/);
    expect(notes('verl', cfg({ tisCap: 2, lossMode: 'gspo' }))).toMatch(/its GSPO loss ignores the rollout log-probs/);
  });

  it('KL estimators: "+" exact in the reward, k2 (same gradient) in the loss with a note; k1_clamped nearest k1 with a note', () => {
    const r = cfg({ klEstimator: 'k3+' });
    expect(script('verl', r)).toContain('algorithm.kl_penalty=low_var_kl \\');
    expect(script('openrlhf', r)).toContain('--algo.kl.estimator k3 \\');
    expect(notes('verl', r)).toMatch(/KL reward estimator k3\+: the reward carries no gradient/);
    const l = cfg({ useKlLoss: true, klInReward: false, klLossEstimator: 'k3+' });
    expect(script('verl', l)).toContain('actor_rollout_ref.actor.kl_loss_type=mse \\');
    expect(notes('verl', l)).toMatch(/verl accepts "k3\+" only from v0\.9\.1/);
    expect(script('openrlhf', l)).toContain('--algo.kl.estimator k2 \\');
    expect(script('verl', cfg({ useKlLoss: true, klInReward: false, klLossEstimator: 'k1+' }))).toContain('kl_loss_type=mse \\');
    const c = cfg({ klEstimator: 'k1_clamped' });
    expect(script('verl', c)).toContain('algorithm.kl_penalty=kl \\');
    expect(script('openrlhf', c)).toContain('--algo.kl.estimator k1 \\');
    for (const e of ['verl', 'openrlhf'] as const) expect(notes(e, c)).toMatch(/k1_clamped \(AlpacaFarm's one-sided max\(logp − ref, 0\)\): .* has no clamped estimator/);
  });

  it('aggregation: seq-mean-token-sum maps directly in verl; the per_seq norm scale is named where verl differs', () => {
    expect(script('verl', cfg({ lossAgg: 'seq-mean-token-sum' }))).toContain('actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum \\');
    expect(notes('openrlhf', cfg({ lossAgg: 'seq-mean-token-sum' }))).toMatch(/"seq-mean-token-sum": OpenRLHF 0\.10\.2 averages/);
    expect(notes('verl', cfg({ lossAgg: 'seq-mean-token-sum-norm', normScale: 'per_seq' }))).toMatch(/norm scale per_seq: .* B× larger/);
    expect(notes('verl', cfg({ lossAgg: 'seq-mean-token-sum-norm', normScale: 'verl' }))).not.toMatch(/norm scale/);
  });

  it('DAPO: verl runs the DAPO recipe with filter_groups and overlong_buffer, OpenRLHF its flags', () => {
    const d = cfg({ advantageEstimator: 'group_norm', dynamicSampling: true, maxExtraRollouts: 2, overlongBuffer: 2, overlongPenalty: 0.5 });
    const v = script('verl', d);
    expect(v).toMatch(/^python3 -m recipe\.dapo\.main_dapo \\$/m);
    expect(v).not.toMatch(/verl\.trainer\.main_ppo/);
    expect(v).toMatch(/^cd "\$\{VERL_REPO:\?/m);
    for (const kv of [
      'algorithm.filter_groups.enable=True',
      'algorithm.filter_groups.metric=seq_reward',
      'algorithm.filter_groups.max_num_gen_batches=3',
      'data.gen_batch_size=8',
      'reward_model.reward_manager=dapo',
      'reward_model.overlong_buffer.enable=True',
      'reward_model.overlong_buffer.len=2',
      'reward_model.overlong_buffer.penalty_factor=0.5',
    ]) {
      expect(v).toContain(`  ${kv} \\`);
    }
    expect(notes('verl', d)).toMatch(/runs verl's DAPO recipe/);
    expect(notes('verl', d)).toMatch(/verl raises an error where the playground fills the batch/);
    const o = script('openrlhf', d);
    for (const f of ['--algo.dynamic_filtering_enable', '--algo.dynamic_filtering_range 0 1', '--reward.overlong_buffer_len 2', '--reward.overlong_penalty_factor 0.5'])
      expect(o).toContain(`  ${f} \\`);
    expect(notes('openrlhf', d)).toMatch(/max extra rollouts 2 has no counterpart/);
    // Off: main_ppo, none of the recipe's keys.
    const plain = script('verl', DEFAULT_CONFIG);
    expect(plain).toMatch(/^python3 -m verl\.trainer\.main_ppo \\$/m);
    expect(plain).not.toMatch(/filter_groups|overlong_buffer|gen_batch_size|VERL_REPO/);
    // Overlong alone also needs the recipe (main_ppo has no reward_model.overlong_buffer).
    expect(script('verl', cfg({ overlongBuffer: 3 }))).toMatch(/^python3 -m recipe\.dapo\.main_dapo \\$/m);
  });

  it("a learned reward model is exported as the task's rule, and said so", () => {
    const c = cfg({ task: 'sentiment', rewardSource: 'model' });
    expect(notes('verl', c)).toMatch(/exports the task's lexicon rule instead/);
    expect(notes('openrlhf', c)).toMatch(/exports the task's lexicon rule instead/);
  });
});

describe('both scripts', () => {
  // Another valid value for every knob; changing it must change at least one of the two scripts.
  const ALT: { [K in keyof PpoConfig]: PpoConfig[K] } = {
    task: 'sentiment',
    rewardSource: 'model',
    rewardFunction: '(prompt, response) => response.length',
    nLayer: 3,
    nHead: 4,
    dModel: 128,
    seed: 7,
    promptsPerBatch: 16,
    samplesPerPrompt: 2,
    maxResponseLength: 12,
    temperature: 0.7,
    topK: 10,
    topP: 0.9,
    klCoef: 0.1,
    klEstimator: 'k3',
    klInReward: false,
    useKlLoss: true,
    klLossCoef: 0.2,
    klLossEstimator: 'k2',
    klController: 'adaptive',
    klTarget: 2,
    klHorizon: 100,
    scoreClip: 5,
    noEosPenalty: -2,
    advantageEstimator: 'rloo',
    gamma: 0.99,
    lam: 0.9,
    ppoEpochs: 4,
    miniBatches: 4,
    clipLow: 0.1,
    clipHigh: 0.28,
    dualClip: 5,
    valueClip: 0.5,
    lossAgg: 'seq-mean-token-mean',
    entropyCoef: 0.01,
    targetKl: 0.1,
    actorLr: 3e-4,
    criticLr: 1e-3,
    warmupSteps: 10,
    weightDecay: 0.01,
    maxGradNorm: 0.5,
    adamBeta1: 0.8,
    adamBeta2: 0.99,
    evalEvery: 5,
    normScale: 'verl',
    lossMode: 'gspo',
    tisCap: 2,
    dynamicSampling: true,
    maxExtraRollouts: 2,
    overlongBuffer: 4,
    overlongPenalty: 0.5,
  };
  const text = (c: PpoConfig) => `${script('verl', c)}\n${script('openrlhf', c)}`;

  for (const key of Object.keys(DEFAULT_CONFIG) as (keyof PpoConfig)[]) {
    it(`reflect ${key}`, () => {
      // klEstimator shows while KL is in the reward; klLossCoef/estimator while the loss is on;
      // klTarget/klHorizon while the controller is adaptive.
      // normScale acts only on seq-mean-token-sum-norm; maxExtraRollouts only with dynamic sampling;
      // overlongPenalty only with an overlong buffer; rewardFunction only with Reward source = function;
      // Reward source = model only on a task with a learned reward model.
      const base: Partial<PpoConfig> =
        key === 'rewardFunction'
          ? { rewardSource: 'function' }
          : key === 'rewardSource'
            ? { task: 'sentiment' } // the one task with a learned reward model
            : key === 'klLossCoef' || key === 'klLossEstimator'
              ? { useKlLoss: true }
              : key === 'klTarget' || key === 'klHorizon'
                ? { klController: 'adaptive' }
                : key === 'normScale'
                  ? { lossAgg: 'seq-mean-token-sum-norm' }
                  : key === 'maxExtraRollouts'
                    ? { dynamicSampling: true }
                    : key === 'overlongPenalty'
                      ? { overlongBuffer: 2 }
                      : {};
      const before = cfg(base);
      const after = cfg({ ...base, [key]: ALT[key] });
      expect(text(after)).not.toBe(text(before));
    });
  }

  it('end with the program and its arguments, comments only above, no missing values', () => {
    for (const c of [
      DEFAULT_CONFIG,
      cfg({ advantageEstimator: 'group_norm', dualClip: null, valueClip: null, topK: 3 }),
      cfg({ dynamicSampling: true, overlongBuffer: 2, tisCap: 2 }),
    ]) {
      for (const engine of ['verl', 'openrlhf'] as const) {
        const s = script(engine, c);
        const lines = s.trimEnd().split('\n');
        const first = lines.findIndex((l) => l.startsWith('python3 -m '));
        expect(lines.slice(0, first).every((l) => l.startsWith('#') || /^(set |JOB_DIR=|MODEL=|cd "\$\{VERL_REPO:\?)/.test(l))).toBe(true);
        lines.slice(first).forEach((l, i, rest) => {
          expect(l.startsWith('#')).toBe(false);
          expect(l.endsWith(' \\')).toBe(i < rest.length - 1);
        });
        expect(s).not.toMatch(/undefined|NaN|null|Infinity/);
      }
    }
  });
});
