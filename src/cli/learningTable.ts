// The table `npm run learning` prints: per preset and arm, the headline metric SFT → final over
// seeds, iterations to half the gain, wall time and whether the preset's claim holds; and the
// loop that trains one preset's every arm on every seed. The command itself is learning.ts.
import { presetArms, type Preset } from '../rl/presets.ts';
import { claimFor, itersToHalfGain, mean, sd, startFinal, type ArmRuns, type ClaimResult, type MetricSpec } from './learningClaims.ts';
import { armConfig, makeBackend, runPreset, type BackendKind } from './presetRun.ts';

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
  const isRate = /accuracy|rate|pass_at_/.test(metric.name);
  return isRate ? `${(100 * x).toFixed(1)}%` : x.toFixed(3);
}

function fmtStat(s: { mean: number; sd: number } | null, metric: MetricSpec): string {
  if (!s) return 'n/a';
  return `${fmt(s.mean, metric)} ± ${fmt(s.sd, metric)}`;
}

function claimMark(c: ClaimResult): string {
  return c.ok === true ? '✓' : c.ok === false ? '✗' : '?';
}

/** The markdown table `npm run learning` prints (and docs/learning.md quotes). */
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
