// The project's files under a folder, by extension: paths relative to the repository root.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

export function sourceFiles(dir: string, extensions: RegExp, out: string[] = []): string[] {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) sourceFiles(p, extensions, out);
    else if (extensions.test(e.name)) out.push(p);
  }
  return out;
}
