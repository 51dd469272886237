// The header of a safetensors file (https://huggingface.co/docs/safetensors) read on its own, from two
// small ranges: [u64 LE N][N bytes of JSON]. Every entry is validated against the file before any
// tensor is read or any GPU memory is allocated: shape, dtype size × elements = byte length, and the
// data range inside the file, so a truncated file is refused by name:
//   "model.safetensors: tensor X ends at byte N but the file has M bytes".
// Dtypes are kept as written; which ones a model may use is decided by the weight map (a GPT-2
// checkpoint carries unused attention-mask buffers whose dtype does not matter).
import { quoted } from '../safetensors.ts';
import type { ModelFolder } from './folder.ts';

/** Byte size of every safetensors dtype (so offsets of unused tensors can be checked too). */
const SAFETENSORS_DTYPE_BYTES: Record<string, number> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  F8_E8M0: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
};

/** Guards against a gigantic header length read from a corrupt or foreign file. */
export const MAX_HEADER_BYTES = 100_000_000;

export interface SafetensorsEntry {
  /** Key in the file, e.g. "model.layers.0.self_attn.q_proj.weight". */
  key: string;
  /** File that holds it. */
  file: string;
  dtype: string;
  shape: number[];
  /** Absolute byte range [begin, end) in the file. */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  file: string;
  fileSize: number;
  /** First byte of the data section (8 + header length). */
  dataStart: number;
  entries: Map<string, SafetensorsEntry>;
  metadata: Record<string, string>;
}

const numel = (shape: number[]) => shape.reduce((n, d) => n * d, 1);

/** Validates a parsed header object of `file` (dataStart = 8 + N, fileSize its length). */
export function parseSafetensorsHeader(file: string, header: unknown, dataStart: number, fileSize: number): SafetensorsHeader {
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new Error(`${file}: the header is not a JSON object`);
  const entries = new Map<string, SafetensorsEntry>();
  let metadata: Record<string, string> = {};
  for (const [key, raw] of Object.entries(header as Record<string, unknown>)) {
    if (key === '__metadata__') {
      if (typeof raw === 'object' && raw !== null) metadata = raw as Record<string, string>;
      continue;
    }
    const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const where = `${file}: tensor ${quoted(key)}`;
    if (typeof e !== 'object' || e === null) throw new Error(`${where} has no {dtype, shape, data_offsets} entry`);
    if (typeof e.dtype !== 'string' || !(e.dtype in SAFETENSORS_DTYPE_BYTES)) throw new Error(`${where} has unknown dtype ${quoted(e.dtype)}`);
    if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new Error(`${where} has an invalid shape ${quoted(e.shape)}`);
    const off = e.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((o) => Number.isSafeInteger(o) && o >= 0) || off[1] < off[0]) {
      throw new Error(`${where} has invalid data_offsets ${quoted(off)}`);
    }
    const shape = e.shape as number[];
    const bytes = numel(shape) * SAFETENSORS_DTYPE_BYTES[e.dtype];
    if (off[1] - off[0] !== bytes) {
      throw new Error(`${where}: shape [${shape.join(', ')}] of ${e.dtype} takes ${bytes} bytes but data_offsets span ${off[1] - off[0]}`);
    }
    const begin = dataStart + off[0];
    const end = dataStart + off[1];
    if (end > fileSize) throw new Error(`${file}: tensor ${key} ends at byte ${end} but the file has ${fileSize} bytes`);
    entries.set(key, { key, file, dtype: e.dtype, shape, begin, end });
  }
  return { file, fileSize, dataStart, entries, metadata };
}

/** Reads and validates the header of `file` in `folder` (two small range reads). */
export async function readSafetensorsHeader(folder: ModelFolder, file: string): Promise<SafetensorsHeader> {
  const fileSize = await folder.size(file);
  if (fileSize === null) throw new Error(`${file} is missing`);
  if (fileSize < 8) throw new Error(`${file}: ${fileSize} bytes, too short for a safetensors header (8-byte length first)`);
  const lenBytes = await folder.read(file, 0, 8);
  const n = new DataView(lenBytes.buffer, lenBytes.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) throw new Error(`${file}: header length ${n} exceeds ${MAX_HEADER_BYTES} bytes; not a safetensors file?`);
  const headerLen = Number(n);
  if (8 + headerLen > fileSize) throw new Error(`${file}: the header ends at byte ${8 + headerLen} but the file has ${fileSize} bytes`);
  const text = new TextDecoder('utf-8').decode(await folder.read(file, 8, 8 + headerLen));
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: the header is not valid JSON (${(e as Error).message}); not a safetensors file?`);
  }
  return parseSafetensorsHeader(file, header, 8 + headerLen, fileSize);
}

/** Bytes of a header + data file with the given entries laid out in order (for writers). */
export function safetensorsHeaderBytes(entries: { key: string; dtype: string; shape: number[] }[], metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let at = 0;
  for (const e of entries) {
    const bytes = numel(e.shape) * SAFETENSORS_DTYPE_BYTES[e.dtype];
    header[e.key] = { dtype: e.dtype, shape: e.shape, data_offsets: [at, at + bytes] };
    at += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + padded);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length);
  return out;
}

export function entryBytes(e: { dtype: string; shape: number[] }): number {
  return numel(e.shape) * (SAFETENSORS_DTYPE_BYTES[e.dtype] ?? 0);
}
