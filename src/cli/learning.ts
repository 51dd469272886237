// Does every preset make its point within its budget? Trains every preset (every arm of a paired
// one) for several seeds with the project's own trainer and prints one table:
//   npm run learning [-- --seeds 3 --seed-base 1 --backend cpu|webgpu --family gpt|hf --preset NAME --arm LABEL --iters N --json out.json]
//   npm run learning -- --merge a.json --merge b.json …   (runs of some arms or seeds each, put together)
//   npm run learning -- --model public/models/chat-arithmetic [--preset NAME] [--seeds 3] [--eval-count 100] [--eval-samples 8]
//                                                         (the presets for a real model: learningHf.ts)
// Columns: preset, arm, headline metric, SFT value → final value (mean ± sd over seeds),
// iterations until half of the final gain, wall time per run, and whether the preset's claim holds
// (✓ / ✗ with the reason; "?" when a metric the claim needs is not logged).
// This is a benchmark, not a test: on the CPU backend the whole table takes about an hour. A
// paired preset's arms can run as separate processes (--arm, one --json each) and be put together
// with --merge, which prints the table and checks the claims as one run of them all would.
// --family hf trains every role on HfModel as the GPT-2 it is (src/rl/trainerModels.ts): the
// cards' claims measured on the Hugging Face path.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PRESETS, type Preset } from '../rl/presets.ts';
import { formatTable, measurePreset, mergeResults, type PresetResult } from './learningTable.ts';
import { resolvePresetArm, unknownPresetMessage, type BackendKind } from './presetRun.ts';
import { runCli } from '../node/runCli.ts';
import { formatHfTable, measureHfPresets } from './learningHf.ts';
import { familyFlag, type ModelFamily } from '../rl/trainerModels.ts';

const USAGE =
  'usage: npm run learning [-- --seeds 3] [--seed-base 1] [--backend cpu|webgpu] [--family gpt|hf] [--preset NAME] [--arm LABEL] [--iters N] [--eval-count 64] [--eval-samples 4] [--json out.json]\n' +
  '       npm run learning -- --merge a.json --merge b.json [--json merged.json]\n' +
  '       npm run learning -- --model DIR [--preset NAME] [--seeds 3] [--seed-base 1] [--eval-count 100] [--eval-samples 8] [--backend webgpu|cpu]';

/** What --json writes and --merge reads. */
interface LearningJson {
  started: string;
  backend: string;
  /** The model family the runs trained in; absent in files written before it could be chosen: 'gpt'. */
  family?: ModelFamily;
  seeds: number[];
  evalCount: number;
  evalSamples: number;
  results: PresetResult[];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string', default: '3' },
      'seed-base': { type: 'string', default: '1' },
      backend: { type: 'string', default: 'cpu' },
      family: { type: 'string', default: 'gpt' },
      preset: { type: 'string', multiple: true },
      arm: { type: 'string', multiple: true },
      merge: { type: 'string', multiple: true },
      iters: { type: 'string' },
      'eval-count': { type: 'string' },
      'eval-samples': { type: 'string' },
      json: { type: 'string' },
      model: { type: 'string' },
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
  // held-out prompts: 64 × 4 draws for the character presets, 100 × 8 (and greedy) for a real model's
  const evalCount = int('eval-count', values['eval-count'] ?? (values.model === undefined ? '64' : '100'), 1);
  const evalSamples = int('eval-samples', values['eval-samples'] ?? (values.model === undefined ? '4' : '8'), 1);
  if (values.backend !== 'cpu' && values.backend !== 'webgpu') problems.push(`--backend = ${JSON.stringify(values.backend)}: allowed: cpu, webgpu`);
  const { family, problem: familyProblem } = familyFlag(values.family);
  if (familyProblem) problems.push(familyProblem);
  if (problems.length > 0 || !family) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }
  if (values.model !== undefined) {
    if (values.merge || values.arm || values.iters !== undefined || family !== 'gpt') {
      console.error(`--model runs the presets for a real model as they are: leave out --merge, --arm, --iters and --family\n${USAGE}`);
      return 2;
    }
    const seeds = Array.from({ length: nSeeds }, (_, i) => seedBase + i);
    const started = new Date().toISOString();
    const results = await measureHfPresets({ model: values.model, presets: values.preset, seeds, evalCount, evalSamples, backend: values.backend! }, (s) => console.error(s));
    console.log(
      `\nnpm run learning --model ${values.model}: ${values.backend} backend, seeds ${seeds.join(', ')}, held-out accuracy on ${evalCount} prompts (× ${evalSamples} draws, and greedy), started ${started}\n`,
    );
    console.log(formatHfTable(results));
    console.log('\nClaims:');
    for (const r of results) console.log(`  ${r.preset}: ${r.claim.text}`);
    return results.every((r) => r.claim.ok) ? 0 : 1;
  }
  if (values.merge) {
    if (values.preset || values.arm || family !== 'gpt') {
      console.error(`--merge takes its presets, arms, seeds and family from the files: leave out --preset, --arm and --family\n${USAGE}`);
      return 2;
    }
    return merge(values.merge, values.json);
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
  for (const label of values.arm ?? []) {
    if (presets.length !== 1) {
      console.error(`--arm ${JSON.stringify(label)} needs exactly one --preset\n${USAGE}`);
      return 2;
    }
    const resolved = resolvePresetArm(presets[0].name, label);
    if ('error' in resolved) {
      console.error(resolved.error);
      return 2;
    }
  }
  const seeds = Array.from({ length: nSeeds }, (_, i) => seedBase + i);
  const started = new Date().toISOString();
  const results: PresetResult[] = [];
  for (const p of presets) {
    results.push(await measurePreset(p, { backend: values.backend as BackendKind, family, seeds, iters, evalCount, evalSamples, arms: values.arm, log: (s) => console.error(s) }));
    if (values.json)
      writeFileSync(values.json, JSON.stringify({ started, backend: values.backend, family, seeds, evalCount, evalSamples, results } satisfies LearningJson, null, 1));
  }
  console.log(
    `\nnpm run learning: ${values.backend} backend${family === 'gpt' ? '' : `, family ${family}`}, seeds ${seeds.join(', ')}, held-out eval ${evalCount} prompts × ${evalSamples} draws, started ${started}\n`,
  );
  return report(results);
}

function report(results: PresetResult[]): number {
  console.log(formatTable(results));
  console.log('\nClaims:');
  for (const r of results) console.log(`  ${r.preset}: ${r.claim.text}`);
  return results.every((r) => r.claim.ok === true) ? 0 : 1;
}

/** --merge: the files' results put together (mergeResults), printed and checked, optionally saved. */
function merge(files: string[], out: string | undefined): number {
  const parts: LearningJson[] = [];
  for (const f of files) {
    try {
      parts.push(JSON.parse(readFileSync(f, 'utf8')) as LearningJson);
    } catch (e) {
      console.error(`--merge ${f}: not a file \`npm run learning -- --json\` wrote (${(e as Error).message})`);
      return 2;
    }
  }
  const settings = (p: LearningJson) =>
    `${p.backend} backend${(p.family ?? 'gpt') === 'gpt' ? '' : `, family ${p.family}`}, held-out eval ${p.evalCount} prompts × ${p.evalSamples} draws`;
  if (parts.some((p) => settings(p) !== settings(parts[0]))) {
    console.error(`--merge: the files were measured differently:\n  ${parts.map((p, i) => `${files[i]}: ${settings(p)}`).join('\n  ')}`);
    return 2;
  }
  let results: PresetResult[];
  try {
    results = mergeResults(
      parts.flatMap((p) => p.results),
      PRESETS,
    );
  } catch (e) {
    console.error(`--merge: ${(e as Error).message}`);
    return 2;
  }
  const seeds = [...new Set(parts.flatMap((p) => p.seeds))].sort((a, b) => a - b);
  const started = parts.map((p) => p.started).sort()[0];
  if (out)
    writeFileSync(
      out,
      JSON.stringify(
        {
          started,
          backend: parts[0].backend,
          family: parts[0].family ?? 'gpt',
          seeds,
          evalCount: parts[0].evalCount,
          evalSamples: parts[0].evalSamples,
          results,
        } satisfies LearningJson,
        null,
        1,
      ),
    );
  console.log(`\nnpm run learning --merge of ${files.length} files: ${settings(parts[0])}, seeds ${seeds.join(', ')}, first started ${started}\n`);
  return report(results);
}

runCli(main);
