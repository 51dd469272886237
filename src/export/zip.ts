// The job's files as one zip (fflate), inside a folder named after the job, scripts executable.
import { zipSync, type Zippable } from 'fflate';
import type { JobFile } from './job.ts';

export function zipJob(folder: string, files: JobFile[]): Uint8Array {
  const tree: Zippable = {};
  for (const f of files) {
    // os 3 = Unix, so the mode bits in `attrs` (high 16 bits) are honoured by unzip.
    tree[`${folder}/${f.path}`] = [f.data, { os: 3, attrs: (0o100000 | f.mode) << 16, level: f.path.endsWith('.parquet') ? 0 : 6 }];
  }
  return zipSync(tree, { mtime: new Date('2026-01-01T00:00:00Z') });
}
