// ModelFolder over a directory on disk (command-line tools, the bench): each read opens the file
// and reads only the requested range, so a sharded multi-GB model is never read whole; and the
// sink the synthetic-folder generator writes a directory through.
import { mkdir, open, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkRange, type ModelFolder } from '../model/hf/folder.ts';
import type { FolderSink } from '../model/hf/synthetic.ts';

export class NodeFolder implements ModelFolder {
  constructor(readonly dir: string) {}

  get label(): string {
    return this.dir;
  }

  async list(): Promise<string[]> {
    const entries = await readdir(this.dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  }

  async size(name: string): Promise<number | null> {
    try {
      const s = await stat(join(this.dir, name));
      return s.isFile() ? s.size : null;
    } catch {
      return null;
    }
  }

  async read(name: string, start: number, end: number): Promise<Uint8Array> {
    checkRange(name, start, end, await this.size(name));
    const fh = await open(join(this.dir, name), 'r');
    try {
      const out = new Uint8Array(end - start);
      let done = 0;
      while (done < out.length) {
        const { bytesRead } = await fh.read(out, done, out.length - done, start + done);
        if (bytesRead === 0) throw new Error(`${name}: file ended at byte ${start + done} while reading [${start}, ${end})`);
        done += bytesRead;
      }
      return out;
    } finally {
      await fh.close();
    }
  }
}

/** A FolderSink writing into `dir` (created when missing); large files are appended block by block. */
export async function nodeFolderSink(dir: string): Promise<FolderSink> {
  await mkdir(dir, { recursive: true });
  return {
    async writeFile(name, bytes) {
      await writeFile(join(dir, name), bytes);
    },
    async open(name) {
      const fh = await open(join(dir, name), 'w');
      return {
        async write(b) {
          let done = 0;
          while (done < b.length) done += (await fh.write(b, done, b.length - done)).bytesWritten;
        },
        close: () => fh.close(),
      };
    },
  };
}
