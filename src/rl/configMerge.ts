// Config assembly for the headless runner: defaults ← a JSON file ← command-line flags, with
// every problem of the result reported at once (validateConfig).
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from './config.ts';

/** defaults ← config file ← flags; returns the merged object and every problem found. */
export function buildConfig(fileJson: unknown, flags: { task?: string; seed?: string }): { config: PpoConfig; problems: string[] } {
  const problems: string[] = [];
  let fromFile: Record<string, unknown> = {};
  if (fileJson !== undefined) {
    if (typeof fileJson !== 'object' || fileJson === null || Array.isArray(fileJson)) problems.push('--config: the file must hold a JSON object');
    else fromFile = fileJson as Record<string, unknown>;
  }
  const merged: Record<string, unknown> = { ...DEFAULT_CONFIG, ...fromFile };
  if (flags.task !== undefined) merged.task = flags.task;
  if (flags.seed !== undefined) merged.seed = Number(flags.seed);
  problems.push(...validateConfig(merged as Partial<PpoConfig> & Record<string, unknown>).map((p) => p.message));
  return { config: merged as unknown as PpoConfig, problems };
}
