// A model folder as the loader sees it: names, sizes and byte ranges, nothing more. The page backs it
// with File / FileSystemFileHandle objects (src/model/hf/browserFolder.ts), Node with fs
// (src/node/hfFolder.ts), tests and the synthetic generator with bytes in memory (MemoryFolder).
// Large files are read in ranges (a safetensors header, then one tensor at a time), so a 1 GB
// weights file never sits in memory whole.

export interface ModelFolder {
  /** What messages call the folder: its name or path. */
  readonly label: string;
  /** File names at the top level of the folder (subfolders are not read). */
  list(): Promise<string[]>;
  /** Size of a file in bytes, or null when the folder has no such file. */
  size(name: string): Promise<number | null>;
  /** Bytes [start, end) of a file. Throws, naming the file, when it is missing or the range leaves it. */
  read(name: string, start: number, end: number): Promise<Uint8Array>;
}

/** The error every implementation throws for a range outside a file (or a missing file). */
export function rangeError(name: string, start: number, end: number, size: number | null): Error {
  if (size === null) return new Error(`${name} is missing`);
  return new Error(`${name}: cannot read bytes [${start}, ${end}) of a file of ${size} bytes`);
}

export function checkRange(name: string, start: number, end: number, size: number | null): void {
  if (size === null || !Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > size) {
    throw rangeError(name, start, end, size);
  }
}

/** Reads a whole (small) file as UTF-8 text; null when it is missing. */
export async function readTextFile(folder: ModelFolder, name: string): Promise<string | null> {
  const size = await folder.size(name);
  if (size === null) return null;
  return new TextDecoder('utf-8', { fatal: false }).decode(await folder.read(name, 0, size));
}

/** Files a loader reads whole (JSON, templates) are capped so a mislabelled 4 GB file is refused, not read. */
export const MAX_JSON_BYTES = 64 * 1024 * 1024;

/** Reads and parses a JSON file; null when it is missing. Errors name the file. */
export async function readJsonFile(folder: ModelFolder, name: string): Promise<unknown | null> {
  const size = await folder.size(name);
  if (size === null) return null;
  if (size > MAX_JSON_BYTES) throw new Error(`${name} is ${size} bytes; a JSON file of a model folder is read whole and must stay under ${MAX_JSON_BYTES} bytes`);
  const text = new TextDecoder('utf-8').decode(await folder.read(name, 0, size));
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new Error(`${name} is not valid JSON: ${(e as Error).message}`);
  }
}

/** A folder held in memory (tests, the synthetic generator before it writes to disk). */
export class MemoryFolder implements ModelFolder {
  readonly files = new Map<string, Uint8Array>();
  constructor(
    readonly label = 'memory',
    files: Iterable<[string, Uint8Array]> = [],
  ) {
    for (const [n, b] of files) this.files.set(n, b);
  }
  async list(): Promise<string[]> {
    return [...this.files.keys()].sort();
  }
  async size(name: string): Promise<number | null> {
    return this.files.get(name)?.length ?? null;
  }
  async read(name: string, start: number, end: number): Promise<Uint8Array> {
    const b = this.files.get(name);
    checkRange(name, start, end, b ? b.length : null);
    return b!.subarray(start, end);
  }
  setText(name: string, text: string): void {
    this.files.set(name, new TextEncoder().encode(text));
  }
  setJson(name: string, value: unknown): void {
    this.setText(name, JSON.stringify(value, null, 2));
  }
}
