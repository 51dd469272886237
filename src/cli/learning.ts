// Does every preset make its point within its budget? Trains every preset (every arm of a paired
// one) for several seeds with the project's own trainer and prints one table:
//   npm run learning [-- --seeds 3 --seed-base 1 --backend cpu|webgpu --preset NAME --iters N --json out.json]
// Columns: preset, arm, headline metric, SFT value → final value (mean ± sd over seeds),
// iterations until half of the final gain, wall time per run, and whether the preset's claim holds
// (✓ / ✗ with the reason; "?" when a metric the claim needs is not logged).
// This is a benchmark, not a test: on the CPU backend the whole table takes about an hour.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PRESETS, type Preset } from '../rl/presets.ts';
import { formatTable, measurePreset, type PresetResult } from './learningTable.ts';
import { unknownPresetMessage, type BackendKind } from './presetRun.ts';
import { runCli } from '../node/runCli.ts';

const USAGE = 'usage: npm run learning [-- --seeds 3] [--seed-base 1] [--backend cpu|webgpu] [--preset NAME] [--iters N] [--eval-count 64] [--eval-samples 4] [--json out.json]';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string', default: '3' },
      'seed-base': { type: 'string', default: '1' },
      backend: { type: 'string', default: 'cpu' },
      preset: { type: 'string', multiple: true },
      iters: { type: 'string' },
      'eval-count': { type: 'string', default: '64' },
      'eval-samples': { type: 'string', default: '4' },
      json: { type: 'string' },
    },
  });
  const problems: string[] = [];
  const int = (flag: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) problems.push(`--${flag} = ${JSON.stringify(v)}: an integer ≥ ${min} is required`);
    return n;
  };
  const nSeeds = int('seeds', values.seeds, 1);
  const seedBase = int('seed-base', values['seed-base'], 0);
  const iters = values.iters === undefined ? undefined : int('iters', values.iters, 1);
  const evalCount = int('eval-count', values['eval-count'], 1);
  const evalSamples = int('eval-samples', values['eval-samples'], 1);
  if (values.backend !== 'cpu' && values.backend !== 'webgpu') problems.push(`--backend = ${JSON.stringify(values.backend)}: allowed: cpu, webgpu`);
  if (problems.length > 0) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }
  const presets: Preset[] = [];
  for (const name of values.preset ?? PRESETS.map((p) => p.name)) {
    const p = PRESETS.find((x) => x.name === name);
    if (!p) {
      console.error(unknownPresetMessage(name));
      return 2;
    }
    presets.push(p);
  }
  const seeds = Array.from({ length: nSeeds }, (_, i) => seedBase + i);
  const started = new Date().toISOString();
  const results: PresetResult[] = [];
  for (const p of presets) {
    results.push(await measurePreset(p, { backend: values.backend as BackendKind, seeds, iters, evalCount, evalSamples, log: (s) => console.error(s) }));
    if (values.json) writeFileSync(values.json, JSON.stringify({ started, backend: values.backend, seeds, evalCount, evalSamples, results }, null, 1));
  }
  console.log(`\nnpm run learning: ${values.backend} backend, seeds ${seeds.join(', ')}, held-out eval ${evalCount} prompts × ${evalSamples} draws, started ${started}\n`);
  console.log(formatTable(results));
  console.log('\nClaims:');
  for (const r of results) console.log(`  ${r.preset}: ${r.claim.text}`);
  return results.every((r) => r.claim.ok === true) ? 0 : 1;
}

runCli(main);
