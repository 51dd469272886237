// Reading one weight (or a block of its rows) from the folder, as float32 values or as float16
// bits for the f16 upload path. Only the tensor's byte range is read; a large table can be read
// in row blocks (an embedding split across bindings, a progress bar). BF16 → F16 rounds to nearest
// even; a value beyond f16's range is refused by name rather than silently becoming inf.
import { decodeToF16Bits, decodeToF32, DTYPE_BYTES } from './dtype.ts';
import type { ModelFolder } from './folder.ts';
import type { WeightRef } from './weights.ts';

/** Rows [start, end) of the tensor's first dimension (all rows when omitted). */
export interface RowRange {
  start: number;
  end: number;
}

function byteRange(w: WeightRef, rows?: RowRange): [number, number] {
  if (!rows) return [w.begin, w.end];
  const nRows = w.shape[0];
  if (!Number.isSafeInteger(rows.start) || !Number.isSafeInteger(rows.end) || rows.start < 0 || rows.end > nRows || rows.end < rows.start) {
    throw new Error(`${w.key}: rows [${rows.start}, ${rows.end}) are outside its ${nRows} rows`);
  }
  const rowBytes = (w.shape.slice(1).reduce((n, d) => n * d, 1) || 1) * DTYPE_BYTES[w.dtype];
  return [w.begin + rows.start * rowBytes, w.begin + rows.end * rowBytes];
}

/** The tensor (or rows of it) as float32, exactly as stored (BF16 and F16 widen exactly). */
export async function readWeightF32(folder: ModelFolder, w: WeightRef, rows?: RowRange): Promise<Float32Array> {
  const [b, e] = byteRange(w, rows);
  return decodeToF32(await folder.read(w.file, b, e), w.dtype);
}

/** The tensor (or rows of it) as float16 bits; throws naming the tensor when a value overflows f16. */
export async function readWeightF16(folder: ModelFolder, w: WeightRef, rows?: RowRange): Promise<Uint16Array> {
  const [b, e] = byteRange(w, rows);
  const r = decodeToF16Bits(await folder.read(w.file, b, e), w.dtype);
  if (r.overflowCount > 0) {
    throw new Error(
      `${w.file}: tensor ${w.key} holds ${r.overflowCount} value(s) beyond float16's range ±65504 (first: ${r.firstOverflow.value} at element ${r.firstOverflow.index}); load this model with f32 weights`,
    );
  }
  return r.bits;
}

/** (rows, cols) row-major → (cols, rows): Conv1D's (in, out) into nn.Linear's (out, in), or back. */
export function transpose(x: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = x[r * cols + c];
  return out;
}
