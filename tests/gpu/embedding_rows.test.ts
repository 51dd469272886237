// embeddingRows / embeddingRowsBackward on WebGPU and the float64 CPU backend against
// src/reference/nn/embeddingRows.ts, with the table split into row parts by a forced small
// binding size (the real split: Qwen3-0.6B's table in 3 parts), in f32 and in f16.
// Tolerances: the forward copies values, so it is exact (f16 values widen exactly, subnormals
// included). The backward sums the gradient rows of each id in row order, as the reference does:
// (n_v + 1)·u·(Σ|terms| + |initial|) for an id seen n_v times (u = 2^-24), and the same bits on
// every run (no atomics).
import { expect, it } from 'vitest';
import { f16Round } from '../../src/backend/f16.ts';
import type { Backend } from '../../src/backend/backend.ts';
import { storageBytes, type DType, type Tensor } from '../../src/backend/tensor.ts';
import { embeddingRows, embeddingRowsBackward, tableRowParts } from '../../src/ops/embeddingRows.ts';
import { embeddingRowsBackwardRef, embeddingRowsRef } from '../../src/reference/nn/embeddingRows.ts';
import { describeVariants } from '../helpers/kernelVariants.ts';
import { randn, rng } from '../helpers/random.ts';
import { expectWithin, f32, U32 } from '../helpers/scaled.ts';

/** The table's rows as parts of `rows` each (the last one shorter), uploaded as `dtype`. */
function upload(be: Backend, table: Float64Array, D: number, rows: number[], dtype: DType): Tensor[] {
  let start = 0;
  return rows.map((n) => {
    const part = be.tensor(table.subarray(start * D, (start + n) * D), [n, D], dtype);
    start += n;
    return part;
  });
}

function splitRows(data: Float64Array, D: number, rows: number[]): { data: Float64Array; rows: number }[] {
  let start = 0;
  return rows.map((n) => {
    const part = { data: data.subarray(start * D, (start + n) * D), rows: n };
    start += n;
    return part;
  });
}

describeVariants('embeddingRows', (makeBackend, isReference) => {
  const cases: { V: number; D: number; B: number; S: number; partRows: number; dtype: DType }[] = [
    { V: 50, D: 16, B: 3, S: 7, partRows: 50, dtype: 'f32' }, // one part
    { V: 50, D: 16, B: 3, S: 7, partRows: 7, dtype: 'f32' }, // 8 parts, the last of 1 row
    { V: 37, D: 9, B: 2, S: 11, partRows: 5, dtype: 'f16' }, // odd D: f16 rows straddle words
    { V: 300, D: 64, B: 4, S: 16, partRows: 128, dtype: 'f16' },
  ];
  for (const c of cases) {
    it(`V=${c.V} D=${c.D} ${c.dtype} in parts of ${c.partRows} rows: the forward copies each token's row`, async () => {
      const be = await makeBackend();
      const r = rng(c.V * 31 + c.D + c.partRows);
      const rows = tableRowParts(c.V, c.D, c.dtype, storageBytes(c.partRows * c.D, c.dtype));
      expect(rows.length).toBe(Math.ceil(c.V / c.partRows));
      let table = f32(randn(r, c.V * c.D, 0.05));
      if (c.dtype === 'f16') {
        table[0] = 2 ** -24; // the smallest f16 subnormal
        table[1] = -3 * 2 ** -20; // a subnormal
        table[2] = 65504;
        table = table.map(f16Round);
      }
      const ids = Int32Array.from({ length: c.B * c.S }, () => r.int(0, c.V));
      ids[0] = 0;
      ids[1] = c.V - 1;
      ids[2] = -4; // clamped to 0
      ids[3] = c.V + 9; // clamped to V − 1
      const out = embeddingRows(be, { tokens: be.tensor(ids, [c.B, c.S], 'i32'), table: upload(be, table, c.D, rows, c.dtype) });
      expect(out.shape).toEqual([c.B, c.S, c.D]);
      expect(Array.from(await be.read(out))).toEqual(Array.from(embeddingRowsRef(ids, splitRows(table, c.D, rows), c.D)));
    });
  }

  for (const [V, D, R, partRows] of [
    [40, 12, 60, 40],
    [40, 12, 60, 9],
    [3, 5, 200, 2], // few ids, long chains
    [1000, 3, 1, 300],
  ] as const) {
    it(`backward V=${V} D=${D} R=${R} in parts of ${partRows}: accumulates each id's rows in order, the same bits every run`, async () => {
      const be = await makeBackend();
      const r = rng(V * 7 + D * 3 + R + partRows);
      const rows = tableRowParts(V, D, 'f32', partRows * D * 4);
      const ids = Int32Array.from({ length: R }, () => r.int(-1, V + 1)); // a few out of range
      const gradOut = f32(randn(r, R * D));
      const init = f32(randn(r, V * D));
      const gradTable = upload(be, init, D, rows, 'f32');
      const again = upload(be, init, D, rows, 'f32');
      const tokens = be.tensor(ids, [R], 'i32');
      const g = be.tensor(gradOut, [R, D]);
      embeddingRowsBackward(be, { gradOut: g, tokens, gradTable });
      embeddingRowsBackward(be, { gradOut: g, tokens, gradTable: again });
      const got = await be.readMany([...gradTable, ...again]);
      const want = embeddingRowsBackwardRef(gradOut, ids, rows, D);
      // Per table element: the count and total size of the terms summed into it.
      const count = new Float64Array(V);
      const size = new Float64Array(V * D);
      for (let i = 0; i < R; i++) {
        const v = Math.min(V - 1, Math.max(0, ids[i]));
        count[v]++;
        for (let d = 0; d < D; d++) size[v * D + d] += Math.abs(gradOut[i * D + d]);
      }
      let start = 0;
      rows.forEach((n, p) => {
        const tol = new Float64Array(n * D);
        for (let k = 0; k < n * D; k++) {
          const e = start * D + k;
          tol[k] = (isReference ? 1e-12 : (count[Math.floor(e / D)] + 1) * U32) * (size[e] + Math.abs(init[e])) + 1e-37;
        }
        expectWithin(
          got[p],
          want[p].map((v, k) => v + init[start * D + k]),
          tol,
          `gradTable[${p}]`,
        );
        expect(Array.from(got[rows.length + p])).toEqual(Array.from(got[p]));
        start += n;
      });
    });
  }

  it('one id repeated 4 096 times: one chain, summed in row order', async () => {
    const be = await makeBackend();
    const R = 4096;
    const D = 2;
    const gradOut = f32(randn(rng(5), R * D));
    const grad = be.zeros([4, D]);
    embeddingRowsBackward(be, { gradOut: be.tensor(gradOut, [R, D]), tokens: be.tensor(new Int32Array(R).fill(2), [R], 'i32'), gradTable: [grad] });
    const got = await be.read(grad);
    // The reference's order in float32 (what the kernel computes) and in float64.
    const f32Sum = [0, 1].map((d) => {
      let s = 0;
      for (let i = 0; i < R; i++) s = Math.fround(s + gradOut[i * D + d]);
      return s;
    });
    const f64Sum = [0, 1].map((d) => gradOut.reduce((s, v, i) => (i % D === d ? s + v : s), 0));
    expect([got[4], got[5]]).toEqual(isReference ? f64Sum : f32Sum);
    expect(Array.from(got.slice(0, 4))).toEqual([0, 0, 0, 0]);
  });

  it("tableRowParts: Qwen3-0.6B's table in f16 is 3 parts of 65 536 rows at 128 MiB, in f32 5 of 32 768", () => {
    const MiB128 = 128 * 2 ** 20;
    expect(tableRowParts(151936, 1024, 'f16', MiB128)).toEqual([65536, 65536, 20864]);
    expect(tableRowParts(151936, 1024, 'f32', MiB128)).toEqual([32768, 32768, 32768, 32768, 20864]);
    expect(tableRowParts(49152, 576, 'f16', MiB128)).toEqual([49152]);
    expect(tableRowParts(5, 1, 'f16', 10)).toEqual([4, 1]); // 5 f16 values would need 3 words = 12 bytes
    expect(() => tableRowParts(10, 1024, 'f32', 4000)).toThrow(/does not fit one binding/);
  });

  it('bad arguments are refused by name', async () => {
    const be = await makeBackend();
    const tokens = be.tensor([0, 1], [2], 'i32');
    expect(() => embeddingRows(be, { tokens, table: [] })).toThrow(/embeddingRows table: expected a list/);
    expect(() => embeddingRows(be, { tokens, table: [be.zeros([2, 4]), be.zeros([2, 3])] })).toThrow(/embeddingRows table\[1\]: expected shape \(rows ≥ 1, 4\)/);
    expect(() => embeddingRows(be, { tokens, table: [be.zeros([2, 4]), be.zeros([2, 4], 'f16')] })).toThrow(/table\[1\]: dtype f16, but part 0 is f32/);
    expect(() => embeddingRows(be, { tokens: be.zeros([2]), table: [be.zeros([2, 4])] })).toThrow(/embeddingRows tokens: expected dtype i32/);
    expect(() => embeddingRowsBackward(be, { gradOut: be.zeros([2, 4]), tokens, gradTable: [be.zeros([2, 4], 'f16')] })).toThrow(/gradTable\[0\]: expected dtype f32/);
    expect(() => embeddingRowsBackward(be, { gradOut: be.zeros([3, 4]), tokens, gradTable: [be.zeros([2, 4])] })).toThrow(/embeddingRowsBackward gradOut: expected shape \[2, 4\]/);
  });
});
