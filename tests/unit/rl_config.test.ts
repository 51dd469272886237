import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig } from '../../src/rl/config.ts';
import { buildConfig } from '../../src/rl/configMerge.ts';
import { finalScores } from '../../src/rl/score.ts';

describe('PPO config validation', () => {
  it('accepts the defaults', () => {
    expect(validateConfig({ ...DEFAULT_CONFIG })).toEqual([]);
  });

  it('lists every problem at once, naming field, value and allowed range', () => {
    const problems = validateConfig({ ...DEFAULT_CONFIG, klCoef: -1, lam: 2, clipLow: 0, lossAgg: 'sum' as never, bogus: 3 });
    const fields = problems.map((p) => p.field).sort();
    expect(fields).toEqual(['bogus', 'clipLow', 'klCoef', 'lam', 'lossAgg']);
    const lam = problems.find((p) => p.field === 'lam')!;
    expect(lam.value).toBe(2);
    expect(lam.message).toMatch(/lam = 2/);
    expect(lam.message).toMatch(/from 0 to 1/);
    expect(problems.find((p) => p.field === 'lossAgg')!.message).toMatch(/token-mean/);
    expect(problems.find((p) => p.field === 'bogus')!.message).toMatch(/unknown setting/);
  });

  it('checks cross-field constraints', () => {
    const p = validateConfig({ ...DEFAULT_CONFIG, promptsPerBatch: 3, samplesPerPrompt: 1, miniBatches: 2, advantageEstimator: 'group_norm' });
    expect(p.map((x) => x.field).sort()).toEqual(['miniBatches', 'samplesPerPrompt']);
  });

  it('opo and grpo_passk need groups of at least 2; remax (a greedy baseline) takes one sample per prompt; all three keep γ = 1', () => {
    const one = { ...DEFAULT_CONFIG, promptsPerBatch: 4, samplesPerPrompt: 1, miniBatches: 2 };
    for (const e of ['opo', 'grpo_passk'] as const) {
      const p = validateConfig({ ...one, advantageEstimator: e });
      expect(p.map((x) => x.field)).toEqual(['samplesPerPrompt']);
      expect(p[0].detail).toEqual({ kind: 'groupSamples', estimator: e });
      expect(validateConfig({ ...one, samplesPerPrompt: 2, advantageEstimator: e })).toEqual([]);
    }
    expect(validateConfig({ ...one, advantageEstimator: 'remax' })).toEqual([]);
    for (const e of ['opo', 'grpo_passk', 'remax'] as const)
      expect(validateConfig({ ...DEFAULT_CONFIG, advantageEstimator: e, gamma: 0.9 }).map((x) => x.field)).toEqual(['gamma']);
  });

  it('merges file and flags over the defaults and reports every problem', () => {
    const ok = buildConfig({ klCoef: 0.2 }, { task: 'sentiment', seed: '5' });
    expect(ok.problems).toEqual([]);
    expect(ok.config).toEqual({ ...DEFAULT_CONFIG, klCoef: 0.2, task: 'sentiment', seed: 5 });
    const bad = buildConfig({ gamma: 3, topP: 0 }, { task: 'chess', seed: 'x' });
    expect(bad.problems).toHaveLength(4);
    expect(bad.problems.join('\n')).toMatch(/gamma = 3/);
    expect(bad.problems.join('\n')).toMatch(/task = "chess"/);
    expect(buildConfig([1, 2], {}).problems[0]).toMatch(/JSON object/);
  });
});

describe('score clipping', () => {
  it('clips to ±scoreClip, adds the no-EOS penalty after the clip and zeroes NaN', () => {
    const samples = [true, false, true, false].map((e) => ({ prompt: 'p', response: 'r', endedWithEos: e }));
    expect(Array.from(finalScores([50, -50, NaN, 0.5], samples, 10, -1))).toEqual([10, -11, 0, -0.5]);
  });
});

describe('validation of the verl loss modes, DAPO and TIS knobs', () => {
  it('group estimators reject γ < 1 (field, value, allowed); GAE and REINFORCE keep discounting', () => {
    for (const est of ['reinforce_baseline', 'group_norm', 'rloo', 'dr_grpo'] as const) {
      const p = validateConfig({ ...DEFAULT_CONFIG, advantageEstimator: est, gamma: 0.99 });
      expect(p).toHaveLength(1);
      expect(p[0].field).toBe('gamma');
      expect(p[0].value).toBe(0.99);
      expect(p[0].message).toMatch(/gamma = 0\.99.*allowed: 1/);
    }
    expect(validateConfig({ ...DEFAULT_CONFIG, advantageEstimator: 'gae', gamma: 0.99 })).toEqual([]);
    // verl's reinforce_plus_plus and OpenRLHF's reinforce both discount (tests/unit/group_kl_order.test.ts).
    expect(validateConfig({ ...DEFAULT_CONFIG, advantageEstimator: 'reinforce', gamma: 0.99 })).toEqual([]);
  });

  it('new knobs: choices and ranges, k1_clamped only in the reward, DAPO cross-field checks', () => {
    expect(
      validateConfig({ ...DEFAULT_CONFIG, lossMode: 'gspo', normScale: 'verl', lossAgg: 'seq-mean-token-sum', klEstimator: 'k1_clamped', klLossEstimator: 'k3+', tisCap: 2 }),
    ).toEqual([]);
    const bad = validateConfig({
      ...DEFAULT_CONFIG,
      lossMode: 'ppo' as never,
      normScale: 'x' as never,
      klLossEstimator: 'k1_clamped',
      tisCap: 0.5,
      maxExtraRollouts: 17,
      overlongPenalty: -1,
    });
    expect(bad.map((p) => p.field).sort()).toEqual(['klLossEstimator', 'lossMode', 'maxExtraRollouts', 'normScale', 'overlongPenalty', 'tisCap']);
    expect(bad.find((p) => p.field === 'klLossEstimator')!.message).toMatch(/k3\+/);
    const ds = validateConfig({ ...DEFAULT_CONFIG, advantageEstimator: 'gae', dynamicSampling: true, samplesPerPrompt: 1, promptsPerBatch: 8, miniBatches: 2 });
    expect(ds.map((p) => p.field)).toEqual(['samplesPerPrompt']);
    const ol = validateConfig({ ...DEFAULT_CONFIG, maxResponseLength: 8, overlongBuffer: 8 });
    expect(ol.map((p) => p.field)).toEqual(['overlongBuffer']);
    expect(ol[0].message).toMatch(/0 \(off\) to 7/);
  });

  it('the KL target is per token (verl default 0.1) and the defaults keep the fixed controller', () => {
    expect(DEFAULT_CONFIG.klTarget).toBe(0.1);
    expect(DEFAULT_CONFIG.klController).toBe('fixed');
    expect(validateConfig({ ...DEFAULT_CONFIG, klTarget: 11 })[0].message).toMatch(/from 0 \(exclusive\) to 10/);
  });
});
