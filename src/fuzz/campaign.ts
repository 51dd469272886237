// The fuzzing campaign: every target with its own seeded stream (so `--only` replays the same
// inputs as a full run), a report per target, and the total of defects.
import type { Backend } from '../backend/backend.ts';
import { DEFAULT_CONFIG } from '../rl/config.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { Rng } from '../util/rng.ts';
import { fuzzCheckpoints, checkpointSeeds, type CheckpointSeeds } from './checkpoints.ts';
import { fuzzConfigs } from './configs.ts';
import { fuzzFiles } from './files.ts';
import { fuzzKernels } from './kernels.ts';
import { defectCount, type TargetReport } from './outcome.ts';

export const FUZZ_TARGETS = ['configs', 'checkpoints', 'kernels', 'files'] as const;
export type FuzzTarget = (typeof FUZZ_TARGETS)[number];

export interface CampaignOptions {
  /** Inputs per target. */
  count: number;
  seed: number;
  only?: readonly FuzzTarget[];
  /** Time limit of one input. */
  limitMs: number;
  /** The float64 CPU backend: every target runs on it. */
  cpu: Backend;
  /** When given, `webgpuCount` kernel inputs also run on it. */
  webgpu?: Backend;
  webgpuCount?: number;
  /** The shipped SFT checkpoint of the arithmetic task: a seed file, and the live trainer for setConfig. */
  arithmeticCheckpoint?: Uint8Array;
  pageCheck?: CheckpointSeeds['pageCheck'];
}

/** Seed of one target's stream: the run seed mixed with the target's name. */
function targetRng(seed: number, target: string): Rng {
  let h = seed >>> 0;
  for (const c of target) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return new Rng(h);
}

export async function runCampaign(o: CampaignOptions): Promise<TargetReport[]> {
  const only = new Set(o.only ?? FUZZ_TARGETS);
  const reports: TargetReport[] = [];
  if (only.has('configs')) {
    const trainer = o.arithmeticCheckpoint
      ? await PpoTrainer.create({ be: o.cpu, config: { ...DEFAULT_CONFIG, task: 'arithmetic' }, actorCheckpoint: o.arithmeticCheckpoint })
      : undefined;
    try {
      reports.push(...(await fuzzConfigs(targetRng(o.seed, 'configs'), o.count, o.limitMs, trainer)));
    } finally {
      trainer?.dispose();
    }
  }
  if (only.has('checkpoints')) {
    const seeds = await checkpointSeeds(o.cpu, o.arithmeticCheckpoint ? [o.arithmeticCheckpoint] : []);
    seeds.pageCheck = o.pageCheck;
    try {
      reports.push(...(await fuzzCheckpoints(targetRng(o.seed, 'checkpoints'), o.count, o.limitMs, seeds)));
    } finally {
      seeds.target.dispose();
      seeds.state?.trainer.dispose();
    }
  }
  if (only.has('kernels')) {
    reports.push(await fuzzKernels(targetRng(o.seed, 'kernels'), o.count, o.limitMs, o.cpu, 'CPU float64'));
    if (o.webgpu && (o.webgpuCount ?? 0) > 0) reports.push(await fuzzKernels(targetRng(o.seed, 'kernels'), o.webgpuCount!, o.limitMs, o.webgpu, 'WebGPU sample'));
  }
  if (only.has('files')) reports.push(...(await fuzzFiles(targetRng(o.seed, 'files'), o.count, o.limitMs, o.cpu)));
  return reports;
}

export function totalDefects(reports: readonly TargetReport[]): number {
  return reports.reduce((n, r) => n + defectCount(r), 0);
}

/** A fixed-width table: target, tried, then each verdict. */
export function formatReports(reports: readonly TargetReport[]): string {
  const w = Math.max(...reports.map((r) => r.target.length), 6);
  const head = `${'target'.padEnd(w)}  ${['tried', 'valid', 'named', 'crash', 'invalid', 'hang'].map((h) => h.padStart(8)).join('')}`;
  const lines = reports.map(
    (r) => `${r.target.padEnd(w)}  ${[r.tried, r.counts.ok, r.counts.named, r.counts.crash, r.counts.invalid, r.counts.hang].map((n) => String(n).padStart(8)).join('')}`,
  );
  const defects = reports.flatMap((r) => r.defects.map((d) => `  ${r.target}: ${d}`));
  return [head, ...lines, ...(defects.length > 0 ? ['defects:', ...defects] : [])].join('\n');
}
