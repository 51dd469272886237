// Trains the SFT checkpoint of a task with the project's own code, following the task's recipe
// (src/tasks/*: sftRecipe, one or more phases) from a fixed seed, and writes
// public/checkpoints/<task>.safetensors (the starting policy every PPO run loads).
//   npm run pretrain -- --task arithmetic [--seed 1] [--backend cpu|webgpu] [--out path]
//                       [--steps N] [--lr x] [--batch n]   (override the recipe's last phase)
// On the default CPU backend (float64) the same command writes the same bytes on any machine: that
// is how the shipped checkpoints were made.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { sftModelConfig } from '../model/config.ts';
import { Gpt } from '../model/gpt.ts';
import { trainSftRecipe } from '../model/sft.ts';
import { TASK_NAMES, getTask, taskTokenizer, type SftPhase } from '../tasks/index.ts';
import { makeBackend } from '../node/backend.ts';
import { NUMERIC_RULES } from '../rl/config.ts';
import { greedySamples } from '../rl/evaluation.ts';
import { runCli } from '../node/runCli.ts';

const USAGE = `usage: npm run pretrain -- --task <${TASK_NAMES.join('|')}> [--seed S] [--backend cpu|webgpu] [--out file] [--steps N] [--lr x] [--batch n]`;

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
      steps: { type: 'string' },
      lr: { type: 'string' },
      batch: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (!values.task) {
    console.error(USAGE);
    return 2;
  }
  const task = getTask(values.task);
  const tok = taskTokenizer(task);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, got ${values.seed}`);
  // Flags override the last phase (the task's own corpus) and leave earlier phases as the recipe says.
  const phases: SftPhase[] = task.sftRecipe.map((p) => ({ ...p }));
  const last = phases[phases.length - 1];
  if (values.steps !== undefined) last.steps = Number(values.steps);
  if (values.batch !== undefined) last.batchSize = Number(values.batch);
  if (values.lr !== undefined) last.lr = Number(values.lr);
  if (!Number.isInteger(last.steps) || last.steps < 0) throw new Error(`--steps must be a non-negative integer, got ${values.steps}`);
  if (!Number.isInteger(last.batchSize) || last.batchSize < 1) throw new Error(`--batch must be a positive integer, got ${values.batch}`);
  if (!(last.lr > 0)) throw new Error(`--lr must be positive, got ${values.lr}`);

  const be = await makeBackend(values.backend!);
  const cfg = sftModelConfig(tok.vocabSize, task.maxPromptChars, NUMERIC_RULES.maxResponseLength?.max ?? 64);
  const model = new Gpt(be, cfg, seed);
  console.log(`pretrain ${task.name} on ${be.label}: ${JSON.stringify(cfg)}, ${model.layout.total} parameter slots, seed ${seed}`);

  const t0 = performance.now();
  const secs = () => ((performance.now() - t0) / 1000).toFixed(1);
  const evalCount = 64;
  await trainSftRecipe(model, task, phases, tok, {
    seed,
    onLog: ({ phase, step, loss, lr, gradNorm }) =>
      console.log(`phase ${phase + 1} step ${String(step).padStart(5)}  loss ${loss.toFixed(4)}  lr ${lr.toExponential(2)}  |g| ${gradNorm.toFixed(3)}  ${secs()}s`),
    onPhaseEnd: async (i) => {
      const samples = await greedySamples(model, task, tok, evalCount, task.maxResponseChars + 1);
      console.log(`phase ${i + 1}/${phases.length} done (${phases[i].label}, ${phases[i].steps} steps × ${phases[i].batchSize}, lr ${phases[i].lr}) after ${secs()}s`);
      for (const s of samples.slice(0, 6))
        console.log(`  ${JSON.stringify(s.prompt)} → ${JSON.stringify(s.response)}${s.endedWithEos ? ' <eos>' : ''}  (score ${task.ruleScore(s).toFixed(2)})`);
      console.log(`  greedy on ${evalCount} held-out prompts: ${JSON.stringify(task.evaluate(samples))}`);
    },
  });

  const bytes = await saveCheckpoint(model, { alphabet: task.alphabet, task: task.name });
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = values.out ?? join(root, 'public', 'checkpoints', `${task.name}.safetensors`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  console.log(`wrote ${out} (${(bytes.length / 1024).toFixed(1)} KiB) after ${secs()}s`);
  return 0;
}

runCli(main);
