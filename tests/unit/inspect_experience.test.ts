// The batch under the frameworks' names: every field of OpenRLHF's Experience and of verl's
// DataProto batch has its shape at this batch size, holds the trace's own tensor (the one the
// capture test holds to the float64 recomputation), and gives one response's row of it.
import { describe, expect, it } from 'vitest';
import {
  dimSizes,
  fieldRow,
  openrlhfExperience,
  recomputeTrace,
  shapeText,
  tokenLevelScores,
  verlBatch,
  type ExperienceField,
  type IterationTrace,
} from '../../src/rl/inspect/index.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { expectClose, rng } from '../helpers/random.ts';

/** A trace with left-padded prompts of width P, as the trainer captures them. */
function withPrompts(trace: IterationTrace, P: number): IterationTrace {
  const promptTokens = Int32Array.from({ length: trace.B * P }, (_, i) => 3 + (i % 7));
  const promptMask = Float64Array.from({ length: trace.B * P }, (_, i) => (i % P < (i / P) % 2 ? 0 : 1));
  return { ...trace, promptTokens, promptMask };
}

const byName = (fields: ExperienceField[], name: string) => fields.find((f) => f.name === name)!;

describe('openrlhfExperience', () => {
  const trace = withPrompts(buildTrace(rng(4301), { knobs: { tisCap: 2 } }), 5);
  const fields = openrlhfExperience(trace);
  const sizes = dimSizes(trace);

  it('names the Experience dataclass’s fields, in its order, each with its shape at this batch size', () => {
    expect(fields.map((f) => f.name)).toEqual([
      'index',
      'sequences',
      'attention_mask',
      'action_mask',
      'action_log_probs',
      'base_action_log_probs',
      'rollout_log_probs',
      'values',
      'returns',
      'advantages',
      'kl',
      'rewards',
      'scores',
      'info["response_length"]',
    ]);
    expect(sizes).toEqual({ B: 12, A: 6, S: 11 });
    expect(shapeText(byName(fields, 'action_log_probs'), sizes)).toBe('(B, A) = (12, 6)');
    expect(shapeText(byName(fields, 'sequences'), sizes)).toBe('(B, S) = (12, 11)');
    expect(shapeText(byName(fields, 'rewards'), sizes)).toBe('(B) = (12)');
    for (const f of fields) {
      const n = f.shape.reduce((p, d) => p * sizes[d], 1);
      expect(f.data?.length, f.name).toBe(n);
    }
  });

  it('holds the trace’s own tensors, equal to the recomputation where it recomputes them', () => {
    const rec = recomputeTrace(trace);
    expect(byName(fields, 'action_log_probs').data).toBe(trace.oldLogprobs);
    expect(byName(fields, 'base_action_log_probs').data).toBe(trace.refLogprobs);
    expect(byName(fields, 'values').data).toBe(trace.values);
    expect(byName(fields, 'advantages').data).toBe(trace.stored.advantages);
    expectClose(byName(fields, 'advantages').data!, rec.advantages, 1e-12, 1e-12, 'advantages');
    expectClose(byName(fields, 'returns').data!, rec.returns, 1e-12, 1e-12, 'returns');
    expectClose(byName(fields, 'kl').data!, rec.kl, 1e-12, 1e-12, 'kl');
    expect(Array.from(byName(fields, 'rewards').data!)).toEqual(Array.from(trace.scores));
  });

  it('gives one response’s row: the prompt then the response for sequences and attention_mask', () => {
    const row = 3;
    const P = sizes.S - sizes.A;
    const seq = fieldRow(byName(fields, 'sequences'), sizes, row)!;
    expect(seq).toEqual([...trace.promptTokens!.subarray(row * P, row * P + P), ...trace.responseTokens.subarray(row * 6, row * 6 + 6)]);
    const attn = fieldRow(byName(fields, 'attention_mask'), sizes, row)!;
    expect(attn).toEqual([...trace.promptMask!.subarray(row * P, row * P + P), ...trace.actionMask.subarray(row * 6, row * 6 + 6)]);
    expect(fieldRow(byName(fields, 'advantages'), sizes, row)).toEqual(Array.from(trace.stored.advantages.subarray(row * 6, row * 6 + 6)));
    expect(fieldRow(byName(fields, 'scores'), sizes, row)).toEqual([trace.scores[row]]);
    expect(fieldRow(byName(fields, 'info["response_length"]'), sizes, row)).toEqual([trace.actionMask.subarray(row * 6, row * 6 + 6).reduce((a, b) => a + b, 0)]);
  });

  it('is None where the framework holds none: no critic for a group estimator, no π_rollout, no prompts in an older trace', () => {
    const group = buildTrace(rng(4302), { knobs: { advantageEstimator: 'rloo', whiten: false } });
    const f = openrlhfExperience({ ...group, rolloutLogprobs: null });
    for (const name of ['values', 'rollout_log_probs', 'sequences', 'attention_mask']) expect(fieldRow(byName(f, name), dimSizes(group), 0), name).toBeNull();
    expect(dimSizes(group).S).toBe(group.A);
  });
});

describe('verlBatch', () => {
  it('names the DataProto batch keys; token_level_rewards = token_level_scores − β·KL_t = the stored r_t', () => {
    const trace = buildTrace(rng(4303), { knobs: { klCoef: 0.2 } });
    const fields = verlBatch(trace);
    expect(fields.map((f) => f.name)).toEqual([
      'responses',
      'response_mask',
      'old_log_probs',
      'ref_log_prob',
      'rollout_log_probs',
      'values',
      'token_level_scores',
      'token_level_rewards',
      'advantages',
      'returns',
    ]);
    const scores = tokenLevelScores(trace);
    const rewards = byName(fields, 'token_level_rewards').data!;
    const rec = recomputeTrace(trace);
    const want = Float64Array.from(scores, (s, i) => s + rec.klReward[i]);
    expectClose(rewards, want, 1e-12, 1e-12, 'token_level_rewards');
    // The score sits at each response's last action token only.
    for (let b = 0; b < trace.B; b++) {
      const row = Array.from(scores.subarray(b * trace.A, (b + 1) * trace.A));
      expect(row.filter((x) => x !== 0).length).toBeLessThanOrEqual(1);
      expect(row.reduce((a, x) => a + x, 0)).toBe(trace.actionMask.subarray(b * trace.A, (b + 1) * trace.A).some((m) => m !== 0) ? trace.scores[b] : 0);
    }
  });
});
