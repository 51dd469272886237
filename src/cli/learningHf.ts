// `npm run learning -- --model DIR`: the presets for a real model (src/rl/hf/hfPresets.ts) trained
// on a Hugging Face chat model folder (the shipped one: public/models/chat-arithmetic) for several
// seeds, each run exactly as `npm run train -- --model DIR --task chat-arithmetic …` with the
// preset's settings (the same function, in this process), and one table: held-out accuracy before
// → after over K sampled answers a prompt (the same draws' seed before and after) and greedy, the
// training reward over the first and the last 10 iterations (mean ± sd over seeds), seconds per
// iteration, and whether the card's claim holds (✓ / ✗ with the reason). Exit 1 when a claim fails.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HF_PRESETS, type HfPreset } from '../rl/hf/hfPresets.ts';
import { trainHf } from './trainHf.ts';

export interface HfLearningOptions {
  model: string;
  presets: string[] | undefined;
  seeds: number[];
  evalCount: number;
  /** Answers drawn per held-out prompt for the sampled accuracy. */
  evalSamples: number;
  backend: string;
}

export interface HfSeedRun {
  seed: number;
  /** Held-out accuracy over the sampled answers, before and after. */
  sampledBefore: number;
  sampledAfter: number;
  /** Greedy held-out accuracy before and after. */
  before: number;
  after: number;
  /** Mean training reward over the first and the last 10 iterations. */
  rewardFirst: number;
  rewardLast: number;
  secondsPerIter: number;
}

export interface HfPresetResult {
  preset: string;
  runs: HfSeedRun[];
  claim: { ok: boolean; text: string };
}

/** The `npm run train` flags of a preset's run. */
export function presetFlags(p: HfPreset, o: { model: string; seed: number; evalCount: number; evalSamples: number; backend: string; out: string }): string[] {
  const s = p.settings;
  return [
    ...['--model', o.model, '--task', 'chat-arithmetic', '--eval-count', String(o.evalCount), '--eval-samples', String(o.evalSamples)],
    ...['--estimator', s.estimator, '--lora-rank', String(s.loraRank), '--iters', String(s.iterations), '--batch', String(s.promptsPerBatch)],
    ...['--samples-per-prompt', String(s.samplesPerPrompt), '--max-new-tokens', String(s.maxNewTokens), '--epochs', String(s.ppoEpochs)],
    ...['--mini-batches', String(s.miniBatches), '--lr', String(s.lr), '--kl-coef', String(s.klCoef), '--seed', String(o.seed)],
    ...['--backend', o.backend, '--out', o.out, '--quiet'],
  ];
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(xs.length, 1);
const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));

/**
 * The card's claim: the held-out accuracy over sampled answers rises, and the greedy held-out
 * accuracy does not fall by more than the card allows.
 */
export function judgeClaim(p: HfPreset, runs: HfSeedRun[]): { ok: boolean; text: string } {
  const rises = runs.map((r) => r.sampledAfter - r.sampledBefore);
  const drops = runs.map((r) => r.before - r.after);
  const m = mean(rises);
  const least = Math.min(...rises);
  const worstDrop = Math.max(...drops);
  const c = p.claim;
  const want = `held-out accuracy over sampled answers rises ≥ ${c.minMeanRise} on average and ≥ ${c.minSeedRise} on every seed; greedy held-out accuracy falls ≤ ${c.maxHeldOutDrop}`;
  if (m < c.minMeanRise) return { ok: false, text: `✗ ${want}: mean rise ${m.toFixed(3)}` };
  if (least < c.minSeedRise) return { ok: false, text: `✗ ${want}: seed ${runs[rises.indexOf(least)].seed} rose ${least.toFixed(3)}` };
  if (worstDrop > c.maxHeldOutDrop) return { ok: false, text: `✗ ${want}: seed ${runs[drops.indexOf(worstDrop)].seed} fell ${worstDrop.toFixed(3)}` };
  return { ok: true, text: `✓ ${want}: mean rise ${m.toFixed(3)}, least ${least.toFixed(3)}; largest held-out change ${(-worstDrop).toFixed(3)}` };
}

async function runSeed(p: HfPreset, o: HfLearningOptions, seed: number, dir: string): Promise<HfSeedRun> {
  const out = join(dir, `${p.id}-${seed}.jsonl`);
  const t0 = performance.now();
  const code = await trainHf(presetFlags(p, { model: o.model, seed, evalCount: o.evalCount, evalSamples: o.evalSamples, backend: o.backend, out }));
  if (code !== 0) throw new Error(`${p.name}, seed ${seed}: npm run train exited ${code}`);
  const lines = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  type Eval = { greedy_accuracy: number; accuracy?: number };
  const before = lines.find((l) => l.eval_before)?.eval_before as Eval | undefined;
  const after = lines.find((l) => l.eval)?.eval as Eval | undefined;
  const iters = lines.filter((l) => typeof l.iter === 'number' && l.reward_mean !== undefined);
  if (before?.accuracy === undefined || after?.accuracy === undefined || iters.length === 0)
    throw new Error(`${p.name}, seed ${seed}: the run logged no evaluation or no iteration`);
  const rewards = iters.map((l) => l.reward_mean as number);
  return {
    seed,
    sampledBefore: before.accuracy,
    sampledAfter: after.accuracy,
    before: before.greedy_accuracy,
    after: after.greedy_accuracy,
    rewardFirst: mean(rewards.slice(0, 10)),
    rewardLast: mean(rewards.slice(-10)),
    secondsPerIter: (performance.now() - t0) / 1000 / iters.length,
  };
}

export async function measureHfPresets(o: HfLearningOptions, log: (s: string) => void): Promise<HfPresetResult[]> {
  const chosen: HfPreset[] = [];
  for (const name of o.presets ?? HF_PRESETS.map((p) => p.name)) {
    const p = HF_PRESETS.find((x) => x.name === name);
    if (!p) throw new Error(`--preset ${JSON.stringify(name)}: with --model the presets are ${HF_PRESETS.map((x) => JSON.stringify(x.name)).join(', ')}`);
    chosen.push(p);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ppo-learning-hf-'));
  try {
    const results: HfPresetResult[] = [];
    for (const p of chosen) {
      const runs: HfSeedRun[] = [];
      for (const seed of o.seeds) {
        const r = await runSeed(p, o, seed, dir);
        log(
          `${p.name}, seed ${seed}: held-out sampled ${r.sampledBefore.toFixed(3)} → ${r.sampledAfter.toFixed(3)}, greedy ${r.before.toFixed(3)} → ${r.after.toFixed(3)}; ` +
            `reward ${r.rewardFirst.toFixed(3)} → ${r.rewardLast.toFixed(3)}, ${r.secondsPerIter.toFixed(1)} s/iteration`,
        );
        runs.push(r);
      }
      results.push({ preset: p.name, runs, claim: judgeClaim(p, runs) });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatHfTable(results: HfPresetResult[]): string {
  const rows = [['preset', 'sampled before', 'sampled after', 'rise', 'greedy before', 'greedy after', 'reward first 10', 'reward last 10', 's/iter', 'claim']];
  for (const r of results) {
    const col = (key: keyof HfSeedRun) => r.runs.map((x) => x[key]);
    const sb = col('sampledBefore');
    const sa = col('sampledAfter');
    const pm = (xs: number[]) => `${mean(xs).toFixed(3)} ± ${sd(xs).toFixed(3)}`;
    rows.push([
      r.preset,
      pm(sb),
      pm(sa),
      pm(sa.map((x, i) => x - sb[i])),
      pm(col('before')),
      pm(col('after')),
      pm(col('rewardFirst')),
      pm(col('rewardLast')),
      mean(col('secondsPerIter')).toFixed(1),
      r.claim.ok ? '✓' : '✗',
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  return rows.map((row) => row.map((x, c) => x.padEnd(widths[c])).join('  ')).join('\n');
}
