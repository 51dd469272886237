// Trains the SFT checkpoint of a task with the project's own code, following the task's recipe
// (src/tasks/*: sftRecipe, one or more phases) from a fixed seed, and writes
// public/checkpoints/<task>.safetensors (the starting policy every PPO run loads).
//   npm run pretrain -- --task arithmetic [--seed 1] [--backend cpu|webgpu] [--out path]
//                       [--layers 2] [--heads 2] [--width 64]   (the model size; default the shipped one)
//                       [--steps N] [--lr x] [--batch n]        (override the recipe's last phase)
//                       [--phase-steps N]                       (cap every phase: a reduced run)
//                       [--family gpt|hf]                       (the model's family: Gpt, or HfModel as GPT-2; same file)
//   npm run pretrain -- --task chat-arithmetic [--seed 1] [--steps N] [--sloppy-steps N] [--batch n] [--lr x] [--out dir]
//                       (the shipped small chat model, a Hugging Face folder: src/cli/pretrainChat.ts)
// The run itself is src/rl/sftRun.ts, the same function the page's "1 · SFT" stage calls. On the
// default CPU backend (float64) the same command writes the same bytes on any machine: that is how
// the shipped checkpoints were made.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SFT_MODEL_DIMS } from '../model/config.ts';
import { TASK_NAMES, getTask } from '../tasks/index.ts';
import { makeBackend } from '../node/backend.ts';
import { modelDimsProblems, runSft, sftPhases, type SftRunOptions } from '../rl/sftRun.ts';
import { familyFlag, MODEL_FAMILIES } from '../rl/trainerModels.ts';
import { runCli } from '../node/runCli.ts';
import { CHAT_ARITHMETIC_NAME } from '../tasks/chatArithmetic.ts';
import { pretrainChat } from './pretrainChat.ts';

const USAGE = `usage: npm run pretrain -- --task <${[...TASK_NAMES, CHAT_ARITHMETIC_NAME].join('|')}> [--seed S] [--backend cpu|webgpu] [--out file] [--layers L] [--heads H] [--width D] [--steps N] [--lr x] [--batch n] [--phase-steps N] [--family ${MODEL_FAMILIES.join('|')}]`;

/** A flag's integer value (NaN when it is not one, which the size check names), or its default when absent. */
function intFlag(v: string | undefined, fallback: number): number {
  return v === undefined ? fallback : /^-?\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
}

async function main(): Promise<number> {
  // npm runs a script named `pre<name>` before `npm run <name>`, so `npm run train` first runs this
  // one without arguments, with the same environment as a direct `npm run pretrain`: without
  // arguments it only prints its usage and succeeds, so `npm run train` goes on.
  if (process.argv.length <= 2) {
    console.error(`pretrain: nothing to do without --task; ${USAGE}`);
    return 0;
  }
  const { values } = parseArgs({
    options: {
      task: { type: 'string' },
      seed: { type: 'string', default: '1' },
      backend: { type: 'string', default: 'cpu' },
      layers: { type: 'string' },
      heads: { type: 'string' },
      width: { type: 'string' },
      steps: { type: 'string' },
      lr: { type: 'string' },
      batch: { type: 'string' },
      'phase-steps': { type: 'string' },
      'sloppy-steps': { type: 'string' },
      family: { type: 'string', default: 'gpt' },
      out: { type: 'string' },
    },
  });
  if (!values.task) {
    console.error(USAGE);
    return 2;
  }
  if (values.task === CHAT_ARITHMETIC_NAME) return pretrainChat(values);
  const task = getTask(values.task);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, got ${values.seed}`);
  const dims = {
    nLayer: intFlag(values.layers, SFT_MODEL_DIMS.nLayer),
    nHead: intFlag(values.heads, SFT_MODEL_DIMS.nHead),
    dModel: intFlag(values.width, SFT_MODEL_DIMS.dModel),
  };
  const dimProblems = modelDimsProblems(dims, { nLayer: '--layers', nHead: '--heads', dModel: '--width' });
  if (dimProblems.length > 0) throw new Error(dimProblems.join('; '));
  const lastPhase: SftRunOptions['lastPhase'] = {};
  if (values.steps !== undefined) lastPhase.steps = Number(values.steps);
  if (values.batch !== undefined) lastPhase.batchSize = Number(values.batch);
  if (values.lr !== undefined) lastPhase.lr = Number(values.lr);
  if (lastPhase.steps !== undefined && !(Number.isInteger(lastPhase.steps) && lastPhase.steps >= 0)) throw new Error(`--steps must be a non-negative integer, got ${values.steps}`);
  if (lastPhase.batchSize !== undefined && !(Number.isInteger(lastPhase.batchSize) && lastPhase.batchSize >= 1))
    throw new Error(`--batch must be a positive integer, got ${values.batch}`);
  if (lastPhase.lr !== undefined && !(lastPhase.lr > 0)) throw new Error(`--lr must be positive, got ${values.lr}`);
  const phaseSteps = values['phase-steps'] === undefined ? undefined : Number(values['phase-steps']);
  if (phaseSteps !== undefined && !(Number.isInteger(phaseSteps) && phaseSteps >= 1)) throw new Error(`--phase-steps must be a positive integer, got ${values['phase-steps']}`);

  const { family, problem } = familyFlag(values.family);
  if (!family) {
    console.error(problem);
    return 2;
  }

  const opts: SftRunOptions = { task: task.name, dims, seed, lastPhase, family, ...(phaseSteps === undefined ? {} : { phaseSteps }) };
  const phases = sftPhases(opts);
  const be = await makeBackend(values.backend!);
  console.log(
    `pretrain ${task.name} on ${be.label}${family === 'gpt' ? '' : ` (family ${family})`}: ${dims.nLayer} layers × ${dims.nHead} heads × width ${dims.dModel}, seed ${seed}`,
  );

  const t0 = performance.now();
  const secs = () => ((performance.now() - t0) / 1000).toFixed(1);
  const { bytes } = await runSft(be, opts, {
    onProgress: ({ phase, step, loss, lr, gradNorm }) =>
      console.log(`phase ${phase + 1} step ${String(step).padStart(5)}  loss ${loss.toFixed(4)}  lr ${lr.toExponential(2)}  |g| ${gradNorm.toFixed(3)}  ${secs()}s`),
    onPhaseEnd: ({ phase, metrics, samples }) => {
      const p = phases[phase];
      console.log(`phase ${phase + 1}/${phases.length} done (${p.label}, ${p.steps} steps × ${p.batchSize}, lr ${p.lr}) after ${secs()}s`);
      for (const s of samples.slice(0, 6))
        console.log(`  ${JSON.stringify(s.prompt)} → ${JSON.stringify(s.response)}${s.endedWithEos ? ' <eos>' : ''}  (score ${task.ruleScore(s).toFixed(2)})`);
      console.log(`  greedy on ${samples.length} held-out prompts: ${JSON.stringify(metrics)}`);
    },
  });

  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = values.out ?? join(root, 'public', 'checkpoints', `${task.name}.safetensors`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  console.log(`wrote ${out} (${(bytes.length / 1024).toFixed(1)} KiB) after ${secs()}s`);
  return 0;
}

runCli(main);
