// The clipped tokens of a trace: every clip badge of the token table is one cell, counted per
// response by side; "next clipped token" visits each clipped token once, in response and position
// order, and wraps; the clipping view's one-step list is the recomputation's for that step.
import { describe, expect, it } from 'vitest';
import { clipCountsByRow, clippedCells, clippedTokens, nextClipped, recomputeTrace, stepClippedCells, tokenTable, type ClippedCell } from '../../src/rl/inspect/index.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

const cell = (row: number, t: number, step = 0, side: ClippedCell['side'] = 'high'): ClippedCell => ({ row, t, step, side, advantage: 1 });

describe('clippedCells', () => {
  it('holds exactly the token table’s clip badges, by response, position and step, and counts them by side', () => {
    // A wide spread of π_new, a dual clip and two epochs: every side occurs.
    const trace = buildTrace(rng(4101), { newSpread: 0.6, knobs: { dualClip: 1.5, clipLow: 0.1, clipHigh: 0.1 } });
    const rec = recomputeTrace(trace);
    const cells = clippedCells(rec);
    const fromTable: string[] = [];
    for (let row = 0; row < trace.B; row++) {
      for (const tok of tokenTable(trace, row, rec).rows) for (const u of tok.updates) if (u.clipSide !== 'none') fromTable.push(`${row}/${tok.t}/${u.step}/${u.clipSide}`);
    }
    expect(cells.map((c) => `${c.row}/${c.t}/${c.step}/${c.side}`).sort()).toEqual(fromTable.sort());
    expect(new Set(cells.map((c) => c.side))).toEqual(new Set(['low', 'high', 'dual']));
    // Ordered by response, then position, then step; never on a padded position.
    for (let i = 1; i < cells.length; i++) {
      const [a, b] = [cells[i - 1], cells[i]];
      expect(a.row < b.row || (a.row === b.row && (a.t < b.t || (a.t === b.t && a.step < b.step)))).toBe(true);
    }
    expect(cells.every((c) => trace.actionMask[c.row * trace.A + c.t] !== 0)).toBe(true);
    const counts = clipCountsByRow(cells, trace.B);
    expect(counts.reduce((n, c) => n + c.low + c.high + c.dual, 0)).toBe(cells.length);
    for (let b = 0; b < trace.B; b++) expect(counts[b].high).toBe(cells.filter((c) => c.row === b && c.side === 'high').length);
  });

  it('is empty when nothing clips (π_new = π_old), and the counts are zero', () => {
    const trace = buildTrace(rng(4102), { newSpread: 0 });
    const cells = clippedCells(recomputeTrace(trace));
    expect(cells).toEqual([]);
    expect(clipCountsByRow(cells, trace.B).every((c) => c.low + c.high + c.dual === 0)).toBe(true);
    expect(nextClipped(cells, { row: 0, t: 0 })).toBeNull();
  });
});

describe('nextClipped', () => {
  const cells = [cell(0, 4, 1), cell(0, 4, 0, 'low'), cell(2, 1), cell(5, 0), cell(5, 3, 2, 'dual')];

  it('goes to the next clipped token after the selection, each token once (its first clipped step)', () => {
    expect(clippedTokens(cells).map((c) => [c.row, c.t, c.step])).toEqual([
      [0, 4, 0],
      [2, 1, 0],
      [5, 0, 0],
      [5, 3, 2],
    ]);
    const visit: string[] = [];
    let at = { row: 0, t: 0 };
    for (let i = 0; i < 5; i++) {
      const n = nextClipped(cells, at)!;
      visit.push(`${n.cell.row}/${n.cell.t} ${n.index + 1} of ${n.count}`);
      at = n.cell;
    }
    expect(visit).toEqual(['0/4 1 of 4', '2/1 2 of 4', '5/0 3 of 4', '5/3 4 of 4', '0/4 1 of 4']);
  });

  it('skips the selected token itself, and goes back with dir −1, wrapping to the last', () => {
    expect(nextClipped(cells, { row: 2, t: 1 })!.cell).toMatchObject({ row: 5, t: 0 });
    expect(nextClipped(cells, { row: 2, t: 1 }, -1)!.cell).toMatchObject({ row: 0, t: 4 });
    expect(nextClipped(cells, { row: 0, t: 4 }, -1)!.cell).toMatchObject({ row: 5, t: 3 });
    expect(nextClipped(cells, { row: 9, t: 0 })!.cell).toMatchObject({ row: 0, t: 4 });
  });
});

describe('stepClippedCells', () => {
  it('is the recomputation’s clipped cells of that step, from the trace alone, for every step and loss mode', () => {
    for (const [salt, knobs] of [
      [4103, { dualClip: 2 }],
      [4104, { lossMode: 'cispo' as const, clipLow: 0.1, clipHigh: 0.15 }],
      [4105, { advantageEstimator: 'group_norm' as const, whiten: false }],
    ] as const) {
      const trace = buildTrace(rng(salt), { newSpread: 0.5, knobs });
      const rec = recomputeTrace(trace);
      const all = clippedCells(rec);
      expect(all.length, `salt ${salt}: something clips`).toBeGreaterThan(0);
      trace.minibatches.forEach((_, step) => {
        expect(stepClippedCells(trace, step), `salt ${salt} step ${step}`).toEqual(all.filter((c) => c.step === step));
      });
      expect(stepClippedCells(trace, trace.minibatches.length)).toEqual([]);
    }
  });
});
