// `npm run record-runs`: trains every preset's arms (or those named) with the page's own worker code
// and writes each as the run file the card's "Show the result" opens (public/runs/presets/); the
// "Your own model" presets train the shipped chat model (recordHfPreset.ts):
//   npm run record-runs [-- --preset NAME …] [--arm LABEL …] [--seed 1] [--backend cpu|webgpu] [--out public/runs/presets] [--iters N]
// Seed 1 is the first seed of the claim tables in docs/learning.md: the same config and seed train
// the same iterations as `npm run learning`'s run of that seed (recordArm.ts says why).
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { runCli } from '../node/runCli.ts';
import { hostBackend } from '../node/backend.ts';
import { HF_PRESETS, type HfPreset } from '../rl/hf/hfPresets.ts';
import { PRESETS, type Preset, presetArms } from '../rl/presets.ts';
import { hfPresetRunPath, presetRunPath } from '../store/presetResults.ts';
import { recordArm } from './recordArm.ts';
import { recordHfPreset } from './recordHfPreset.ts';
import type { BackendChoice } from '../worker/protocol.ts';

const isHfPreset = (p: Preset | HfPreset): p is HfPreset => 'settings' in p;

const USAGE = 'usage: npm run record-runs [-- --preset NAME …] [--arm LABEL …] [--seed 1] [--backend cpu|webgpu] [--out public/runs/presets] [--iters N]';

function parse() {
  return parseArgs({
    options: {
      preset: { type: 'string', multiple: true },
      arm: { type: 'string', multiple: true },
      seed: { type: 'string', default: '1' },
      backend: { type: 'string', default: 'cpu' },
      out: { type: 'string', default: join('public', 'runs', 'presets') },
      iters: { type: 'string' },
    },
  });
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values } = parsed;
  const problems: string[] = [];
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) problems.push(`--seed = ${JSON.stringify(values.seed)}: a whole number ≥ 0 is required`);
  const iters = values.iters === undefined ? undefined : Number(values.iters);
  if (iters !== undefined && (!Number.isSafeInteger(iters) || iters < 1)) problems.push(`--iters = ${JSON.stringify(values.iters)}: a whole number ≥ 1 is required`);
  const backend = values.backend;
  if (backend !== 'cpu' && backend !== 'webgpu') problems.push(`--backend = ${JSON.stringify(backend)}: allowed: cpu, webgpu`);
  const named = (n: string) => PRESETS.find((p) => p.name === n) ?? HF_PRESETS.find((p) => p.name === n) ?? n;
  const all = [...PRESETS, ...HF_PRESETS];
  const presets = values.preset ? values.preset.map(named) : all;
  for (const p of presets) if (typeof p === 'string') problems.push(`--preset = ${JSON.stringify(p)}: allowed: ${all.map((x) => JSON.stringify(x.name)).join(', ')}`);
  const chosen = presets.filter((p): p is Preset => typeof p !== 'string' && !isHfPreset(p));
  for (const label of values.arm ?? [])
    if (!chosen.some((p) => presetArms(p).some((a) => a.label === label)))
      problems.push(
        `--arm = ${JSON.stringify(label)}: no chosen preset has that arm; their arms: ${chosen.flatMap((p) => presetArms(p).map((a) => JSON.stringify(a.label))).join(', ')}`,
      );
  if (problems.length > 0) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }
  mkdirSync(values.out!, { recursive: true });
  for (const preset of presets) {
    if (typeof preset === 'string') continue;
    if (isHfPreset(preset)) {
      if (values.arm) continue;
      const file = join(values.out!, basename(hfPresetRunPath(preset)));
      console.error(`[record-runs] ${preset.name}: ${iters ?? preset.settings.iterations} iterations of the shipped chat model, ${backend} backend`);
      // A device of its own per preset, ended after it (a lost one ends the recording with its reason).
      let ended = false;
      const host = await hostBackend(backend as BackendChoice, (reason) => {
        if (!ended) console.error(`[record-runs] the GPU device was lost: ${reason}`);
      });
      const rec = await recordHfPreset({
        preset,
        be: host.be,
        iterations: iters,
        onRow: (row) => console.error(`[record-runs]   iteration ${row.iter}: reward_mean ${row.reward_mean.toFixed(3)}`),
      }).finally(() => {
        ended = true;
        host.destroy?.();
      });
      writeFileSync(file, rec.text);
      const [before, after] = [rec.evals.find((e) => e.when === 'before'), rec.evals.find((e) => e.when === 'after')];
      console.log(
        `${file}: ${(rec.text.length / 1024).toFixed(0)} KiB, ${rec.rows.length} iterations, held-out greedy ${before?.greedyAccuracy ?? '–'} → ${after?.greedyAccuracy ?? '–'}, ` +
          `sampled ${before?.sampled?.accuracy ?? '–'} → ${after?.sampled?.accuracy ?? '–'}, ${rec.seconds.toFixed(0)} s`,
      );
      continue;
    }
    for (const [i, arm] of presetArms(preset).entries()) {
      if (values.arm && !values.arm.includes(arm.label)) continue;
      const file = join(values.out!, basename(presetRunPath(preset, i)));
      console.error(`[record-runs] ${preset.name} / ${arm.label}: ${iters ?? preset.iterations} iterations, seed ${seed}, ${backend} backend`);
      const rec = await recordArm({
        preset,
        arm: i,
        seed,
        backend: backend as 'cpu' | 'webgpu',
        iterations: iters,
        onMessage: (m) => {
          if (m.type === 'metrics' && m.iter % 10 === 0) console.error(`[record-runs]   iteration ${m.iter}`);
        },
      });
      writeFileSync(file, rec.text);
      console.log(
        `${file}: ${(rec.text.length / 1024).toFixed(0)} KiB, ${rec.recorder.metrics.length} iterations, ${rec.recorder.evals.length} evaluations, ${rec.recorder.traces.length} inspected, ${rec.seconds.toFixed(0)} s`,
      );
    }
  }
  return 0;
}

runCli(main);
