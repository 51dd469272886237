// The clipped tokens of an iteration: every clip badge the token table shows (a token clipped in
// one update step), each response's count by side, and the step from one clipped token to the
// next, so the inspector and the clipping view lead straight to them.
import { covStepSeed } from '../../reference/policyLoss.ts';
import { actorPolicyParams } from '../policyParams.ts';
import { gatherRows, type RecomputedTrace } from './recompute.ts';
import { policyTokenTerms, type ClipSide } from './tokenTerms.ts';
import type { IterationTrace } from './trace.ts';

export type ClippedSide = Exclude<ClipSide, 'none'>;

/** One clip badge: response `row`'s token `t`, clipped on `side` in update step `step` (index into the minibatches). */
export interface ClippedCell {
  row: number;
  t: number;
  step: number;
  side: ClippedSide;
  /** The advantage the step's loss used at the token (its sign picks the clipping view's panel). */
  advantage: number;
}

export interface ClipCounts {
  low: number;
  high: number;
  dual: number;
}

const byPosition = (a: ClippedCell, b: ClippedCell) => a.row - b.row || a.t - b.t || a.step - b.step;

/** Every clipped (token, update step) of a recomputed trace, ordered by response, position, then step. */
export function clippedCells(rec: RecomputedTrace): ClippedCell[] {
  const { A } = rec;
  const out: ClippedCell[] = [];
  rec.minibatches.forEach((mb, step) => {
    mb.rows.forEach((row, i) => {
      for (let t = 0; t < A; t++) {
        const side = mb.clipSide[i * A + t];
        if (side !== 'none') out.push({ row, t, step, side, advantage: rec.advantages[row * A + t] });
      }
    });
  });
  return out.sort(byPosition);
}

/**
 * The clipped tokens of one update step from the trace alone (no recomputation of the batch): the
 * step's own π_new against π_old with the advantages the device stored, under the trace's knobs and
 * the step's clip_cov seed, as recomputeTrace classifies them. The clipping view draws the last step.
 */
export function stepClippedCells(trace: IterationTrace, step: number): ClippedCell[] {
  const mb = trace.minibatches[step];
  if (!mb) return [];
  const { A } = trace;
  const n = mb.rows.length;
  const rows = (x: ArrayLike<number>) => gatherRows(x, A, mb.rows);
  const mask = rows(trace.stored.rsMask ?? trace.actionMask);
  const adv = rows(trace.stored.advantages);
  const params = actorPolicyParams(trace.knobs, covStepSeed(trace.knobs.seed ?? 0, trace.iter, mb.epoch, mb.index));
  const terms = policyTokenTerms(rows(trace.oldLogprobs), mb.newLogprobs, adv, mask, n, A, params);
  const out: ClippedCell[] = [];
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < A; t++) {
      const { side } = terms[i * A + t];
      if (side !== 'none') out.push({ row: mb.rows[i], t, step, side, advantage: adv[i * A + t] });
    }
  }
  return out.sort(byPosition);
}

/** Clip badges per response (B), by side. */
export function clipCountsByRow(cells: readonly ClippedCell[], B: number): ClipCounts[] {
  const out = Array.from({ length: B }, (): ClipCounts => ({ low: 0, high: 0, dual: 0 }));
  for (const c of cells) if (c.row >= 0 && c.row < B) out[c.row][c.side]++;
  return out;
}

/** The clipped tokens, each once (its first clipped step), in response and position order. */
export function clippedTokens(cells: readonly ClippedCell[]): ClippedCell[] {
  const out: ClippedCell[] = [];
  for (const c of [...cells].sort(byPosition)) {
    const last = out[out.length - 1];
    if (!last || last.row !== c.row || last.t !== c.t) out.push(c);
  }
  return out;
}

/**
 * The clipped token after (row, t) in response and position order, wrapping to the first; `dir`
 * −1 goes back. null when nothing is clipped. `index` is its place among the clipped tokens.
 */
export function nextClipped(cells: readonly ClippedCell[], at: { row: number; t: number }, dir: 1 | -1 = 1): { cell: ClippedCell; index: number; count: number } | null {
  const tokens = clippedTokens(cells);
  if (tokens.length === 0) return null;
  const after = (c: ClippedCell) => c.row > at.row || (c.row === at.row && c.t > at.t);
  const before = (c: ClippedCell) => c.row < at.row || (c.row === at.row && c.t < at.t);
  let index: number;
  if (dir === 1) {
    index = tokens.findIndex(after);
    if (index < 0) index = 0;
  } else {
    index = tokens.length - 1;
    while (index >= 0 && !before(tokens[index])) index--;
    if (index < 0) index = tokens.length - 1;
  }
  return { cell: tokens[index], index, count: tokens.length };
}
