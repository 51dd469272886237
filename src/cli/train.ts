// Headless PPO runs in Node (WebGPU through Dawn, or the float64 CPU reference):
//   npm run train -- --model DIR --prompts FILE --reward-function FILE.js --lora-rank R ...
//                    (a Hugging Face model with LoRA: src/cli/trainHf.ts)
//   npm run train -- --preset "Learn arithmetic" [--arm LABEL] [--iters N] [--seed S] [--out f.jsonl] [--backend webgpu|cpu] [--family gpt|hf]
//   npm run train -- --task arithmetic --iters 50 [--seed S] [--config file.json]
//                    [--out metrics.jsonl] [--backend webgpu|cpu] [--family gpt|hf] [--checkpoint file] [--eval-count N] [--eval-samples K]
//                    [--reward-model file]
// --family hf runs the character model's roles on HfModel as the GPT-2 they are (src/rl/trainerModels.ts);
// gpt (the default) is the page's own model.
// --preset runs a page preset's exact recipe (defaults ← preset ← arm ← --config ← flags) for its
// iteration budget unless --iters is given; a paired preset runs its first arm unless --arm names
// another. An unknown preset exits with status 2 and lists the valid names.
// With rewardSource "model" the scores come from the task's learned reward model
// (public/checkpoints/<task>_rm.safetensors, or --reward-model).
// Writes {"eval_before": {...}} (the SFT policy on held-out prompts: `accuracy` etc. averaged over
// K samples per prompt at the rollout temperature, `greedy_accuracy` etc. for greedy decoding), one
// JSON object of metrics per iteration, {"eval": {...}, "iter": k} every `evalEvery` iterations
// (config knob, default 10) and after the last one, to --out and to stdout. An invalid config
// exits with status 2 and every problem listed.
import { writeFileSync, appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildConfig } from '../rl/configMerge.ts';
import { makeBackend, resolvePresetArm, runPreset } from './presetRun.ts';
import { readConfigFile } from './configFile.ts';
import { runCli } from '../node/runCli.ts';
import { HF_TRAIN_USAGE, trainHf } from './trainHf.ts';
import { familyFlag } from '../rl/trainerModels.ts';

const USAGE =
  `${HF_TRAIN_USAGE}\n` +
  'usage: npm run train -- --preset "<name>" [--arm LABEL] [--iters N] [--seed S] [--out metrics.jsonl] [--backend webgpu|cpu] [--family gpt|hf]\n' +
  '       npm run train -- --task <arithmetic|sentiment|stop> --iters N [--seed S] [--config file.json] [--out metrics.jsonl] [--backend webgpu|cpu] [--family gpt|hf] [--checkpoint file.safetensors] [--eval-count N] [--eval-samples K] [--reward-model file.safetensors] [--quiet]';

async function main(): Promise<number> {
  if (process.argv.some((a) => a === '--model' || a.startsWith('--model='))) return trainHf();
  const { values } = parseArgs({
    options: {
      preset: { type: 'string' },
      arm: { type: 'string' },
      task: { type: 'string' },
      iters: { type: 'string' },
      seed: { type: 'string' },
      config: { type: 'string' },
      out: { type: 'string' },
      backend: { type: 'string', default: 'webgpu' },
      family: { type: 'string', default: 'gpt' },
      checkpoint: { type: 'string' },
      'reward-model': { type: 'string' },
      'eval-count': { type: 'string', default: '64' },
      'eval-samples': { type: 'string', default: '4' },
      quiet: { type: 'boolean', default: false },
    },
  });
  const problems: string[] = [];
  let presetValues: Record<string, unknown> = {};
  let presetIters: number | undefined;
  let label = '';
  if (values.preset !== undefined) {
    const arm = resolvePresetArm(values.preset, values.arm);
    if ('error' in arm) {
      console.error(`${arm.error}\n${USAGE}`);
      return 2;
    }
    presetValues = arm.values;
    presetIters = arm.preset.iterations;
    const arms = arm.preset.arms?.length ?? 0;
    label =
      arms > 0 ? `preset "${arm.preset.name}", arm "${arm.label}"${values.arm === undefined ? ` (the first of ${arms}; --arm picks another)` : ''}` : `preset "${arm.preset.name}"`;
  } else if (values.arm !== undefined) {
    problems.push('--arm needs --preset');
  }
  const iters = values.iters === undefined ? presetIters : Number(values.iters);
  if (iters === undefined || !Number.isInteger(iters) || iters < 0) problems.push(`--iters = ${JSON.stringify(values.iters)}: a non-negative integer is required`);
  const evalCount = Number(values['eval-count']);
  if (!Number.isInteger(evalCount) || evalCount < 1) problems.push(`--eval-count = ${JSON.stringify(values['eval-count'])}: a positive integer is required`);
  const evalSamples = Number(values['eval-samples']);
  if (!Number.isInteger(evalSamples) || evalSamples < 1) problems.push(`--eval-samples = ${JSON.stringify(values['eval-samples'])}: a positive integer is required`);
  if (values.backend !== 'webgpu' && values.backend !== 'cpu') problems.push(`--backend = ${JSON.stringify(values.backend)}: allowed: webgpu, cpu`);
  const { family, problem: familyProblem } = familyFlag(values.family);
  if (familyProblem) problems.push(familyProblem);
  const fileJson = readConfigFile(values.config, problems);
  const fromFile = typeof fileJson === 'object' && fileJson !== null && !Array.isArray(fileJson) ? (fileJson as Record<string, unknown>) : {};
  const layered = values.preset !== undefined ? { ...presetValues, ...fromFile } : fileJson;
  const { config, problems: cfgProblems } = buildConfig(layered, { task: values.task, seed: values.seed });
  problems.push(...cfgProblems);
  if (problems.length > 0 || !family) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }

  const be = await makeBackend(values.backend as 'webgpu' | 'cpu');
  if (values.out) writeFileSync(values.out, '');
  const emit = (obj: unknown) => {
    const line = JSON.stringify(obj);
    if (values.out) appendFileSync(values.out, `${line}\n`);
    if (!values.quiet || !values.out) console.log(line);
  };
  console.error(
    `PPO ${config.task}${label ? ` (${label})` : ''} on ${be.label}${family === 'hf' ? ', the model on HfModel' : ''}, ${iters} iterations, seed ${config.seed}, ` +
      `reward: ${config.rewardSource === 'model' ? 'learned reward model' : config.rewardSource === 'function' ? 'reward function (QuickJS sandbox)' : 'rule'}, held-out eval every ${config.evalEvery || 'never'} iterations and at the end`,
  );
  await runPreset({
    be,
    config,
    iters: iters!,
    evalCount,
    evalSamples,
    checkpointPath: values.checkpoint,
    rewardModelPath: values['reward-model'],
    family,
    onRow: emit,
  });
  return 0;
}

runCli(main);
