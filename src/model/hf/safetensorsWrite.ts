// Writing safetensors files of BF16/F16/F32 tensors, whole (small files, tests) or streamed (a
// header first, then each tensor's bytes in order, so a multi-GB synthetic model never sits in memory).
import { DTYPE_BYTES, encodeFromNumbers, type HfDtype } from './dtype.ts';
import { safetensorsHeaderBytes } from './safetensorsHeader.ts';

export interface TensorSpec {
  key: string;
  dtype: HfDtype;
  shape: number[];
}

export interface TensorValues extends TensorSpec {
  values: ArrayLike<number>;
}

export const tensorBytes = (t: TensorSpec) => t.shape.reduce((n, d) => n * d, 1) * DTYPE_BYTES[t.dtype];

/** A whole safetensors file in memory (values rounded to the dtype, nearest even). */
export function encodeHfSafetensors(tensors: TensorValues[], metadata: Record<string, string> = { format: 'pt' }): Uint8Array {
  const head = safetensorsHeaderBytes(tensors, metadata);
  const total = head.length + tensors.reduce((n, t) => n + tensorBytes(t), 0);
  const out = new Uint8Array(total);
  out.set(head, 0);
  let at = head.length;
  for (const t of tensors) {
    const n = t.shape.reduce((a, d) => a * d, 1);
    if (t.values.length !== n) throw new Error(`tensor ${t.key}: shape [${t.shape}] holds ${n} values, got ${t.values.length}`);
    const b = encodeFromNumbers(t.values, t.dtype);
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/** Where a streamed file goes: bytes appended in order, then closed. */
export interface ByteSink {
  write(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * Streams one safetensors file: the header for `specs`, then `fill(spec, start, count)` for blocks of
 * at most `blockElems` elements of each tensor in order (values rounded to the tensor's dtype).
 */
export async function streamHfSafetensors(
  sink: ByteSink,
  specs: TensorSpec[],
  fill: (spec: TensorSpec, start: number, count: number) => ArrayLike<number>,
  blockElems = 1 << 22,
  metadata: Record<string, string> = { format: 'pt' },
): Promise<number> {
  const head = safetensorsHeaderBytes(specs, metadata);
  await sink.write(head);
  let total = head.length;
  for (const s of specs) {
    const n = s.shape.reduce((a, d) => a * d, 1);
    for (let start = 0; start < n; start += blockElems) {
      const count = Math.min(blockElems, n - start);
      const b = encodeFromNumbers(fill(s, start, count), s.dtype);
      await sink.write(b);
      total += b.length;
    }
  }
  await sink.close();
  return total;
}
