// ReMax's greedy rows on the host: one prompt per group (groupPrompts), each sequence's baseline is
// its group's greedy score (greedyBaselines), and DAPO's concatRows keeps the greedy row of every
// group it keeps, under the group's new id.
import { describe, expect, it } from 'vitest';
import { concatRows, greedyBaselines, groupPrompts, type RolloutBatch } from '../../src/rl/rollout.ts';

/** A host batch of rows whose sequences hold `tag` (so rows can be followed), P = A = 2. */
function batch(prompts: string[], group: number[], tag: number, greedy: RolloutBatch | null = null): RolloutBatch {
  const B = prompts.length;
  return {
    B,
    P: 2,
    A: 2,
    prompts,
    group: Int32Array.from(group),
    sequences: Int32Array.from({ length: B * 4 }, (_, i) => tag * 100 + Math.floor(i / 4)),
    attnMask: new Float32Array(B * 4).fill(1),
    positions: Int32Array.from({ length: B * 4 }, (_, i) => i % 4),
    finished: new Int32Array(B),
    logprobs: null,
    greedy,
  };
}

describe('ReMax greedy rows', () => {
  it('groupPrompts: one prompt per group id, in order of first appearance', () => {
    const g = groupPrompts(['b', 'a', 'b', 'c', 'a'], [5, 2, 5, 9, 2]);
    expect(g.prompts).toEqual(['b', 'a', 'c']);
    expect(Array.from(g.group)).toEqual([5, 2, 9]);
  });

  it("greedyBaselines: every sample gets its group's greedy score; a missing group is an error", () => {
    const greedy = batch(['b', 'a'], [5, 2], 9);
    const r = batch(['a', 'b', 'a', 'b'], [2, 5, 2, 5], 1, greedy);
    expect(Array.from(greedyBaselines(r, [0.25, -1]))).toEqual([-1, 0.25, -1, 0.25]);
    expect(() => greedyBaselines({ ...r, group: Int32Array.from([2, 5, 2, 7]) }, [0.25, -1])).toThrow(/group 7/);
    expect(() => greedyBaselines({ ...r, greedy: null }, [0.25, -1])).toThrow(/no greedy/);
  });

  it('concatRows keeps the greedy row of each kept group, renumbered with it', () => {
    const p0 = batch(['x', 'x', 'y', 'y'], [0, 0, 1, 1], 1, batch(['x', 'y'], [0, 1], 7));
    const p1 = batch(['z', 'z'], [0, 0], 2, batch(['z'], [0], 8));
    // keep group y of part 0 and group z of part 1
    const out = concatRows(
      [p0, p1],
      [
        { part: 0, row: 2 },
        { part: 0, row: 3 },
        { part: 1, row: 0 },
        { part: 1, row: 1 },
      ],
    );
    expect(Array.from(out.group)).toEqual([0, 0, 1, 1]);
    const g = out.greedy!;
    expect(g.prompts).toEqual(['y', 'z']);
    expect(Array.from(g.group)).toEqual([0, 1]);
    // greedy row of y is part 0's greedy row 1 (tag 7, row 1), z part 1's row 0 (tag 8)
    expect(Array.from(g.sequences.subarray(0, 4))).toEqual([701, 701, 701, 701]);
    expect(Array.from(g.sequences.subarray(4, 8))).toEqual([800, 800, 800, 800]);
    expect(Array.from(greedyBaselines(out, [3, 4]))).toEqual([3, 3, 4, 4]);
    // without greedy rows in every part, none are kept
    expect(concatRows([p0, { ...p1, greedy: null }], [{ part: 0, row: 0 }]).greedy).toBeUndefined();
  });
});
