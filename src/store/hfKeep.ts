// The picked model folder kept in this browser, so a reload offers it again without picking: its
// files copied into the origin-private file system (OPFS, navigator.storage.getDirectory), which
// never leaves the machine, under one folder; a small record beside it says what it is. The record
// is written last, so a copy cut short (the tab closed mid-way) is never offered.
import type { KeptHfFolder } from './hfModel.ts';

const DIR = 'hf-model';
const RECORD = 'hf-model.json';

/** The origin-private file system's root; throws where the browser has none. */
export async function root(): Promise<FileSystemDirectoryHandle> {
  if (typeof navigator === 'undefined' || !navigator.storage?.getDirectory) throw new Error('this browser has no origin-private file system');
  return navigator.storage.getDirectory();
}

/** Removes `name` (a file or a folder) from `dir`; nothing there is fine. */
export async function removeIfThere(dir: FileSystemDirectoryHandle, name: string): Promise<void> {
  try {
    await dir.removeEntry(name, { recursive: true });
  } catch (e) {
    if ((e as DOMException).name !== 'NotFoundError') throw e;
  }
}

/** Copies `files` (one folder's, flat) in place of any kept before; the record of what was kept. */
export async function keepFolder(label: string, files: readonly File[], now = Date.now()): Promise<KeptHfFolder> {
  const r = await root();
  await removeIfThere(r, RECORD);
  await removeIfThere(r, DIR);
  const dir = await r.getDirectoryHandle(DIR, { create: true });
  let bytes = 0;
  try {
    for (const f of files) {
      const w = await (await dir.getFileHandle(f.name, { create: true })).createWritable();
      await f.stream().pipeTo(w); // closes the writable: the file is complete on disk
      bytes += f.size;
    }
  } catch (e) {
    await removeIfThere(r, DIR).catch(() => undefined);
    throw e;
  }
  const kept: KeptHfFolder = { label, files: files.length, bytes, savedAt: now };
  const w = await (await r.getFileHandle(RECORD, { create: true })).createWritable();
  await w.write(JSON.stringify(kept));
  await w.close();
  return kept;
}

/** What is kept, or null (nothing, or a record that does not read as one). */
export async function readKept(): Promise<KeptHfFolder | null> {
  try {
    const file = await (await (await root()).getFileHandle(RECORD)).getFile();
    const k = JSON.parse(await file.text()) as Partial<KeptHfFolder>;
    if (typeof k.label !== 'string' || typeof k.files !== 'number' || typeof k.bytes !== 'number' || typeof k.savedAt !== 'number') return null;
    return { label: k.label, files: k.files, bytes: k.bytes, savedAt: k.savedAt };
  } catch {
    return null;
  }
}

/** The kept folder's files (File objects read lazily from disk). */
export async function keptFiles(): Promise<File[]> {
  const dir = await (await root()).getDirectoryHandle(DIR);
  const files: File[] = [];
  const entries = (dir as unknown as { values(): AsyncIterable<FileSystemHandle> }).values();
  for await (const h of entries) if (h.kind === 'file') files.push(await (h as FileSystemFileHandle).getFile());
  return files;
}

/** Deletes the kept folder and its record. */
export async function forgetKept(): Promise<void> {
  const r = await root();
  await removeIfThere(r, RECORD);
  await removeIfThere(r, DIR);
}
