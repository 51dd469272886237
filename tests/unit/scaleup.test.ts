// "Scale it up" carries every knob of the current config into the verl / OpenRLHF launch scripts:
// mapped to a key with the same value, or named in a `#` note saying what differs.
// (Key names and choices are checked against the engines in tests/cli/export_keys.test.ts.)
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
  it('estimators opo, grpo_passk, remax → verl adv_estimator; OpenRLHF the nearest estimator and a note', () => {
    const opo = cfg({ advantageEstimator: 'opo' });
    expect(script('verl', opo)).toContain('algorithm.adv_estimator=opo \\');
    expect(script('openrlhf', opo)).toContain('--algo.advantage.estimator dr_grpo \\');
    expect(notes('openrlhf', opo)).toMatch(/estimator opo: OpenRLHF 0\.11\.0 has no OPO/);
    const passk = cfg({ advantageEstimator: 'grpo_passk' });
    expect(script('verl', passk)).toContain('algorithm.adv_estimator=grpo_passk \\');
    expect(script('verl', passk)).toContain('algorithm.norm_adv_by_std_in_grpo=True \\');
    expect(script('openrlhf', passk)).toContain('--algo.advantage.estimator group_norm \\');
    expect(notes('openrlhf', passk)).toMatch(/estimator grpo_passk: OpenRLHF 0\.11\.0 has no GRPO pass@k/);
    const remax = cfg({ advantageEstimator: 'remax', samplesPerPrompt: 1, klInReward: true, groupKlOrder: 'verl' });
    expect(script('verl', remax)).toContain('algorithm.adv_estimator=remax \\');
    expect(notes('verl', remax)).toMatch(/remax: verl samples one greedy response per prompt/);
    // ReMax keeps the KL per token in verl: no KL-order note under either order.
    expect(notes('verl', remax)).not.toMatch(/KL with remax/);
    expect(script('openrlhf', remax)).toContain('--algo.advantage.estimator reinforce \\');
    expect(notes('openrlhf', remax)).toMatch(/estimator remax: OpenRLHF 0\.11\.0 has no ReMax/);
    expect(notes('openrlhf', cfg({ advantageEstimator: 'rloo' }))).not.toMatch(/^# estimator/m);
  });

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

  it('loss mode: GSPO → verl loss_mode=gspo / OpenRLHF policy_loss_type gspo; CISPO → verl loss_mode=cispo, OpenRLHF PPO clip and a note', () => {
    const g = cfg({ lossMode: 'gspo' });
    expect(script('verl', g)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=gspo \\');
    expect(script('openrlhf', g)).toContain('--actor.policy_loss_type gspo \\');
    expect(script('verl', DEFAULT_CONFIG)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=vanilla \\');
    expect(script('openrlhf', DEFAULT_CONFIG)).toContain('--actor.policy_loss_type ppo \\');
    const k = cfg({ lossMode: 'cispo' });
    expect(script('verl', k)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=cispo \\');
    expect(notes('verl', k)).not.toMatch(/cispo/);
    expect(script('openrlhf', k)).toContain('--actor.policy_loss_type ppo \\');
    expect(notes('openrlhf', k)).toMatch(/loss mode cispo: OpenRLHF 0\.11\.0 has no CISPO/);
  });

  it('loss modes sapo, gpg, geo_mean → verl loss_mode (SAPO with tau_pos/tau_neg), OpenRLHF PPO clip and a note', () => {
    const sapo = cfg({ lossMode: 'sapo' });
    expect(script('verl', sapo)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=sapo \\');
    expect(script('verl', sapo)).toContain('actor_rollout_ref.actor.tau_pos=1 \\');
    expect(script('verl', sapo)).toContain('actor_rollout_ref.actor.tau_neg=1.05 \\');
    expect(script('verl', cfg({ lossMode: 'sapo', sapoTauPos: 0.5, sapoTauNeg: 2 }))).toContain('actor_rollout_ref.actor.tau_neg=2 \\');
    expect(notes('verl', sapo)).toMatch(/loss mode sapo: a soft sigmoid gate/);
    expect(script('verl', cfg({ lossMode: 'vanilla' }))).not.toMatch(/tau_pos/);
    for (const [mode, name] of [
      ['sapo', 'SAPO'],
      ['gpg', 'GPG'],
      ['geo_mean', 'GMPO'],
    ] as const) {
      const c = cfg({ lossMode: mode });
      expect(script('verl', c)).toContain(`actor_rollout_ref.actor.policy_loss.loss_mode=${mode} \\`);
      expect(script('openrlhf', c)).toContain('--actor.policy_loss_type ppo \\');
      expect(notes('openrlhf', c)).toMatch(new RegExp(`loss mode ${mode}: OpenRLHF 0\\.11\\.0 has no ${name}`));
    }
    expect(notes('verl', cfg({ lossMode: 'gpg' }))).toMatch(/loss mode gpg: −A·logπ/);
    expect(notes('verl', cfg({ lossMode: 'geo_mean' }))).toMatch(/loss mode geo_mean \(GMPO\)/);
  });

  it('loss modes clip_cov, kl_cov → verl loss_mode with their policy_loss.* knobs, OpenRLHF PPO clip and a note', () => {
    const cc = cfg({ lossMode: 'clip_cov', clipCovRatio: 0.01, clipCovLb: 0.5, clipCovUb: 3 });
    expect(script('verl', cc)).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=clip_cov \\');
    expect(script('verl', cc)).toContain('actor_rollout_ref.actor.policy_loss.clip_cov_ratio=0.01 \\');
    expect(script('verl', cc)).toContain('actor_rollout_ref.actor.policy_loss.clip_cov_lb=0.5 \\');
    expect(script('verl', cc)).toContain('actor_rollout_ref.actor.policy_loss.clip_cov_ub=3 \\');
    expect(notes('verl', cc)).toMatch(/loss mode clip_cov: .*torch\.randperm/);
    const kc = cfg({ lossMode: 'kl_cov' });
    expect(script('verl', kc)).toContain('actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.0002 \\');
    expect(script('verl', kc)).toContain('actor_rollout_ref.actor.policy_loss.ppo_kl_coef=0.1 \\');
    expect(script('verl', kc)).not.toMatch(/clip_cov_ratio/);
    expect(script('verl', cfg({ lossMode: 'vanilla' }))).not.toMatch(/cov_ratio|ppo_kl_coef/);
    for (const [mode, name] of [
      ['clip_cov', 'Clip-Cov'],
      ['kl_cov', 'KL-Cov'],
    ] as const) {
      const c = cfg({ lossMode: mode });
      expect(script('openrlhf', c)).toContain('--actor.policy_loss_type ppo \\');
      expect(notes('openrlhf', c)).toMatch(new RegExp(`loss mode ${mode}: OpenRLHF 0\\.11\\.0 has no ${name}`));
    }
  });

  it('TIS: verl token rollout correction (decoupled) with the rollout log-probs, OpenRLHF is_correction tis [0, cap]', () => {
    const t = cfg({ tisCap: 2 });
    const v = script('verl', t);
    expect(v).toContain('algorithm.rollout_correction.rollout_is=token \\');
    expect(v).toContain('algorithm.rollout_correction.rollout_is_threshold=2 \\');
    expect(v).toContain('algorithm.rollout_correction.bypass_mode=False \\');
    expect(v).toContain('actor_rollout_ref.rollout.calculate_log_probs=True \\');
    const o = script('openrlhf', t);
    expect(o).toContain('--algo.advantage.is_correction_enable \\');
    expect(o).toContain('--algo.advantage.is_correction_type tis \\');
    expect(o).toContain('--algo.advantage.is_correction_threshold 0 2 \\');
    for (const e of ['verl', 'openrlhf'] as const) expect(script(e, DEFAULT_CONFIG)).not.toMatch(/rollout_correction|calculate_log_probs|is_correction/);
    // verl multiplies the weights into every loss mode (GSPO included); OpenRLHF only into its PPO loss.
    expect(notes('verl', cfg({ tisCap: 2, lossMode: 'gspo' }))).not.toMatch(/TIS/);
    expect(notes('openrlhf', cfg({ tisCap: 2, lossMode: 'gspo' }))).toMatch(/TIS with gspo: OpenRLHF applies the IS correction only with policy_loss_type ppo/);
  });

  it('KL estimators: "+" exact in the reward, verl\'s own "+" names in the loss, OpenRLHF k2 (same gradient) with a note; k1_clamped nearest k1 with a note', () => {
    const r = cfg({ klEstimator: 'k3+' });
    expect(script('verl', r)).toContain('algorithm.kl_penalty=low_var_kl \\');
    expect(script('openrlhf', r)).toContain('--algo.kl.estimator k3 \\');
    expect(notes('verl', r)).toMatch(/KL reward estimator k3\+: the reward carries no gradient/);
    const l = cfg({ useKlLoss: true, klInReward: false, klLossEstimator: 'k3+' });
    expect(script('verl', l)).toContain('actor_rollout_ref.actor.kl_loss_type=k3+ \\');
    expect(notes('verl', l)).not.toMatch(/KL loss estimator/);
    expect(script('openrlhf', l)).toContain('--algo.kl.estimator k2 \\');
    expect(script('verl', cfg({ useKlLoss: true, klInReward: false, klLossEstimator: 'k1+' }))).toContain('kl_loss_type=k1+ \\');
    const c = cfg({ klEstimator: 'k1_clamped' });
    expect(script('verl', c)).toContain('algorithm.kl_penalty=kl \\');
    expect(script('openrlhf', c)).toContain('--algo.kl.estimator k1 \\');
    for (const e of ['verl', 'openrlhf'] as const) expect(notes(e, c)).toMatch(/k1_clamped \(AlpacaFarm's one-sided max\(logp − ref, 0\)\): .* has no clamped estimator/);
  });

  it('aggregation: seq-mean-token-sum maps directly in verl; per_seq is verl ≥ 0.7.1, the old "verl" scale is named', () => {
    expect(script('verl', cfg({ lossAgg: 'seq-mean-token-sum' }))).toContain('actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum \\');
    expect(notes('openrlhf', cfg({ lossAgg: 'seq-mean-token-sum' }))).toMatch(/"seq-mean-token-sum": OpenRLHF 0\.11\.0 averages/);
    expect(notes('verl', cfg({ lossAgg: 'seq-mean-token-sum-norm', normScale: 'per_seq' }))).not.toMatch(/norm scale/);
    expect(notes('verl', cfg({ lossAgg: 'seq-mean-token-sum-norm', normScale: 'verl' }))).toMatch(/norm scale "verl" \(verl ≤ 0\.7\.0.*since v0\.7\.1/);
  });

  it('group KL order: each engine does its own; the other order is said in its script', () => {
    const base = { advantageEstimator: 'rloo', klInReward: true } as const;
    const own = (e: 'verl' | 'openrlhf') => cfg({ ...base, groupKlOrder: e });
    expect(notes('verl', own('verl'))).toMatch(/KL with rloo: verl, like the playground \(group KL order verl\)/);
    expect(notes('openrlhf', own('openrlhf'))).toMatch(/KL with rloo: OpenRLHF, like the playground \(group KL order openrlhf\)/);
    expect(notes('verl', own('openrlhf'))).toMatch(/verl can only do its own order/);
    expect(notes('openrlhf', own('verl'))).toMatch(/OpenRLHF can only do its own order/);
    // Plain REINFORCE is token-level in both engines: no order to speak of.
    expect(notes('verl', cfg({ advantageEstimator: 'reinforce', groupKlOrder: 'verl' }))).not.toMatch(/group KL order/);
  });

  it("DAPO: verl main_ppo with filter_groups and the dapo reward manager's overlong keywords, OpenRLHF its flags", () => {
    const d = cfg({ advantageEstimator: 'group_norm', dynamicSampling: true, maxExtraRollouts: 2, overlongBuffer: 2, overlongPenalty: 0.5 });
    const v = script('verl', d);
    expect(v).toMatch(/^python3 -m verl\.trainer\.main_ppo \\$/m);
    expect(v).not.toMatch(/recipe\.dapo|VERL_REPO/);
    expect(v).not.toMatch(/^ {2}(reward_model\.|data\.gen_batch_size|algorithm\.filter_groups\.max_num_gen_batches)/m);
    for (const kv of [
      'algorithm.filter_groups.enable=True',
      'algorithm.filter_groups.metric=acc',
      'reward.reward_manager.name=dapo',
      '+reward.reward_kwargs.overlong_buffer_cfg.enable=True',
      '+reward.reward_kwargs.overlong_buffer_cfg.len=2',
      '+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor=0.5',
      '+reward.reward_kwargs.overlong_buffer_cfg.log=False',
      '+reward.reward_kwargs.max_resp_len=8',
    ]) {
      expect(v).toContain(`  ${kv} \\`);
    }
    expect(notes('verl', d)).toMatch(/max extra rollouts 2 has no counterpart, and it compares the score before the overlong penalty/);
    const o = script('openrlhf', d);
    for (const f of ['--algo.dynamic_filtering_enable', '--algo.dynamic_filtering_range 0 1', '--reward.overlong_buffer_len 2', '--reward.overlong_penalty_factor 0.5'])
      expect(o).toContain(`  ${f} \\`);
    expect(notes('openrlhf', d)).toMatch(/max extra rollouts 2 has no counterpart/);
    // Off: none of the DAPO keys.
    const plain = script('verl', DEFAULT_CONFIG);
    expect(plain).toMatch(/^python3 -m verl\.trainer\.main_ppo \\$/m);
    expect(plain).not.toMatch(/filter_groups|overlong_buffer|reward_manager/);
    // Overlong alone: the dapo reward manager, no group filter.
    const ov = script('verl', cfg({ overlongBuffer: 3 }));
    expect(ov).toContain('  reward.reward_manager.name=dapo \\');
    expect(ov).not.toMatch(/filter_groups/);
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
    groupKlOrder: 'verl',
    lossMode: 'gspo',
    sapoTauPos: 0.5,
    sapoTauNeg: 2,
    clipCovRatio: 0.01,
    clipCovLb: 0.5,
    clipCovUb: 3,
    klCovRatio: 0.02,
    ppoKlCoef: 1,
    tisCap: 2,
    rolloutIs: 'sequence',
    icepopLower: 0.5,
    tisLower: 0.5,
    rolloutRs: 'seq_mean_k3',
    rolloutRsThreshold: 0.01,
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
      // Reward source = model only on a task with a learned reward model; SAPO's temperatures only with lossMode = sapo;
      // the covariance knobs only with lossMode = clip_cov / kl_cov; the IS level and bounds only with
      // tisCap set; the rejection threshold only with rejection sampling on.
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
                      : key === 'groupKlOrder'
                        ? { advantageEstimator: 'rloo' }
                        : key === 'sapoTauPos' || key === 'sapoTauNeg'
                          ? { lossMode: 'sapo' }
                          : key === 'clipCovRatio' || key === 'clipCovLb' || key === 'clipCovUb'
                            ? { lossMode: 'clip_cov' }
                            : key === 'klCovRatio' || key === 'ppoKlCoef'
                              ? { lossMode: 'kl_cov' }
                              : key === 'rolloutIs' || key === 'icepopLower' || key === 'tisLower'
                                ? { tisCap: 2 } // the IS level and bounds act with importance sampling on
                                : key === 'rolloutRsThreshold'
                                  ? { rolloutRs: 'token_k2' }
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
        expect(lines.slice(0, first).every((l) => l.startsWith('#') || /^(set |JOB_DIR=|MODEL=)/.test(l))).toBe(true);
        lines.slice(first).forEach((l, i, rest) => {
          expect(l.startsWith('#')).toBe(false);
          expect(l.endsWith(' \\')).toBe(i < rest.length - 1);
        });
        expect(s).not.toMatch(/undefined|NaN|null|Infinity/);
      }
    }
  });
});
