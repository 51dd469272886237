// Exports a playground config as a runnable verl or OpenRLHF job folder:
//   npm run export-job -- --engine verl|openrlhf --task T [--config f.json] [--seed S]
//                         [--gpus N] [--rows N] [--model PATH [--lora-rank R [--lora-alpha A]
//                         [--lora-targets a,b,c]]] --out DIR
// Writes train.parquet, test.parquet, reward.py, run_verl.sh / run_openrlhf.sh and README.md into
// DIR (created if missing). Settings: defaults ← --config JSON (a playground config, e.g. from the
// page's "Download config") ← --task/--seed. --model writes a Hugging Face model (Hub id or a path
// on the machine that runs the job; not read here) as the script's default MODEL; --lora-rank adds
// LoRA adapters on it (alpha defaults to 2·rank, targets to all-linear, verl's and OpenRLHF's
// default). Invalid settings exit with status 2, each problem named.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ENGINES, type Engine } from '../export/engines.ts';
import { buildJob } from '../export/job.ts';
import { DEFAULT_LORA_TARGETS, defaultLoraAlpha, type JobModel, LORA_ALPHA_RANGE, LORA_RANK_RANGE, type ModelField, modelProblems } from '../export/model.ts';
import { DEFAULT_JOB_OPTIONS, GPU_RANGE, JobError, TRAIN_ROWS_RANGE } from '../export/plan.ts';
import { buildConfig } from '../rl/configMerge.ts';
import { readConfigFile } from './configFile.ts';

const USAGE =
  `usage: npm run export-job -- --engine <${ENGINES.join('|')}> --task <arithmetic|sentiment|stop> --out DIR ` +
  `[--config file.json] [--seed S] [--gpus N (${GPU_RANGE.min}-${GPU_RANGE.max}, default ${DEFAULT_JOB_OPTIONS.gpus})] ` +
  `[--rows N (training prompts, default ${DEFAULT_JOB_OPTIONS.trainRows})] ` +
  `[--model PATH (Hugging Face model the job trains) [--lora-rank R (${LORA_RANK_RANGE.min}-${LORA_RANK_RANGE.max}) ` +
  `[--lora-alpha A (${LORA_ALPHA_RANGE.min}-${LORA_ALPHA_RANGE.max}, default 2·R)] [--lora-targets a,b,c (default ${DEFAULT_LORA_TARGETS.join(',')})]]]`;

/** The command line as parseArgs reads it; throws on an unknown or malformed flag. */
function parseJobArgs() {
  return parseArgs({
    options: {
      engine: { type: 'string' },
      task: { type: 'string' },
      config: { type: 'string' },
      seed: { type: 'string' },
      gpus: { type: 'string', default: String(DEFAULT_JOB_OPTIONS.gpus) },
      rows: { type: 'string', default: String(DEFAULT_JOB_OPTIONS.trainRows) },
      out: { type: 'string' },
      model: { type: 'string' },
      'lora-rank': { type: 'string' },
      'lora-alpha': { type: 'string' },
      'lora-targets': { type: 'string' },
    },
  }).values;
}

type JobArgs = ReturnType<typeof parseJobArgs>;

/** The flag each field of the model section comes from. */
const MODEL_FLAGS: Record<ModelField, keyof JobArgs> = { modelPath: 'model', 'lora.r': 'lora-rank', 'lora.alpha': 'lora-alpha', 'lora.targets': 'lora-targets' };

/** The model section the flags ask for (undefined without --model); problems are pushed naming the flag. */
function modelFromArgs(values: JobArgs, problems: string[]): JobModel | undefined {
  // LoRA adapts the model the job trains, and the rank turns it on: the other LoRA flags need both.
  const needs = (flag: string, on: string | undefined, what: string) => {
    if (values[flag as keyof JobArgs] !== undefined && on === undefined) problems.push(`--${flag}: needs ${what}`);
  };
  for (const flag of ['lora-rank', 'lora-alpha', 'lora-targets']) needs(flag, values.model, '--model (LoRA adapts the model the job trains)');
  if (values.model === undefined) return undefined;
  for (const flag of ['lora-alpha', 'lora-targets']) needs(flag, values['lora-rank'], '--lora-rank (the rank turns LoRA on)');
  const rankText = values['lora-rank'];
  const r = Number(rankText);
  const model: JobModel = {
    modelPath: values.model,
    lora:
      rankText === undefined
        ? null
        : {
            r,
            alpha: values['lora-alpha'] === undefined ? defaultLoraAlpha(r) : Number(values['lora-alpha']),
            targets: values['lora-targets']?.split(',') ?? [...DEFAULT_LORA_TARGETS],
          },
  };
  for (const p of modelProblems(model)) {
    const flag = MODEL_FLAGS[p.field];
    const given = values[flag];
    // A default alpha is only wrong because the rank is; that problem is already named.
    if (given !== undefined) problems.push(`--${flag} = ${JSON.stringify(given)}: allowed: ${p.allowed}`);
  }
  return model;
}

function main(): number {
  let values: JobArgs;
  try {
    values = parseJobArgs();
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const problems: string[] = [];
  if (!ENGINES.includes(values.engine as Engine)) problems.push(`--engine = ${JSON.stringify(values.engine)}: allowed: ${ENGINES.join(', ')}`);
  if (!values.out) problems.push('--out: the job folder to write is required');
  if (values.task === undefined && values.config === undefined) problems.push('--task: required unless --config names the task');
  const gpus = Number(values.gpus);
  const rows = Number(values.rows);
  if (!Number.isInteger(gpus) || gpus < GPU_RANGE.min || gpus > GPU_RANGE.max) {
    problems.push(`--gpus = ${JSON.stringify(values.gpus)}: allowed: an integer from ${GPU_RANGE.min} to ${GPU_RANGE.max}`);
  }
  if (!Number.isInteger(rows) || rows < TRAIN_ROWS_RANGE.min || rows > TRAIN_ROWS_RANGE.max) {
    problems.push(`--rows = ${JSON.stringify(values.rows)}: allowed: an integer from ${TRAIN_ROWS_RANGE.min} to ${TRAIN_ROWS_RANGE.max}`);
  }
  const model = modelFromArgs(values, problems);
  const fileJson = readConfigFile(values.config, problems);
  const { config, problems: cfgProblems } = buildConfig(fileJson, { task: values.task, seed: values.seed });
  problems.push(...cfgProblems);
  if (problems.length > 0) {
    console.error(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}\n${USAGE}`);
    return 2;
  }
  let job: ReturnType<typeof buildJob>;
  try {
    job = buildJob(config, { engine: values.engine as Engine, gpus, trainRows: rows, model });
  } catch (e) {
    if (e instanceof JobError) {
      console.error(`cannot export this config:\n  ${e.message.split('\n').join('\n  ')}`);
      return 2;
    }
    throw e;
  }
  const out = values.out!;
  mkdirSync(out, { recursive: true });
  for (const f of job.files) {
    const path = join(out, f.path);
    writeFileSync(path, f.data);
    chmodSync(path, f.mode);
  }
  console.log(
    `${values.engine} job for task "${config.task}" in ${out}: ${job.dataset.train.length} training and ${job.dataset.test.length} held-out prompts; ` +
      `files: ${job.files.map((f) => f.path).join(', ')}` +
      (model ? `; model ${model.modelPath}${model.lora ? `, LoRA rank ${model.lora.r} alpha ${model.lora.alpha} on ${model.lora.targets.join(',')}` : ''}` : ''),
  );
  return 0;
}

process.exit(main());
