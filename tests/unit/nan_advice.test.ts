// The NaN/Inf report: which stage a quantity belongs to, the first non-finite (masked) entry, and
// the knob the page suggests (the rule in src/worker/nanAdvice.ts) for absurd values of each knob.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { checkFinite, firstNonFinite, NonFiniteError, stageOfMetric } from '../../src/rl/nonFinite.ts';
import { adviceText, nanAdvice } from '../../src/worker/nanAdvice.ts';

const cfg = (over: Partial<PpoConfig>): PpoConfig => ({ ...DEFAULT_CONFIG, ...over });

describe('non-finite detection', () => {
  it('finds the first non-finite entry, skipping masked-out positions', () => {
    expect(firstNonFinite([1, 2, 3])).toBeNull();
    expect(firstNonFinite([1, NaN, Infinity])).toBeNaN();
    expect(firstNonFinite([1, NaN, -Infinity], [1, 0, 1])).toBe(-Infinity);
    expect(firstNonFinite([NaN, 2], [0, 1])).toBeNull();
  });

  it('checkFinite throws a NonFiniteError naming the stage, the first bad array and the iteration', () => {
    expect(() =>
      checkFinite(
        'experience',
        3,
        [
          ['values', [1, 2]],
          ['kl', [0, 0]],
        ],
        [1, 1],
      ),
    ).not.toThrow();
    let err: unknown = null;
    try {
      checkFinite(
        'experience',
        3,
        [
          ['values', [1, 2]],
          ['kl', [0, NaN]],
          ['returns', [Infinity, 0]],
        ],
        [1, 1],
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NonFiniteError);
    expect(err).toMatchObject({ stage: 'experience', quantity: 'kl', iter: 3 });
    expect((err as Error).message).toBe('non-finite kl = NaN in the experience stage of iteration 3');
    // a mask of another length (per-sequence arrays) is not applied
    expect(() => checkFinite('rollout', 0, [['reward_scores', [NaN]]], [0, 0])).toThrow(/reward_scores = NaN/);
  });

  it('maps each metric to the stage that computes it', () => {
    for (const m of ['reward_mean', 'reward_min', 'response_length_mean', 'eos_rate', 'filtered_groups']) expect(stageOfMetric(m), m).toBe('rollout');
    for (const m of ['kl', 'kl_token_mean', 'advantages_mean', 'returns_mean', 'explained_variance', 'values_mean', 'beta']) expect(stageOfMetric(m), m).toBe('experience');
    for (const m of ['policy_loss', 'value_loss', 'kl_loss', 'actor_grad_norm', 'critic_grad_norm', 'clipfrac', 'approx_kl', 'entropy', 'actor_skipped_steps'])
      expect(stageOfMetric(m), m).toBe('update');
  });
});

describe('knob advice', () => {
  it('an absurd learning rate is named for rollout and update blow-ups, with the default as the fix', () => {
    for (const q of ['sampler_logprobs', 'reward_scores', 'policy_loss', 'actor_grad_norm', 'entropy', 'old_logprobs']) {
      const a = nanAdvice(q, cfg({ actorLr: 1 }));
      expect(a.field, q).toBe('actorLr');
      expect(a.kind).toBe('learning rate');
      expect(a.excess).toBeCloseTo(1 / DEFAULT_CONFIG.actorLr);
      expect(a.suggested).toBe(DEFAULT_CONFIG.actorLr);
    }
    expect(adviceText(nanAdvice('policy_loss', cfg({ actorLr: 1 })))).toBe(
      `most likely the actor learning rate: actorLr = 1 (${1 / DEFAULT_CONFIG.actorLr}× its default ${DEFAULT_CONFIG.actorLr}); try actorLr = ${DEFAULT_CONFIG.actorLr}`,
    );
  });

  it('a wide clip range wins over a default learning rate for policy blow-ups', () => {
    const a = nanAdvice('policy_loss', cfg({ clipHigh: 10 }));
    expect(a).toMatchObject({ field: 'clipHigh', kind: 'clip range', value: 10, suggested: DEFAULT_CONFIG.clipHigh });
    expect(nanAdvice('policy_loss', cfg({ clipLow: 0.9 })).field).toBe('clipLow');
  });

  it('KL and advantage blow-ups point at β (in the reward or as a loss), else the learning rate', () => {
    expect(nanAdvice('kl', cfg({ klCoef: 10, klInReward: true })).field).toBe('klCoef');
    expect(nanAdvice('advantages', cfg({ klCoef: 10, klInReward: true })).kind).toBe('β');
    expect(nanAdvice('kl_loss', cfg({ klInReward: false, useKlLoss: true, klLossCoef: 5 })).field).toBe('klLossCoef');
    // β at its default, learning rate 100× its default: the learning rate
    expect(nanAdvice('kl', cfg({ actorLr: 100 * DEFAULT_CONFIG.actorLr })).field).toBe('actorLr');
  });

  it('critic quantities point at the critic learning rate', () => {
    for (const q of ['values', 'returns', 'value_loss', 'critic_grad_norm']) expect(nanAdvice(q, cfg({ criticLr: 0.5 })).field, q).toBe('criticLr');
  });

  it('with every knob at its default it names the usual culprit and suggests a tenth of it', () => {
    const a = nanAdvice('sampler_logprobs', DEFAULT_CONFIG);
    expect(a.field).toBe('actorLr');
    expect(a.suggested).toBeCloseTo(DEFAULT_CONFIG.actorLr / 10, 15);
    expect(adviceText(a)).toMatch(/\(default 0\.0001\); try actorLr = 0\.00001$/);
  });
});
