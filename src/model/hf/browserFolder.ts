// ModelFolder over what a page gets from the visitor: the File objects of a folder picker
// (<input webkitdirectory>) or a drop, or a FileSystemDirectoryHandle (showDirectoryPicker, OPFS).
// A File is a lazy handle: `slice(start, end).arrayBuffer()` reads only that range from disk.
import { checkRange, type ModelFolder } from './folder.ts';

/** The file name without the folder part: "SmolLM2-135M/config.json" → "config.json". */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1];
}

export class FileListFolder implements ModelFolder {
  private readonly byName = new Map<string, Blob>();

  /**
   * `files` of one folder; a picker gives `webkitRelativePath` "folder/name", so only files directly
   * inside the picked folder are kept (one level, as a model folder is flat).
   */
  constructor(
    files: Iterable<File>,
    readonly label = 'picked folder',
  ) {
    for (const f of files) {
      const rel = f.webkitRelativePath || f.name;
      const depth = rel.split(/[\\/]/).length;
      if (depth > 2) continue;
      this.byName.set(baseName(rel), f);
    }
  }

  async list(): Promise<string[]> {
    return [...this.byName.keys()].sort();
  }

  async size(name: string): Promise<number | null> {
    return this.byName.get(name)?.size ?? null;
  }

  async read(name: string, start: number, end: number): Promise<Uint8Array> {
    const f = this.byName.get(name);
    checkRange(name, start, end, f ? f.size : null);
    return new Uint8Array(await f!.slice(start, end).arrayBuffer());
  }
}

/** The folder's files from a directory handle (top level only), as a FileListFolder. */
export async function folderFromDirectoryHandle(dir: FileSystemDirectoryHandle): Promise<FileListFolder> {
  const files: File[] = [];
  // `values()` is in the File System Access spec; @webgpu's DOM lib types may lag behind it.
  const entries = (dir as unknown as { values(): AsyncIterable<FileSystemHandle> }).values();
  for await (const h of entries) {
    if (h.kind === 'file') files.push(await (h as FileSystemFileHandle).getFile());
  }
  return new FileListFolder(files, dir.name);
}
