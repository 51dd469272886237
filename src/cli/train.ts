// Headless PPO runs in Node (WebGPU through Dawn, or the float64 CPU reference):
//   npm run train -- --task arithmetic --iters 50 [--seed S] [--config file.json]
//                    [--out metrics.jsonl] [--backend webgpu|cpu] [--checkpoint file] [--eval-count N] [--eval-samples K]
//                    [--reward-model file]
// With rewardSource "model" the scores come from the task's learned reward model
// (public/checkpoints/<task>_rm.safetensors, or --reward-model).
// Writes {"eval_before": {...}} (the SFT policy on held-out prompts: `accuracy` etc. averaged over
// K samples per prompt at the rollout temperature, `greedy_accuracy` etc. for greedy decoding), one JSON object of metrics
// per iteration, then {"eval": {...}}, to --out and to stdout. An invalid config (defaults ←
// --config JSON ← flags) exits with status 2 and every problem listed.
import { existsSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Backend } from '../backend/backend.ts';
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { nodeDevice } from '../node/webgpu.ts';
import { buildConfig } from '../rl/configMerge.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { getTask } from '../tasks/index.ts';

const USAGE =
  'usage: npm run train -- --task <arithmetic|sentiment|stop> --iters N [--seed S] [--config file.json] [--out metrics.jsonl] [--backend webgpu|cpu] [--checkpoint file.safetensors] [--eval-count N] [--eval-samples K] [--reward-model file.safetensors] [--quiet]';

async function makeBackend(kind: string): Promise<Backend> {
  if (kind === 'cpu') return new CpuBackend();
  const { device, adapterName } = await nodeDevice();
  return new WebGpuBackend(new GpuRuntime(device, adapterName));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      task: { type: 'string' },
      iters: { type: 'string' },
      seed: { type: 'string' },
      config: { type: 'string' },
      out: { type: 'string' },
      backend: { type: 'string', default: 'webgpu' },
      checkpoint: { type: 'string' },
      'reward-model': { type: 'string' },
      'eval-count': { type: 'string', default: '64' },
      'eval-samples': { type: 'string', default: '4' },
      quiet: { type: 'boolean', default: false },
    },
  });
  const problems: string[] = [];
  const iters = Number(values.iters);
  if (values.iters === undefined || !Number.isInteger(iters) || iters < 0) problems.push(`--iters = ${JSON.stringify(values.iters)}: a non-negative integer is required`);
  const evalCount = Number(values['eval-count']);
  if (!Number.isInteger(evalCount) || evalCount < 1) problems.push(`--eval-count = ${JSON.stringify(values['eval-count'])}: a positive integer is required`);
  const evalSamples = Number(values['eval-samples']);
  if (!Number.isInteger(evalSamples) || evalSamples < 1) problems.push(`--eval-samples = ${JSON.stringify(values['eval-samples'])}: a positive integer is required`);
  if (values.backend !== 'webgpu' && values.backend !== 'cpu') problems.push(`--backend = ${JSON.stringify(values.backend)}: allowed: webgpu, cpu`);
  let fileJson: unknown;
  if (values.config !== undefined) {
    try {
      fileJson = JSON.parse(readFileSync(values.config, 'utf8'));
    } catch (e) {
      problems.push(`--config ${values.config}: ${(e as Error).message}`);
    }
  }
  const { config, problems: cfgProblems } = buildConfig(fileJson, { task: values.task, seed: values.seed });
  problems.push(...cfgProblems);
  if (problems.length > 0) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }

  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const ckPath = values.checkpoint ?? join(root, 'public', 'checkpoints', `${config.task}.safetensors`);
  if (!existsSync(ckPath)) {
    console.error(`no SFT checkpoint at ${ckPath}: run \`npm run pretrain -- --task ${config.task}\` first or pass --checkpoint`);
    return 1;
  }
  const rmPath = values['reward-model'] ?? join(root, 'public', 'checkpoints', `${config.task}_rm.safetensors`);
  if (config.rewardSource === 'model' && !existsSync(rmPath)) {
    console.error(`rewardSource "model": no reward model at ${rmPath}: run \`npm run train-rm -- --task ${config.task}\` or pass --reward-model`);
    return 1;
  }
  const be = await makeBackend(values.backend!);
  const rewardModel =
    config.rewardSource === 'model'
      ? RewardModel.fromCheckpoint(be, new Uint8Array(readFileSync(rmPath)), { alphabet: getTask(config.task).alphabet, task: config.task })
      : undefined;
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: new Uint8Array(readFileSync(ckPath)), rewardModel });
  if (values.out) writeFileSync(values.out, '');
  const emit = (obj: unknown) => {
    const line = JSON.stringify(obj);
    if (values.out) appendFileSync(values.out, line + '\n');
    if (!values.quiet || !values.out) console.log(line);
  };
  console.error(`PPO ${config.task} on ${be.label}, ${iters} iterations, seed ${config.seed}, reward: ${rewardModel ? `learned model ${rmPath}` : 'rule'}`);
  emit({ eval_before: await trainer.evaluate(evalCount, evalSamples) });
  for (let i = 0; i < iters; i++) {
    const r = await trainer.iteration();
    for (const [k, v] of Object.entries(r.metrics)) if (!Number.isFinite(v)) throw new Error(`iteration ${r.iter}: metric ${k} is ${v}`);
    emit(r.metrics);
  }
  emit({ eval: await trainer.evaluate(evalCount, evalSamples) });
  trainer.dispose();
  rewardModel?.dispose();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
