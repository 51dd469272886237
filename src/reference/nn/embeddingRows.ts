// float64 reference of the token embedding of Llama/Qwen (no learned positions: rows of the table
// only) with the table held as row parts, each within one GPU binding (a 151 936 × 1 024 table is
// 622 MB in f32), and its backward. Token ids are clamped into the table as in embedding.ts.
//   out[r, :] = table[clamp(tokens[r], 0, V − 1), :]   (V = the parts' rows together)
//   gradTable[v, :] += Σ_{r: clamp(tokens[r]) = v} gradOut[r, :], rows r in increasing order
import { clampIndex } from './embedding.ts';

/** One part: `rows` consecutive rows of the table, (rows, D) row-major. */
export interface TablePart {
  data: ArrayLike<number>;
  rows: number;
}

/** The part holding table row v and the row within it. */
function locate(partRows: readonly number[], v: number): { part: number; row: number } {
  let start = 0;
  for (let p = 0; p < partRows.length; p++) {
    if (v < start + partRows[p]) return { part: p, row: v - start };
    start += partRows[p];
  }
  throw new Error(`row ${v} is outside the table's ${start} rows`);
}

export function embeddingRowsRef(tokens: ArrayLike<number>, parts: readonly TablePart[], D: number): Float64Array {
  const partRows = parts.map((p) => p.rows);
  const V = partRows.reduce((a, b) => a + b, 0);
  const R = tokens.length;
  const out = new Float64Array(R * D); // (R, D)
  for (let r = 0; r < R; r++) {
    const { part, row } = locate(partRows, clampIndex(tokens[r], V));
    const data = parts[part].data;
    for (let d = 0; d < D; d++) out[r * D + d] = data[row * D + d];
  }
  return out;
}

/** Fresh gradients of each part (rows_p, D): the scatter-add of gradOut's rows, in row order. */
export function embeddingRowsBackwardRef(gradOut: ArrayLike<number>, tokens: ArrayLike<number>, partRows: readonly number[], D: number): Float64Array[] {
  const V = partRows.reduce((a, b) => a + b, 0);
  const grads = partRows.map((rows) => new Float64Array(rows * D));
  for (let r = 0; r < tokens.length; r++) {
    const { part, row } = locate(partRows, clampIndex(tokens[r], V));
    for (let d = 0; d < D; d++) grads[part][row * D + d] += gradOut[r * D + d];
  }
  return grads;
}
