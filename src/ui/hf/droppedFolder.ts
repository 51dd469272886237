// A folder dragged onto the page: Chromium, Firefox and Safari give its entry through
// DataTransferItem.webkitGetAsEntry (the File and Directory Entries API); its top-level files are
// read from the entry. Loose files dropped instead of a folder are taken as the folder.
import { type PickedFolder, topLevelFiles } from '../../store/hfFolderFiles.ts';

function entries(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const all: FileSystemEntry[] = [];
  // readEntries hands out a batch per call (100 in Chromium) until an empty one.
  return new Promise((resolve, reject) => {
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) return resolve(all);
        all.push(...batch);
        next();
      }, reject);
    next();
  });
}

const fileOf = (e: FileSystemFileEntry) => new Promise<File>((resolve, reject) => e.file(resolve, reject));

/** The dropped folder's top-level files; `looseLabel` names loose files dropped without a folder. */
export async function droppedFolder(dt: DataTransfer, looseLabel: string): Promise<PickedFolder> {
  const dropped = Array.from(dt.items, (i) => (i.kind === 'file' ? i.webkitGetAsEntry() : null)).filter((e): e is FileSystemEntry => e !== null);
  const dir = dropped.find((e) => e.isDirectory) as FileSystemDirectoryEntry | undefined;
  if (dir) {
    const files = await Promise.all((await entries(dir)).filter((e) => e.isFile).map((e) => fileOf(e as FileSystemFileEntry)));
    return { label: dir.name, files };
  }
  return topLevelFiles(
    Array.from(dt.files, (file) => ({ file, path: file.name })),
    looseLabel,
  );
}
