// The NaN/Inf guard's verdicts. Before each iteration the trainer's whole moving state is copied
// on the device (TrainerSlot.guardNextIteration: actor, critic, both AdamW moments, β, the
// counter). A non-finite value — the trainer's NonFiniteError naming the stage it appeared in, or
// a non-finite metric — puts that copy back (the reference never moves) and pauses with a report:
// iteration, stage, quantity and the knob most likely at fault (nanAdvice.ts). Nothing of that
// iteration is posted, so no chart changes.
import type { PpoConfig } from '../rl/config.ts';
import { NonFiniteError, stageOfMetric, type Stage } from '../rl/nonFinite.ts';
import { nanAdvice } from './nanAdvice.ts';
import type { WorkerToPage } from './protocol.ts';

/** Where a non-finite value appeared: iteration, stage, and the quantity with its value. */
export interface NonFinite {
  iter: number;
  stage: Stage;
  quantity: string;
  value: number;
}

/** The first non-finite metric (any of them: a NaN anywhere stops the run), or null. */
function badMetric(metrics: Record<string, number>): { name: string; value: number } | null {
  for (const [name, v] of Object.entries(metrics)) if (!Number.isFinite(v)) return { name, value: v };
  return null;
}

/** What a failed iteration's error says went non-finite, or null for any other failure. */
export function nonFiniteOfError(e: unknown): NonFinite | null {
  return e instanceof NonFiniteError ? { iter: e.iter, stage: e.stage, quantity: e.quantity, value: e.value } : null;
}

/** What a finished iteration's metrics say went non-finite, or null when all are finite. */
export function nonFiniteOfMetrics(iter: number, metrics: Record<string, number>): NonFinite | null {
  const bad = badMetric(metrics);
  return bad && { iter, stage: stageOfMetric(bad.name), quantity: bad.name, value: bad.value };
}

/** The guard's pause: the state from before iteration `iter` is back; where, what, and the knob to change. */
export function nonFinitePause(nf: NonFinite, config: PpoConfig): Extract<WorkerToPage, { type: 'paused' }> {
  const { iter, stage, quantity, value } = nf;
  return {
    type: 'paused',
    reason: `non-finite ${quantity} = ${value} in iteration ${iter} (${stage} stage); the state from before that iteration was restored`,
    stage,
    nonFinite: { iter, stage, quantity, value, advice: nanAdvice(quantity, config) },
  };
}
