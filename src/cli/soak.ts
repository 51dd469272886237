// npm run soak -- --iters 1000 [--backend webgpu|cpu] [--task T] [--config file.json] [--tiny] [--out report.json]
// Trains one run for --iters iterations and reports GPU bytes held by the buffer pool, live GPU
// buffers, JS heap and time per iteration at 1%, 10%, 50% and 100% of the run, with a verdict:
// flat within 5% of the warm-up value (memory is checked after every iteration). Exit 1 when not
// flat, 2 on bad arguments. Run with --expose-gc (the npm script does) so the heap is measured
// after a collection.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Backend } from '../backend/backend.ts';
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { formatSoak, runSoak, tinySoakConfig } from '../fuzz/soak.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { makeWebGpuBackend } from '../node/backend.ts';
import { buildConfig } from '../rl/configMerge.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { readConfigFile } from './configFile.ts';
import { runCli } from '../node/runCli.ts';

const USAGE = 'usage: npm run soak -- --iters N [--backend webgpu|cpu] [--task arithmetic|sentiment|stop] [--seed S] [--config file.json] [--tiny] [--out report.json]';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      iters: { type: 'string', default: '1000' },
      backend: { type: 'string', default: 'webgpu' },
      task: { type: 'string' },
      seed: { type: 'string' },
      config: { type: 'string' },
      tiny: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const problems: string[] = [];
  const iters = Number(values.iters);
  if (!Number.isSafeInteger(iters) || iters < 10) problems.push(`--iters = ${JSON.stringify(values.iters)}: an integer ≥ 10 is required`);
  if (values.backend !== 'webgpu' && values.backend !== 'cpu') problems.push(`--backend = ${JSON.stringify(values.backend)}: allowed: webgpu, cpu`);
  const fileJson = readConfigFile(values.config, problems);
  const built = buildConfig(fileJson, { task: values.task, seed: values.seed });
  problems.push(...built.problems);
  if (problems.length > 0) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }
  const config = values.tiny ? tinySoakConfig(built.config) : built.config;
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const ckPath = join(root, 'public', 'checkpoints', `${config.task}.safetensors`);
  if (!existsSync(ckPath)) {
    console.error(`no SFT checkpoint at ${ckPath}: run \`npm run pretrain -- --task ${config.task}\` first`);
    return 1;
  }
  if (config.rewardSource !== 'rule') {
    console.error(`rewardSource "${config.rewardSource}" is not soaked here: use the rule reward`);
    return 2;
  }
  let rt: GpuRuntime | null = null;
  let be: Backend;
  if (values.backend === 'cpu') be = new CpuBackend();
  else ({ be, rt } = await makeWebGpuBackend());
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: new Uint8Array(readFileSync(ckPath)) });
  const gcNote = (globalThis as { gc?: unknown }).gc ? 'heap after GC' : 'heap without GC (run with --expose-gc)';
  console.error(`soak: ${config.task} on ${be.label}, ${iters} iterations, B = ${config.promptsPerBatch}×${config.samplesPerPrompt}, ${gcNote}`);
  const report = await runSoak({
    trainer,
    iters,
    memory: () => rt?.memory() ?? null,
    evalEvery: config.evalEvery,
    onPoint: (p) =>
      console.error(
        `  iteration ${p.iter}: ${p.iterS.toFixed(3)} s/iter (CPU ${p.cpuS.toFixed(3)} s), heap ${p.heapMB.toFixed(1)} MB (data ${p.dataMB.toFixed(1)})${p.gpu ? `, pool ${(p.gpu.poolBytes / 1048576).toFixed(2)} MB in ${p.gpu.liveBuffers} buffers` : ''}`,
      ),
  });
  trainer.dispose();
  console.log(formatSoak(report, `${config.task} on ${be.label}`));
  if (values.out) writeFileSync(values.out, JSON.stringify({ config, backend: be.label, ...report }, null, 2));
  return report.flat ? 0 : 1;
}

runCli(main);
