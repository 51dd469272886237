// The table `npm run learning` prints: per preset and arm, the headline metric SFT → final over
// seeds, iterations to half the gain, wall time and whether the preset's claim holds; and the
// loop that trains one preset's every arm on every seed. The command itself is learning.ts.
import { armConfig, presetArms, type Preset } from '../rl/presets.ts';
import { claimFor, itersToHalfGain, mean, sd, startFinal, type ArmRuns, type ClaimResult, type MetricSpec } from './learningClaims.ts';
import { makeBackend, runPreset, type BackendKind } from './presetRun.ts';
import type { ModelFamily } from '../rl/trainerModels.ts';

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

/**
 * One preset, every arm (or the arms named in `arms`), every seed. With some arms only, the claim
 * is not checked ("?"): `mergeResults` puts the arms of several such runs back together and checks it.
 */
export async function measurePreset(
  preset: Preset,
  o: { backend: BackendKind; family?: ModelFamily; seeds: number[]; iters?: number; evalCount: number; evalSamples: number; arms?: readonly string[]; log: (s: string) => void },
): Promise<PresetResult> {
  const spec = claimFor(preset.name);
  const iterations = o.iters ?? preset.iterations;
  const all = presetArms(preset);
  const chosen = o.arms ? all.filter((a) => o.arms!.includes(a.label)) : all;
  const arms: ArmRuns[] = [];
  for (const arm of chosen) {
    const runs: ArmRuns['runs'] = [];
    for (const seed of o.seeds) {
      const be = await makeBackend(o.backend);
      const config = armConfig(preset, all.indexOf(arm), seed);
      o.log(`[learning] ${preset.name} / ${arm.label} / seed ${seed}: ${iterations} iterations on ${be.label}${o.family && o.family !== 'gpt' ? ` (family ${o.family})` : ''}`);
      const run = await runPreset({ be, config, iters: iterations, evalCount: o.evalCount, evalSamples: o.evalSamples, family: o.family });
      const sf = startFinal(run, spec.metric);
      o.log(`[learning]   ${spec.metric.name} ${sf ? `${sf.start.toFixed(3)} → ${sf.final.toFixed(3)}` : 'not logged'} in ${run.wallS.toFixed(0)} s`);
      runs.push(run);
    }
    arms.push({ label: arm.label, runs });
  }
  return resultOf(preset, iterations, arms, chosen.length < all.length);
}

/** The table row of a preset's arms: each arm summarised and, when every arm is there, the claim checked. */
function resultOf(preset: Preset, iterations: number, arms: ArmRuns[], partial: boolean): PresetResult {
  const spec = claimFor(preset.name);
  const claim: ClaimResult = partial
    ? { ok: null, reason: `${arms.length} of ${presetArms(preset).length} arms: put the runs together with --merge to check the claim` }
    : spec.check(arms, { klTarget: armConfig(preset, 0, 1).klTarget });
  return {
    preset: preset.name,
    iterations,
    claim: { text: spec.text, kind: spec.kind, ...claim },
    arms: arms.map((a) => ({ ...summarizeArm(a, spec.metric), runs: a.runs })),
  };
}

/**
 * The results of several `npm run learning` runs of the same presets, for different arms or seeds,
 * put together: per preset, each arm's runs from every file (in the preset's arm order, by seed),
 * then the table row and the claim as one run of them all would have given. Throws, naming the
 * preset, when the runs disagree on the budget or repeat a seed of an arm.
 */
export function mergeResults(parts: readonly PresetResult[], presets: readonly Preset[]): PresetResult[] {
  const out: PresetResult[] = [];
  for (const preset of presets) {
    const mine = parts.filter((r) => r.preset === preset.name);
    if (mine.length === 0) continue;
    const iterations = mine[0].iterations;
    if (mine.some((r) => r.iterations !== iterations))
      throw new Error(`${preset.name}: the runs to merge have different budgets (${mine.map((r) => r.iterations).join(', ')} iterations)`);
    const arms: ArmRuns[] = [];
    for (const { label } of presetArms(preset)) {
      const runs = mine.flatMap((r) => r.arms.filter((a) => a.label === label).flatMap((a) => a.runs)).sort((a, b) => a.seed - b.seed);
      const seeds = runs.map((r) => r.seed);
      const twice = seeds.find((x, i) => seeds.indexOf(x) !== i);
      if (twice !== undefined) throw new Error(`${preset.name} / ${label}: seed ${twice} is in more than one of the runs to merge`);
      if (runs.length > 0) arms.push({ label, runs });
    }
    // the claims pair arms seed by seed
    const seedList = (a: ArmRuns) => a.runs.map((r) => r.seed).join(', ');
    const odd = arms.find((a) => seedList(a) !== seedList(arms[0]));
    if (odd) throw new Error(`${preset.name}: arm ${odd.label} has seeds ${seedList(odd)}, arm ${arms[0].label} ${seedList(arms[0])}; merge runs of the same seeds`);
    out.push(resultOf(preset, iterations, arms, arms.length < presetArms(preset).length));
  }
  return out;
}
