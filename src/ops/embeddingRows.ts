// Token embedding of Llama/Qwen (table rows, no learned positions) from a table held as row parts
// within one binding each, f32 or f16, and its deterministic backward. Math and the gather that
// replaces float atomics: shaders/embedding_rows.wgsl's header; float64 reference:
// src/reference/nn/embeddingRows.ts. GPT-2 keeps the embedding op with its learned positions.
import { expectDType, expectShape, storageBytes, type DType, type Tensor } from '../backend/tensor.ts';
import { addInto, cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { embeddingRowsBackwardRef, embeddingRowsRef } from '../reference/nn/embeddingRows.ts';
import { hfBenchInputs, HF_BENCH } from './hfBench.ts';
import { defineOp, type Op } from './op.ts';
import { expectDTypes } from './shapes.ts';

export interface EmbeddingRowsArgs {
  tokens: Tensor; // R i32 ids, any shape (B, S): clamped into [0, V)
  /** The (V, D) table as row parts (rows_p, D) in order, all f32 or all f16, each within one binding. */
  table: readonly Tensor[];
}

export interface EmbeddingRowsBackwardArgs {
  gradOut: Tensor; // (…tokens' shape, D) f32: the gradient of embeddingRows' output
  tokens: Tensor; // R i32, as in the forward
  /** f32 parts of the table's gradient, the table's row split: += Σ of gradOut's rows per id. */
  gradTable: readonly Tensor[];
}

const WG = 64;
const UNIFORM = uniformLayout('Params', { R: 'u32', D: 'u32', V: 'u32', row_start: 'u32', part_rows: 'u32' });
const FORWARD = kernel({ shader: 'embedding_rows', entry: 'rows_forward', uniform: UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });
const FORWARD_F16 = kernel({ ...FORWARD, entry: 'rows_forward_f16' });
const LINKS = kernel({ shader: 'embedding_rows', entry: 'rows_links', uniform: UNIFORM, storage: ['read', 'rw'], constants: { WG } });
const BACKWARD = kernel({ shader: 'embedding_rows', entry: 'rows_backward', uniform: UNIFORM, storage: ['read', 'read', 'read', 'rw'], constants: { WG } });

/**
 * Rows per part of a (V, D) table of `dtype` when one binding holds `maxBindingBytes` (the least of
 * the adapter's maxStorageBufferBindingSize and maxBufferSize): as many whole rows as fit, the last
 * part what remains. Throws when one row alone does not fit.
 */
export function tableRowParts(V: number, D: number, dtype: DType, maxBindingBytes: number): number[] {
  const rowBytes = storageBytes(2 * D, dtype) / 2; // f16 rows pack two values a word across rows
  let perPart = Math.floor(maxBindingBytes / Math.max(rowBytes, 1));
  if (storageBytes(perPart * D, dtype) > maxBindingBytes) perPart--; // an odd f16 tail rounds up to a word
  if (perPart < 1) throw new Error(`a table row of ${D} ${dtype} values (${rowBytes} bytes) does not fit one binding of ${maxBindingBytes} bytes`);
  const rows: number[] = [];
  for (let start = 0; start < V; start += perPart) rows.push(Math.min(perPart, V - start));
  return rows;
}

/** D (columns), V (all parts' rows) and each part's rows of a checked table. */
function tableDims(parts: readonly Tensor[]): { D: number; V: number; rows: number[] } {
  const rows = parts.map((p) => p.shape[0]);
  return { D: parts[0].shape[1], V: rows.reduce((a, b) => a + b, 0), rows };
}

function checkParts(name: string, parts: readonly Tensor[], dtypes: readonly DType[]): void {
  if (!Array.isArray(parts) || parts.length === 0) throw new Error(`${name}: expected a list of one or more (rows, D) parts`);
  const D = parts[0].shape[1];
  parts.forEach((p, i) => {
    if (p.shape.length !== 2 || p.shape[1] !== D || p.shape[0] < 1) {
      throw new Error(`${name}[${i}]: expected shape (rows ≥ 1, ${D}) like part 0, got [${p.shape.join(', ')}]`);
    }
    expectDTypes(`${name}[${i}]`, p, dtypes);
    if (p.dtype !== parts[0].dtype) throw new Error(`${name}[${i}]: dtype ${p.dtype}, but part 0 is ${parts[0].dtype}`);
  });
}

/** out (…tokens' shape, D) f32 = the table's row of each token id. */
export const embeddingRows: Op<EmbeddingRowsArgs, Tensor> = defineOp({
  name: 'embeddingRows',
  kernels: [FORWARD, FORWARD_F16],
  check({ tokens, table }) {
    expectDType('embeddingRows tokens', tokens, 'i32');
    checkParts('embeddingRows table', table, ['f32', 'f16']);
  },
  cpu({ tokens, table }) {
    const { D } = tableDims(table);
    const out = embeddingRowsRef(
      cpu(tokens).data,
      table.map((p) => ({ data: cpu(p).data, rows: p.shape[0] })),
      D,
    );
    return new CpuTensor(out, [...tokens.shape, D], 'f32');
  },
  webgpu({ tokens, table }, be) {
    const { D, V } = tableDims(table);
    const R = tokens.size;
    const out = be.empty([...tokens.shape, D]);
    if (R * D === 0) return out;
    let rowStart = 0;
    for (const part of table) {
      const u = { R, D, V, row_start: rowStart, part_rows: part.shape[0] };
      be.rt.dispatch(part.dtype === 'f16' ? FORWARD_F16 : FORWARD, [gpu(tokens), gpu(part), gpu(out)], u, elementGrid(R * D, WG));
      rowStart += part.shape[0];
    }
    return out;
  },
  bench: {
    label: `embeddingRows (V ${HF_BENCH.V}, D ${HF_BENCH.D}, f16)`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return embeddingRows(be, { tokens: h.tokens, table: [h.tableF16] });
    },
  },
});

/** Accumulates into gradTable's parts: each id's row gets the sum of its tokens' gradient rows. */
export const embeddingRowsBackward: Op<EmbeddingRowsBackwardArgs, void> = defineOp({
  name: 'embeddingRowsBackward',
  kernels: [LINKS, BACKWARD],
  check({ gradOut, tokens, gradTable }) {
    expectDType('embeddingRowsBackward tokens', tokens, 'i32');
    checkParts('embeddingRowsBackward gradTable', gradTable, ['f32']);
    expectShape('embeddingRowsBackward gradOut', gradOut, [...tokens.shape, gradTable[0].shape[1]]);
    expectDType('embeddingRowsBackward gradOut', gradOut, 'f32');
  },
  cpu({ gradOut, tokens, gradTable }) {
    const { D, rows } = tableDims(gradTable);
    const grads = embeddingRowsBackwardRef(cpu(gradOut).data, cpu(tokens).data, rows, D);
    for (const [i, part] of gradTable.entries()) addInto(part, grads[i]);
  },
  webgpu({ gradOut, tokens, gradTable }, be) {
    const { D, V } = tableDims(gradTable);
    const R = tokens.size;
    if (R * D === 0) return;
    const links = be.empty([2 * R], 'i32'); // next row of the same id, then head flags
    be.rt.dispatch(LINKS, [gpu(tokens), gpu(links)], { R, D, V, row_start: 0, part_rows: V }, elementGrid(R, WG));
    let rowStart = 0;
    for (const part of gradTable) {
      const u = { R, D, V, row_start: rowStart, part_rows: part.shape[0] };
      be.rt.dispatch(BACKWARD, [gpu(tokens), gpu(links), gpu(gradOut), gpu(part)], u, elementGrid(R * D, WG));
      rowStart += part.shape[0];
    }
    be.dispose(links); // a later user of the buffer is recorded after these passes
  },
  bench: {
    label: `embeddingRowsBackward (V ${HF_BENCH.V}, D ${HF_BENCH.D})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      const grad = be.zeros([HF_BENCH.V, HF_BENCH.D]);
      embeddingRowsBackward(be, { gradOut: h.x, tokens: h.tokens, gradTable: [grad] });
      return grad;
    },
  },
});
