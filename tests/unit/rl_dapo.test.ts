// DAPO's host pieces, the KL controller's input scale, the skipped-step count and the batch
// concatenation dynamic sampling uses.
import { describe, expect, it } from 'vitest';
import { informativeGroups, overlongPenalties } from '../../src/rl/dapo.ts';
import { klCoefsApplied, klControllerFor, klTokenMean } from '../../src/rl/klController.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { rolloutOldMetrics, updateMetrics } from '../../src/rl/metrics.ts';
import { concatRows, type RolloutBatch } from '../../src/rl/rollout.ts';

describe('DAPO', () => {
  it('soft overlong penalty: 0 up to L_max − L_cache, then linear down to −factor at L_max', () => {
    expect(Array.from(overlongPenalties([1, 6, 7, 8, 10], 10, 4, 2))).toEqual([0, 0, -0.5, -1, -2]);
    expect(Array.from(overlongPenalties([10, 3], 10, 0, 2))).toEqual([0, 0]); // off
  });

  it('keeps groups whose scores differ, in first-seen order', () => {
    const scores = [1, 1, 0, 1, 0.5, 0.5, 0, 0];
    const group = [0, 0, 1, 1, 2, 2, 3, 3];
    expect(informativeGroups(scores, group)).toEqual({ kept: [1], dropped: [0, 2, 3] });
    expect(informativeGroups([0, 1, 1, 0], [5, 5, 2, 2])).toEqual({ kept: [5, 2], dropped: [] });
  });

  it('concatRows gathers rows from several rollouts and renumbers groups', () => {
    const mk = (B: number, base: number, group: number[]): RolloutBatch => ({
      B,
      P: 1,
      A: 2,
      prompts: group.map((g) => `p${base + g}`),
      group: Int32Array.from(group),
      sequences: Int32Array.from({ length: B * 3 }, (_, i) => base + i),
      attnMask: new Float32Array(B * 3).fill(1),
      positions: Int32Array.from({ length: B * 3 }, (_, i) => i % 3),
      finished: Int32Array.from({ length: B }, (_, b) => b % 2),
      logprobs: Float32Array.from({ length: B * 2 }, (_, i) => -(base + i)),
    });
    const a = mk(4, 0, [0, 0, 1, 1]);
    const b = mk(4, 100, [0, 0, 1, 1]);
    const r = concatRows(
      [a, b],
      [
        { part: 1, row: 2 },
        { part: 1, row: 3 },
        { part: 0, row: 0 },
        { part: 0, row: 1 },
      ],
    );
    expect(r.B).toBe(4);
    expect(Array.from(r.group)).toEqual([0, 0, 1, 1]);
    expect(r.prompts).toEqual(['p101', 'p101', 'p0', 'p0']);
    expect(Array.from(r.sequences.subarray(0, 3))).toEqual([106, 107, 108]);
    expect(Array.from(r.sequences.subarray(6, 9))).toEqual([0, 1, 2]);
    expect(Array.from(r.logprobs!.subarray(0, 2))).toEqual([-104, -105]);
    expect(Array.from(r.finished)).toEqual([0, 1, 0, 1]);
  });
});

describe('KL controller input and applied coefficients', () => {
  it('kl_token_mean: mean over sequences of per-sequence token means (empty rows count 0)', () => {
    const kl = [1, 3, 0, 2, 0, 0, 9, 9, 9];
    const mask = [1, 1, 0, 1, 0, 0, 0, 0, 0];
    expect(klTokenMean(kl, mask, 3, 3)).toBeCloseTo((2 + 2 + 0) / 3, 15);
  });

  it('β goes to the reward, or to the KL loss when the KL is only in the loss and the controller adapts', () => {
    const base = { ...DEFAULT_CONFIG, klCoef: 0.3, klLossCoef: 0.02 };
    const inReward = { ...base, klController: 'adaptive' as const };
    expect(klCoefsApplied(inReward, klControllerFor(inReward))).toEqual({ rewardBeta: 0.3, lossCoef: 0 });
    const lossOnly = { ...base, klController: 'adaptive' as const, klInReward: false, useKlLoss: true };
    expect(klCoefsApplied(lossOnly, klControllerFor(lossOnly))).toEqual({ rewardBeta: 0, lossCoef: 0.02 });
    const fixedLoss = { ...base, klInReward: false, useKlLoss: true };
    expect(klCoefsApplied(fixedLoss, klControllerFor(fixedLoss))).toEqual({ rewardBeta: 0, lossCoef: 0.02 });
    const both = { ...base, klController: 'adaptive' as const, useKlLoss: true };
    expect(klCoefsApplied(both, klControllerFor(both))).toEqual({ rewardBeta: 0.3, lossCoef: 0.02 });
  });
});

describe('update metrics', () => {
  it('counts skipped (non-finite norm) steps and averages only the finite norms', () => {
    const one = (x: number) => Float64Array.of(x);
    const m = updateMetrics({
      policy: [Float64Array.of(1, 0, 0, 0), Float64Array.of(3, 0, 0, 0)],
      entropy: [one(1), one(1)],
      klLoss: [],
      actorGradNorm: [one(2), one(NaN)],
      value: [Float64Array.of(1, 0)],
      criticGradNorm: [one(Infinity)],
    });
    expect(m.actor_skipped_steps).toBe(1);
    expect(m.critic_skipped_steps).toBe(1);
    expect(m.actor_grad_norm).toBe(2);
    expect(m.critic_grad_norm).toBe(0);
  });

  it('rollout-vs-old mismatch: k1 of KL(π_rollout‖π_old) and the largest |Δ log π| under the mask', () => {
    const old = [-1, -2, -3, -4];
    const rollout = [-0.5, -2.5, -3, -10];
    const mask = [1, 1, 1, 0];
    const m = rolloutOldMetrics(old, rollout, mask);
    expect(m.rollout_old_kl).toBeCloseTo((0.5 - 0.5 + 0) / 3, 15);
    expect(m.rollout_old_max_abs_diff).toBe(0.5);
  });
});
