// The checks a file the visitor opens goes through, field by field: each refusal is a RunFileError
// naming the field (`run.metrics[3].values.kl`, `rows[2].responses[0].tokens[4].advantage`) and
// what stood there, so the page can say which part of which file it refused.

/**
 * Why a file was refused: `field` names the part (`run.metrics[3].values.kl`), `found` what stood
 * there (the format or version a foreign file has), `message` says it in English (notices.ts words
 * it in the page's language).
 */
export class RunFileError extends Error {
  constructor(
    readonly reason: 'not-json' | 'not-a-run' | 'own-model-run' | 'playground-run' | 'version' | 'damaged' | 'too-large' | 'not-served',
    readonly field: string,
    message: string,
    readonly found = '',
  ) {
    super(message);
    this.name = 'RunFileError';
  }
}

/** A file over `maxBytes` (checked before it is read whole, and again on its text). */
export const tooLarge = (maxBytes: number) => new RunFileError('too-large', 'file', `the file is over ${maxBytes / 2 ** 20} MiB`);

export const damaged = (field: string, what: string) => new RunFileError('damaged', field, `${field}: ${what}`);
export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
export const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

export function num(x: unknown, field: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw damaged(field, `expected a finite number, found ${shown(x)}`);
  return x;
}

export function count(x: unknown, field: string): number {
  if (!isCount(x)) throw damaged(field, `expected a whole number ≥ 0, found ${shown(x)}`);
  return x;
}

export function str(x: unknown, field: string, max = 10_000): string {
  if (typeof x !== 'string' || x.length > max) throw damaged(field, `expected text of at most ${max} characters, found ${shown(x)}`);
  return x;
}

export function list(x: unknown, field: string): unknown[] {
  if (!Array.isArray(x)) throw damaged(field, `expected a list, found ${shown(x)}`);
  return x;
}

export function shown(x: unknown): string {
  if (x === undefined) return 'nothing';
  const s = JSON.stringify(x) ?? String(x);
  return s.length > 40 ? `${s.slice(0, 37)}…` : s;
}

/** The two kinds of run file: a playground run's (runFile.ts) and a run of the visitor's own model (hfRunFile.ts). */
export const RUN_FILE_FORMATS = { playground: 'ppo-playground-run', ownModel: 'ppo-playground-lora-run' } as const;

/**
 * The JSON document of a run file of `kind` at one of `versions`. Refuses, naming why: a text over
 * `maxBytes`, not JSON, a run file of the other kind (each opens in its own place on the page),
 * another format, another version.
 */
export function readRunDocument(text: string, kind: keyof typeof RUN_FILE_FORMATS, versions: readonly number[], maxBytes: number): Record<string, unknown> {
  if (text.length > maxBytes) throw tooLarge(maxBytes);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new RunFileError('not-json', 'file', `not JSON (${e instanceof Error ? e.message : String(e)}): the file is damaged or not a run file`);
  }
  const format = RUN_FILE_FORMATS[kind];
  if (!isObject(doc) || doc.format !== format) {
    const found = shown(isObject(doc) ? doc.format : doc);
    if (isObject(doc) && doc.format === RUN_FILE_FORMATS.ownModel)
      throw new RunFileError('own-model-run', 'format', 'a run of a model of your own: it opens under “Your own model”', found);
    if (isObject(doc) && doc.format === RUN_FILE_FORMATS.playground)
      throw new RunFileError('playground-run', 'format', 'a playground run: it opens with the charts’ “Open run…”', found);
    throw new RunFileError('not-a-run', 'format', `not a run file: its format is ${found}, a run file's is "${format}"`, found);
  }
  if (!versions.includes(doc.version as number))
    throw new RunFileError('version', 'version', `written in run-file version ${shown(doc.version)}; this page reads version ${versions.join(' or ')}`, shown(doc.version));
  return doc;
}

/** The text of a file the page's own site serves at `path` (a run file beside the page), at most `maxBytes`. */
export async function fetchServedFile(path: string, maxBytes: number): Promise<string> {
  let res: Response;
  try {
    res = await fetch(path, { credentials: 'same-origin' });
  } catch (e) {
    throw new RunFileError('not-served', 'file', e instanceof Error ? e.message : String(e));
  }
  if (!res.ok) throw new RunFileError('not-served', 'file', `HTTP ${res.status}`);
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge(maxBytes);
  const text = await res.text();
  if (text.length > maxBytes) throw tooLarge(maxBytes);
  return text;
}

/** An ISO 8601 date at `field`. */
export function date(x: unknown, field: string): string {
  const d = str(x, field, 40);
  if (Number.isNaN(Date.parse(d))) throw damaged(field, `not a date: ${shown(d)}`);
  return d;
}

/** Bytes as base64, in chunks (String.fromCharCode takes a bounded number of arguments). */
export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** base64 back to bytes; null when the text is not base64. */
export function fromBase64(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
