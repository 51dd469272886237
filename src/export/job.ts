// The exported job as files: train/test Parquet, reward.py, the launch script and a README.
// Pure (no I/O): the CLI writes the files to a folder, the page zips them.
import type { PpoConfig } from '../rl/config.ts';
import { buildDataset, type JobDataset } from './dataset.ts';
import type { OpenRlhfCommand } from './openrlhf.ts';
import { rowsToParquet } from './parquet.ts';
import { planJob, type JobOptions, type JobPlan } from './plan.ts';
import { jobReadme } from './readme.ts';
import { rewardPy } from './rewardPy.ts';
import { engineCommand, renderScript, scriptName } from './script.ts';
import type { VerlCommand } from './verl.ts';

export { engineCommand, renderScript, scriptName };

export interface JobFile {
  path: string;
  data: Uint8Array;
  /** Unix mode bits for the zip / the folder (scripts are executable). */
  mode: number;
}

export interface Job {
  plan: JobPlan;
  dataset: JobDataset;
  command: VerlCommand | OpenRlhfCommand;
  files: JobFile[];
}

/** Throws JobError (naming the field and its allowed range) when the config cannot be exported. */
export function buildJob(config: PpoConfig, options: JobOptions): Job {
  const plan = planJob(config, options);
  const dataset = buildDataset(config, options.trainRows);
  const command = engineCommand(plan);
  const text = (s: string) => new TextEncoder().encode(s);
  const files: JobFile[] = [
    { path: 'README.md', data: text(jobReadme(plan, dataset.train.length, dataset.test.length)), mode: 0o644 },
    { path: scriptName(options.engine), data: text(renderScript(plan, command)), mode: 0o755 },
    { path: 'reward.py', data: text(rewardPy(config, options.engine)), mode: 0o644 },
    { path: 'train.parquet', data: rowsToParquet(dataset.train), mode: 0o644 },
    { path: 'test.parquet', data: rowsToParquet(dataset.test), mode: 0o644 },
  ];
  return { plan, dataset, command, files };
}
