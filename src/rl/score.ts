// Sequence scores: the task's rule (or a learned reward model's raw output), clipped to
// ±scoreClip, then noEosPenalty added to responses that never emitted EOS (after the clip, so the
// penalty always shows even for a clipped score).
import type { Task, TaskSample } from '../tasks/task.ts';

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
