// One captured iteration under the names the students read in the frameworks' code: OpenRLHF's
// `Experience` dataclass (openrlhf/trainer/ppo_utils/experience_maker.py) and the batch keys of
// verl's `DataProto` (verl/trainer/ppo/ray_trainer.py, core_algos.py). Every tensor is the trainer's
// own, as the trace captured it; which of our arrays each name holds is said once, here.
import type { IterationTrace } from './trace.ts';

/** A dimension of a field's shape: B responses, S = P + A sequence positions, A response positions. */
export type Dim = 'B' | 'S' | 'A';

export type Framework = 'openrlhf' | 'verl';

/** What a field holds, as a key of the page's words (inspect:experience.what.<what>). */
export type FieldWhat =
  | 'index'
  | 'sequences'
  | 'attentionMask'
  | 'actionMask'
  | 'responses'
  | 'oldLogprobs'
  | 'refLogprobs'
  | 'rolloutLogprobs'
  | 'values'
  | 'returns'
  | 'advantages'
  | 'kl'
  | 'rewards'
  | 'scores'
  | 'tokenScores'
  | 'tokenRewards'
  | 'responseLength';

export interface ExperienceField {
  /** The framework's own name: `action_log_probs`, `info["response_length"]`, `ref_log_prob`. */
  name: string;
  shape: readonly Dim[];
  what: FieldWhat;
  kind: 'int' | 'mask' | 'float';
  /** The whole tensor, row-major over `shape`; null where the framework holds None here (no critic, no π_rollout kept). */
  data: ArrayLike<number> | null;
}

/** The sizes of B, S and A in this trace (S is A alone when the trace has no prompt tokens). */
export function dimSizes(trace: IterationTrace): Record<Dim, number> {
  const P = trace.promptTokens ? trace.promptTokens.length / trace.B : 0;
  return { B: trace.B, A: trace.A, S: P + trace.A };
}

/** (B, P) | (B, A) joined row by row into (B, P + A). */
function joinRows(left: ArrayLike<number>, right: ArrayLike<number>, B: number, A: number): Float64Array {
  const P = left.length / B;
  const out = new Float64Array(B * (P + A));
  for (let b = 0; b < B; b++) {
    for (let p = 0; p < P; p++) out[b * (P + A) + p] = left[b * P + p];
    for (let a = 0; a < A; a++) out[b * (P + A) + P + a] = right[b * A + a];
  }
  return out;
}

/** (B, A) with the score at each response's last action token, 0 elsewhere (verl's token_level_scores). */
export function tokenLevelScores(trace: IterationTrace): Float64Array {
  const { B, A, actionMask: mask } = trace;
  const out = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    for (let a = A - 1; a >= 0; a--) {
      if (mask[b * A + a] !== 0) {
        out[b * A + a] = trace.scores[b];
        break;
      }
    }
  }
  return out;
}

/** Action tokens per response (B). */
export function responseLengths(trace: IterationTrace): Float64Array {
  const { B, A, actionMask: mask } = trace;
  return Float64Array.from({ length: B }, (_, b) => {
    let n = 0;
    for (let a = 0; a < A; a++) n += mask[b * A + a] !== 0 ? 1 : 0;
    return n;
  });
}

const critic = (trace: IterationTrace) => trace.knobs.advantageEstimator === 'gae';

/**
 * OpenRLHF's Experience of this iteration. action_log_probs and the other per-token fields are
 * (B, A): OpenRLHF cuts them to the action positions, as we store them. `rewards` is the scalar
 * reward each response got and `scores` the same number (OpenRLHF keeps a second copy to filter
 * on); `kl` the per-token KL of the reward's estimator; `info` the per-response statistics.
 */
export function openrlhfExperience(trace: IterationTrace): ExperienceField[] {
  const { B, A } = trace;
  const seq = trace.promptTokens ? joinRows(trace.promptTokens, trace.responseTokens, B, A) : null;
  const attn = trace.promptTokens && trace.promptMask ? joinRows(trace.promptMask, trace.actionMask, B, A) : null;
  return [
    { name: 'index', shape: ['B'], what: 'index', kind: 'int', data: Float64Array.from({ length: B }, (_, b) => b) },
    { name: 'sequences', shape: ['B', 'S'], what: 'sequences', kind: 'int', data: seq },
    { name: 'attention_mask', shape: ['B', 'S'], what: 'attentionMask', kind: 'mask', data: attn },
    { name: 'action_mask', shape: ['B', 'A'], what: 'actionMask', kind: 'mask', data: trace.actionMask },
    { name: 'action_log_probs', shape: ['B', 'A'], what: 'oldLogprobs', kind: 'float', data: trace.oldLogprobs },
    { name: 'base_action_log_probs', shape: ['B', 'A'], what: 'refLogprobs', kind: 'float', data: trace.refLogprobs },
    { name: 'rollout_log_probs', shape: ['B', 'A'], what: 'rolloutLogprobs', kind: 'float', data: trace.rolloutLogprobs },
    { name: 'values', shape: ['B', 'A'], what: 'values', kind: 'float', data: critic(trace) ? trace.values : null },
    { name: 'returns', shape: ['B', 'A'], what: 'returns', kind: 'float', data: trace.stored.returns },
    { name: 'advantages', shape: ['B', 'A'], what: 'advantages', kind: 'float', data: trace.stored.advantages },
    { name: 'kl', shape: ['B', 'A'], what: 'kl', kind: 'float', data: trace.stored.kl },
    { name: 'rewards', shape: ['B'], what: 'rewards', kind: 'float', data: trace.scores },
    { name: 'scores', shape: ['B'], what: 'scores', kind: 'float', data: trace.scores },
    { name: 'info["response_length"]', shape: ['B'], what: 'responseLength', kind: 'int', data: responseLengths(trace) },
  ];
}

/**
 * verl's DataProto batch keys of this iteration (`data.batch[...]`): token_level_scores carries the
 * score at the last response token, token_level_rewards the same minus β·KL_t per token
 * (apply_kl_penalty), which is the r_t our trainer stores.
 */
export function verlBatch(trace: IterationTrace): ExperienceField[] {
  return [
    { name: 'responses', shape: ['B', 'A'], what: 'responses', kind: 'int', data: trace.responseTokens },
    { name: 'response_mask', shape: ['B', 'A'], what: 'actionMask', kind: 'mask', data: trace.actionMask },
    { name: 'old_log_probs', shape: ['B', 'A'], what: 'oldLogprobs', kind: 'float', data: trace.oldLogprobs },
    { name: 'ref_log_prob', shape: ['B', 'A'], what: 'refLogprobs', kind: 'float', data: trace.refLogprobs },
    { name: 'rollout_log_probs', shape: ['B', 'A'], what: 'rolloutLogprobs', kind: 'float', data: trace.rolloutLogprobs },
    { name: 'values', shape: ['B', 'A'], what: 'values', kind: 'float', data: critic(trace) ? trace.values : null },
    { name: 'token_level_scores', shape: ['B', 'A'], what: 'tokenScores', kind: 'float', data: tokenLevelScores(trace) },
    { name: 'token_level_rewards', shape: ['B', 'A'], what: 'tokenRewards', kind: 'float', data: trace.stored.rewards },
    { name: 'advantages', shape: ['B', 'A'], what: 'advantages', kind: 'float', data: trace.stored.advantages },
    { name: 'returns', shape: ['B', 'A'], what: 'returns', kind: 'float', data: trace.stored.returns },
  ];
}

/** The fields of one framework's name for the experience. */
export function experienceFields(trace: IterationTrace, framework: Framework): ExperienceField[] {
  return framework === 'openrlhf' ? openrlhfExperience(trace) : verlBatch(trace);
}

/** A field's shape with this batch's sizes: "(B, A) = (8, 16)". */
export function shapeText(field: ExperienceField, sizes: Record<Dim, number>): string {
  return `(${field.shape.join(', ')}) = (${field.shape.map((d) => sizes[d]).join(', ')})`;
}

/** One response's row of a field: its B-th slice (a single number for a (B) field); null for a None field. */
export function fieldRow(field: ExperienceField, sizes: Record<Dim, number>, row: number): number[] | null {
  if (!field.data) return null;
  const width = field.shape.length === 1 ? 1 : sizes[field.shape[1]];
  return Array.from({ length: width }, (_, i) => field.data![row * width + i]);
}
