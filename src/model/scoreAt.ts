// The reward head's read positions: a reward model scores row b at one position t = scoreAt[b]
// (its last real token). Forward gathers those rows of the per-position outputs; backward scatters
// ∂L/∂score back as a gather from a padded copy — every other position reads the zero row B — so
// no scatter-add is needed. Shared by every family that carries the reward head.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { gatherRows } from '../ops/slice.ts';

/** Host indices of scoreAt over (B, S) rows: gather (B) = b·S + t, scatter (B·S) = b at those rows, B elsewhere. */
export function scoreAtIndices(scoreAt: ArrayLike<number> | undefined, B: number, S: number): { gather: Int32Array; scatter: Int32Array } {
  if (!scoreAt || scoreAt.length !== B) throw new Error(`reward head: scoreAt must give one position per row (${B})`);
  const gather = new Int32Array(B);
  const scatter = new Int32Array(B * S).fill(B);
  for (let b = 0; b < B; b++) {
    const t = scoreAt[b];
    if (!Number.isInteger(t) || t < 0 || t >= S) throw new Error(`reward head: scoreAt[${b}] = ${t} is outside [0, ${S})`);
    gather[b] = b * S + t;
    scatter[b * S + t] = b;
  }
  return { gather, scatter };
}

/** ∂L/∂outputs (B·S, 1) of every position from ∂L/∂scores (B): the read rows get their row's gradient, all others 0. */
export function scatterScoreGrads(be: Backend, gradScores: Tensor, scatterIndex: Tensor): Tensor {
  const B = gradScores.shape[0];
  return be.scope(() => {
    const padded = be.zeros([B + 1, 1]); // (B + 1, 1): row B stays 0
    be.copy(gradScores, be.view(padded, 0, [B]));
    return gatherRows(be, { x: padded, index: scatterIndex });
  });
}
