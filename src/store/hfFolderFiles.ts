// The files of a picked or dropped model folder, as the worker takes them: those directly inside
// the folder (a model folder is flat; a subfolder's files are not the model's), with the folder's
// name for the messages.

/** What a picker (<input webkitdirectory>) gives: each file with its path under the picked folder. */
export interface PathedFile {
  file: File;
  /** "folder/name" (webkitRelativePath), or just the name. */
  path: string;
}

export interface PickedFolder {
  label: string;
  files: File[];
}

/** The top-level files of one picked folder; `fallbackLabel` names a set of loose files. */
export function topLevelFiles(items: readonly PathedFile[], fallbackLabel: string): PickedFolder {
  let label: string | null = null;
  const files: File[] = [];
  for (const { file, path } of items) {
    const parts = path.split(/[\\/]/).filter((p) => p !== '');
    if (parts.length > 2) continue;
    if (parts.length === 2) label ??= parts[0];
    files.push(file);
  }
  return { label: label ?? fallbackLabel, files };
}

/** The picker's FileList as PathedFiles. */
export function pickedFiles(list: ArrayLike<File>): PathedFile[] {
  return Array.from(list, (file) => ({ file, path: file.webkitRelativePath || file.name }));
}
