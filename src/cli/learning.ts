// Does every preset make its point within its budget? Trains every preset (every arm of a paired
// one) for several seeds with the project's own trainer and prints one table:
//   npm run learning [-- --seeds 3 --seed-base 1 --backend cpu|webgpu --preset NAME --iters N --json out.json]
// Columns: preset, arm, headline metric, SFT value → final value (mean ± sd over seeds),
// iterations until half of the final gain, wall time per run, and whether the preset's claim holds
// (✓ / ✗ with the reason; "?" when a metric the claim needs is not logged).
// This is a benchmark, not a test: on the CPU backend the whole table takes about an hour.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PRESETS, presetArms, type Preset } from '../rl/presets.ts';
import { claimFor, itersToHalfGain, mean, sd, startFinal, type ArmRuns, type ClaimResult, type MetricSpec } from './learningClaims.ts';
import { armConfig, makeBackend, runPreset, unknownPresetMessage, type BackendKind } from './presetRun.ts';

const USAGE = 'usage: npm run learning [-- --seeds 3] [--seed-base 1] [--backend cpu|webgpu] [--preset NAME] [--iters N] [--eval-count 64] [--eval-samples 4] [--json out.json]';

export interface ArmSummary {
  label: string;
  metric: MetricSpec;
  start: { mean: number; sd: number } | null;
  final: { mean: number; sd: number } | null;
  itersToHalfGain: number | null;
  /** Mean seconds per run (one seed). */
  wallS: number;
}

export interface PresetResult {
  preset: string;
  iterations: number;
  claim: { text: string; kind: 'specific' | 'generic' } & ClaimResult;
  arms: (ArmSummary & { runs: ArmRuns['runs'] })[];
}

export function summarizeArm(a: ArmRuns, metric: MetricSpec): ArmSummary {
  const sf = a.runs.map((r) => startFinal(r, metric));
  const ok = sf.length > 0 && sf.every((x) => x);
  const stat = (xs: number[]) => ({ mean: mean(xs), sd: sd(xs) });
  return {
    label: a.label,
    metric,
    start: ok ? stat(sf.map((x) => x!.start)) : null,
    final: ok ? stat(sf.map((x) => x!.final)) : null,
    itersToHalfGain: itersToHalfGain(a.runs, metric),
    wallS: mean(a.runs.map((r) => r.wallS)),
  };
}

/** Formats a number: percentages for rates in [0, 1] metrics, else 3 significant decimals. */
function fmt(x: number, metric: MetricSpec): string {
  const isRate = /accuracy|rate/.test(metric.name);
  return isRate ? `${(100 * x).toFixed(1)}%` : x.toFixed(3);
}

function fmtStat(s: { mean: number; sd: number } | null, metric: MetricSpec): string {
  if (!s) return 'n/a';
  return `${fmt(s.mean, metric)} ± ${fmt(s.sd, metric)}`;
}

function claimMark(c: ClaimResult): string {
  return c.ok === true ? '✓' : c.ok === false ? '✗' : '?';
}

/** The markdown table `npm run learning` prints (and the README quotes). */
export function formatTable(results: PresetResult[]): string {
  const header = ['preset', 'arm', 'metric', 'SFT → final (mean ± sd)', 'iters to ½ gain', 'wall / run', 'claim'];
  const rows: string[][] = [];
  for (const p of results) {
    p.arms.forEach((a, k) => {
      const metricName = `${a.metric.name}${a.metric.source === 'eval' ? ' (held-out)' : ' (train)'}`;
      rows.push([
        k === 0 ? p.preset : '',
        a.label,
        metricName,
        `${fmtStat(a.start, a.metric)} → ${fmtStat(a.final, a.metric)}`,
        a.itersToHalfGain === null ? '—' : `${a.itersToHalfGain} / ${p.iterations}`,
        `${a.wallS.toFixed(0)} s`,
        k === p.arms.length - 1 ? `${claimMark(p.claim)}${p.claim.kind === 'generic' ? ' generic' : ''}: ${p.claim.reason}` : '(paired ↓)',
      ]);
    });
  }
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** One preset, every arm, every seed. */
export async function measurePreset(
  preset: Preset,
  o: { backend: BackendKind; seeds: number[]; iters?: number; evalCount: number; evalSamples: number; log: (s: string) => void },
): Promise<PresetResult> {
  const spec = claimFor(preset.name);
  const iterations = o.iters ?? preset.iterations;
  const arms: ArmRuns[] = [];
  for (const arm of presetArms(preset)) {
    const runs: ArmRuns['runs'] = [];
    for (const seed of o.seeds) {
      const be = await makeBackend(o.backend);
      const config = armConfig(arm.values, seed);
      o.log(`[learning] ${preset.name} / ${arm.label} / seed ${seed}: ${iterations} iterations on ${be.label}`);
      const run = await runPreset({ be, config, iters: iterations, evalCount: o.evalCount, evalSamples: o.evalSamples });
      const sf = startFinal(run, spec.metric);
      o.log(`[learning]   ${spec.metric.name} ${sf ? `${sf.start.toFixed(3)} → ${sf.final.toFixed(3)}` : 'not logged'} in ${run.wallS.toFixed(0)} s`);
      runs.push(run);
    }
    arms.push({ label: arm.label, runs });
  }
  const klTarget = armConfig(preset.values, 1).klTarget;
  const claim = spec.check(arms, { klTarget });
  return {
    preset: preset.name,
    iterations,
    claim: { text: spec.text, kind: spec.kind, ...claim },
    arms: arms.map((a) => ({ ...summarizeArm(a, spec.metric), runs: a.runs })),
  };
}

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

// Run only as a script (tests import the helpers above).
if (process.argv[1] && /learning\.ts$/.test(process.argv[1])) {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
