// Checkpoints in the safetensors format (https://huggingface.co/docs/safetensors), so a saved
// model opens in Python with `safetensors.numpy.load_file` or the stdlib reader in
// scripts/read_safetensors.py. Layout:
//   [u64 little-endian N][N bytes of UTF-8 JSON header, space-padded to 8-byte alignment][data]
// header = { name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str} },
// offsets relative to the start of the data section, little-endian element bytes.
// Only the dtypes our model stores are supported (F32 parameters, I32 token tables, F64 for the
// trainer state, which must round-trip the float64 CPU backend's weights and moments exactly).

export type SafeDtype = 'F32' | 'I32' | 'F64';
type SafeArray = Float32Array | Int32Array | Float64Array;

export interface SafeTensor {
  name: string;
  dtype: SafeDtype;
  shape: number[];
  data: SafeArray;
}

export interface DecodedSafetensors {
  tensors: Map<string, { dtype: SafeDtype; shape: number[]; data: SafeArray }>;
  metadata: Record<string, string>;
}

const BYTES_PER: Record<SafeDtype, number> = { F32: 4, I32: 4, F64: 8 };
const ARRAY_OF = { F32: Float32Array, I32: Int32Array, F64: Float64Array } as const;
const METADATA_KEY = '__metadata__';
/** Guards against reading a gigantic header length from a corrupt or foreign file. */
const MAX_HEADER_BYTES = 100_000_000;

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Raw byte copies on little-endian hosts keep the round trip bit-exact (NaN payloads included,
// which a Number round trip through DataView may canonicalise); DataView is the big-endian fallback.
function writeLittleEndian(out: Uint8Array, view: DataView, at: number, data: SafeArray): void {
  if (HOST_LITTLE_ENDIAN) {
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    return;
  }
  for (let i = 0; i < data.length; i++) {
    if (data instanceof Float64Array) view.setFloat64(at + 8 * i, data[i], true);
    else if (data instanceof Float32Array) view.setFloat32(at + 4 * i, data[i], true);
    else view.setInt32(at + 4 * i, data[i], true);
  }
}

function readLittleEndian(bytes: Uint8Array, view: DataView, at: number, data: SafeArray): void {
  if (HOST_LITTLE_ENDIAN) {
    new Uint8Array(data.buffer).set(bytes.subarray(at, at + data.byteLength));
    return;
  }
  for (let i = 0; i < data.length; i++) {
    if (data instanceof Float64Array) data[i] = view.getFloat64(at + 8 * i, true);
    else data[i] = data instanceof Float32Array ? view.getFloat32(at + 4 * i, true) : view.getInt32(at + 4 * i, true);
  }
}

/** A name or header value as an error message shows it: JSON, cut to 40 characters (a hostile file may hold 10 kB names). */
export function quoted(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 40 ? `${s.slice(0, 40)}… (${s.length} chars)` : s;
}

function elementCount(shape: number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

function isValidShape(shape: unknown): shape is number[] {
  return Array.isArray(shape) && shape.every((d) => Number.isSafeInteger(d) && d >= 0);
}

export function encodeSafetensors(tensors: SafeTensor[], metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new Error(`safetensors metadata "${k}" must be a string, got ${typeof v}`);
    }
    header[METADATA_KEY] = metadata;
  }
  let offset = 0;
  for (const t of tensors) {
    if (t.name === METADATA_KEY) throw new Error(`tensor name "${METADATA_KEY}" is reserved`);
    if (t.name in header) throw new Error(`duplicate tensor name "${t.name}"`);
    if (!(t.dtype in BYTES_PER)) throw new Error(`tensor "${t.name}": unsupported dtype ${t.dtype}`);
    const wantArray = ARRAY_OF[t.dtype];
    if (!(t.data instanceof wantArray)) throw new Error(`tensor "${t.name}": dtype ${t.dtype} needs a ${wantArray.name}`);
    if (!isValidShape(t.shape)) throw new Error(`tensor "${t.name}": invalid shape ${JSON.stringify(t.shape)}`);
    if (elementCount(t.shape) !== t.data.length) {
      throw new Error(`tensor "${t.name}": shape [${t.shape}] holds ${elementCount(t.shape)} elements but data has ${t.data.length}`);
    }
    const nbytes = t.data.length * BYTES_PER[t.dtype];
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + nbytes] };
    offset += nbytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLen = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLen + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerLen), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLen);
  const dataStart = 8 + headerLen;
  let at = dataStart;
  for (const t of tensors) {
    writeLittleEndian(out, view, at, t.data);
    at += t.data.byteLength;
  }
  return out;
}

export function decodeSafetensors(bytes: Uint8Array): DecodedSafetensors {
  if (bytes.length < 8) throw new Error(`safetensors file truncated: ${bytes.length} bytes, need at least 8 for the header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLenBig = view.getBigUint64(0, true);
  if (headerLenBig > BigInt(MAX_HEADER_BYTES)) {
    throw new Error(`safetensors bad header length ${headerLenBig} (limit ${MAX_HEADER_BYTES})`);
  }
  const headerLen = Number(headerLenBig);
  if (headerLen < 2) throw new Error(`safetensors bad header length ${headerLen}: too small for a JSON object`);
  if (8 + headerLen > bytes.length) {
    throw new Error(`safetensors file truncated: header length ${headerLen} runs past the end of the ${bytes.length}-byte file`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLen)));
  } catch (e) {
    throw new Error(`safetensors header is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new Error('safetensors header is not a JSON object');
  }
  const dataStart = 8 + headerLen;
  const dataLen = bytes.length - dataStart;
  const metadata: Record<string, string> = {};
  const entries: { name: string; dtype: SafeDtype; shape: number[]; begin: number; end: number }[] = [];
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === METADATA_KEY) {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('safetensors __metadata__ is not an object');
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== 'string') throw new Error(`safetensors __metadata__ ${quoted(k)} is not a string`);
        metadata[k] = v;
      }
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | null;
    if (typeof info !== 'object' || info === null) throw new Error(`tensor ${quoted(name)}: header entry is not an object`);
    const { dtype, shape, data_offsets: offs } = info;
    if (typeof dtype !== 'string' || !(dtype in BYTES_PER)) {
      throw new Error(`tensor ${quoted(name)}: unsupported dtype ${quoted(dtype)} (supported: ${Object.keys(BYTES_PER).join(', ')})`);
    }
    if (!isValidShape(shape)) throw new Error(`tensor ${quoted(name)}: invalid shape ${quoted(shape)}`);
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      throw new Error(`tensor ${quoted(name)}: invalid data_offsets ${quoted(offs)}`);
    }
    const [begin, end] = offs as [number, number];
    if (begin > end || end > dataLen) {
      throw new Error(`tensor ${quoted(name)}: data_offsets [${begin}, ${end}] out of range (data section is ${dataLen} bytes)`);
    }
    const sd = dtype as SafeDtype;
    const want = elementCount(shape) * BYTES_PER[sd];
    if (end - begin !== want) {
      throw new Error(`tensor ${quoted(name)}: shape ${quoted(shape)} of ${sd} needs ${want} bytes but data_offsets span ${end - begin}`);
    }
    entries.push({ name, dtype: sd, shape, begin, end });
  }
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].begin < sorted[i - 1].end) {
      throw new Error(`tensors ${quoted(sorted[i - 1].name)} and ${quoted(sorted[i].name)} have overlapping data_offsets`);
    }
  }
  const tensors: DecodedSafetensors['tensors'] = new Map();
  for (const e of entries) {
    const n = (e.end - e.begin) / BYTES_PER[e.dtype];
    const data = new ARRAY_OF[e.dtype](n);
    readLittleEndian(bytes, view, dataStart + e.begin, data);
    tensors.set(e.name, { dtype: e.dtype, shape: e.shape, data });
  }
  return { tensors, metadata };
}
