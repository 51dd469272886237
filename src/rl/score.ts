// Sequence scores: the task's rule (or a learned reward model's raw output), clipped to
// ±scoreClip, then noEosPenalty added to responses that never emitted EOS (after the clip, so the
// penalty always shows even for a clipped score), then DAPO's overlong penalty when it is on.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { lastTokenPositions } from '../model/gpt.ts';
import type { CharTokenizer } from '../model/tokenizer.ts';
import type { Task, TaskSample } from '../tasks/task.ts';
import type { PpoConfig } from './config.ts';
import { overlongPenalties } from './dapo.ts';
import { checkFinite } from './nonFinite.ts';
import { type RewardSandbox, scoreWithFunction } from './rewardFunction/sandbox.ts';
import { decodeSamples, responseLength, type RolloutBatch, type RolloutTensors, type SampledRollout } from './rollout.ts';

export function finalScores(raw: ArrayLike<number>, samples: TaskSample[], scoreClip: number, noEosPenalty: number): Float64Array {
  return Float64Array.from(samples, (s, b) => {
    const x = raw[b];
    // A NaN score (e.g. a broken reward model) must not poison the advantages: treat it as 0.
    const clipped = Number.isFinite(x) ? Math.min(scoreClip, Math.max(-scoreClip, x)) : 0;
    return clipped + (s.endedWithEos ? 0 : noEosPenalty);
  });
}

export function ruleScores(task: Task, samples: TaskSample[]): Float64Array {
  return Float64Array.from(samples, (s) => task.ruleScore(s));
}

/** A learned reward model: one scalar per sequence read at `lastIndex[b]` (the EOS / last token). */
export interface RewardScorer {
  score(sequences: Tensor, attnMask: Tensor, positions: Tensor, lastIndex: ArrayLike<number>): Tensor; // (B)
}

export interface ScoringSetup {
  be: Backend;
  cfg: PpoConfig;
  task: Task;
  tok: CharTokenizer;
  rewardModel: RewardScorer | undefined;
  /** The interpreter a written reward function runs in (rewardSource "function"). */
  rewardSandbox: RewardSandbox | undefined;
}

/**
 * Scores of a rollout: task rule, reward model or written function, clipped, EOS penalty, DAPO
 * overlong penalty. A written function that fails on a sample throws RewardFunctionError before
 * anything is computed from the scores, so the iteration changes nothing.
 */
export async function scoreRollout(s: ScoringSetup, { batch: r, device }: SampledRollout, iter: number): Promise<{ samples: TaskSample[]; scores: Float64Array }> {
  const { cfg } = s;
  // Checked before decoding: NaN logits can sample ids the tokenizer would refuse.
  checkFinite('rollout', iter, [['sampler_logprobs', r.logprobs]]);
  const samples = decodeSamples(r, s.tok);
  const raw =
    cfg.rewardSource === 'model'
      ? await modelScores(s.be, s.rewardModel!, r, device)
      : cfg.rewardSource === 'function'
        ? scoreWithFunction(s.rewardSandbox!, cfg.rewardFunction, samples)
        : ruleScores(s.task, samples);
  const scores = finalScores(raw, samples, cfg.scoreClip, cfg.noEosPenalty);
  if (cfg.overlongBuffer > 0) {
    const lengths = Array.from({ length: r.B }, (_, b) => responseLength(r, b));
    const pen = overlongPenalties(lengths, cfg.maxResponseLength, cfg.overlongBuffer, cfg.overlongPenalty);
    for (let b = 0; b < r.B; b++) scores[b] += pen[b];
  }
  checkFinite('rollout', iter, [['reward_scores', scores]]);
  return { samples, scores };
}

/**
 * Learned reward: read at the last real token of each sequence (the EOS when there is one), one
 * readback. The sampler's tensors are scored where they are; a host batch is uploaded.
 */
async function modelScores(be: Backend, rm: RewardScorer, r: RolloutBatch, device: RolloutTensors | null): Promise<Float64Array> {
  const S = r.P + r.A;
  const out = be.scope(() => {
    const seq = device?.sequences ?? be.tensor(r.sequences, [r.B, S], 'i32');
    const attn = device?.attnMask ?? be.tensor(r.attnMask, [r.B, S]);
    const pos = device?.positions ?? be.tensor(r.positions, [r.B, S], 'i32');
    return rm.score(seq, attn, pos, lastTokenPositions(r.attnMask, r.B, S)); // (B)
  });
  const [scores] = await be.readMany([out]);
  be.dispose(out);
  return scores;
}
