// Trains the SFT checkpoint of a task with the project's own code from a fixed seed and writes
// public/checkpoints/<task>.safetensors (the starting policy every PPO run loads).
//   npm run pretrain -- --task arithmetic [--steps 600] [--seed 1] [--backend webgpu|cpu]
//                       [--batch 32] [--lr 3e-3] [--out path]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { saveCheckpoint } from '../model/checkpoint.ts';
import type { GptConfig } from '../model/config.ts';
import { generate } from '../model/generate.ts';
import { Gpt } from '../model/gpt.ts';
import { DEFAULT_SFT, trainSft } from '../model/sft.ts';
import { leftPadBatch } from '../model/tokenizer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import type { Task, TaskSample } from '../tasks/task.ts';
import type { CharTokenizer } from '../model/tokenizer.ts';
import { makeBackend } from '../node/backend.ts';
import { NUMERIC_RULES } from '../rl/config.ts';

/** The shipped model size: 2 layers, 2 heads, d_model 64 (about 0.1 M parameters, < 0.5 MB). */
export function sftModelConfig(task: Task, vocabSize: number): GptConfig {
  // Room for BOS + the longest prompt + the longest PPO response the config allows, rounded up to 8
  // (rows of wpe beyond the SFT lengths only cost a few KiB).
  const need = 1 + task.maxPromptChars + (NUMERIC_RULES.maxResponseLength?.max ?? 64);
  return { vocabSize, nLayer: 2, nHead: 2, dModel: 64, maxSeq: Math.min(128, Math.ceil(need / 8) * 8), head: 'lm' };
}

/** Greedy responses for the task's held-out prompts (one batch, one readback). */
async function sampleEval(model: Gpt, task: Task, tok: CharTokenizer, count: number): Promise<TaskSample[]> {
  const prompts = task.evalPrompts(count);
  const pb = leftPadBatch(prompts.map((p) => tok.encodePrompt(p)));
  const A = task.maxResponseChars + 1;
  const r = generate(model, { ...pb, B: prompts.length, P: pb.width }, A, {
    temperature: 1, topK: 1, topP: 1, seed: 0, eosId: tok.eosId, padId: tok.padId,
  });
  const [seq, fin] = await model.be.readMany([r.sequences, r.finished]);
  model.be.dispose(r.sequences, r.attnMask, r.positions, r.actionMask, r.finished);
  const S = pb.width + A;
  return prompts.map((prompt, b) => ({
    prompt,
    response: tok.decode(seq.subarray(b * S + pb.width, (b + 1) * S)),
    endedWithEos: fin[b] === 1,
  }));
}

const USAGE = 'usage: npm run pretrain -- --task <arithmetic|sentiment|stop> [--steps N] [--seed S] [--backend webgpu|cpu]';

async function main(): Promise<void> {
  // npm runs a script named `pre<name>` before `npm run <name>`, so `npm run train` first runs this
  // one without arguments. npm gives the hook the same environment as a direct `npm run pretrain`
  // (npm_lifecycle_event is "pretrain" in both), so an argument-less run cannot tell them apart:
  // it does nothing, prints its one-line usage and succeeds, so `npm run train` goes on.
  if (process.argv.length <= 2) {
    console.error(`pretrain: nothing to do without --task; ${USAGE}`);
    return;
  }
  const { values } = parseArgs({
    options: {
      task: { type: 'string' },
      steps: { type: 'string', default: '600' },
      seed: { type: 'string', default: '1' },
      backend: { type: 'string', default: 'webgpu' },
      batch: { type: 'string', default: String(DEFAULT_SFT.batchSize) },
      lr: { type: 'string', default: String(DEFAULT_SFT.schedule.peak) },
      out: { type: 'string' },
    },
  });
  if (!values.task) throw new Error(USAGE);
  const task = getTask(values.task);
  const tok = taskTokenizer(task);
  const steps = Number(values.steps), seed = Number(values.seed), batch = Number(values.batch), lr = Number(values.lr);
  for (const [k, v] of Object.entries({ steps, seed, batch })) if (!Number.isInteger(v) || v < 0) throw new Error(`--${k} must be a non-negative integer`);
  if (!(lr > 0)) throw new Error('--lr must be positive');

  const be = await makeBackend(values.backend!);
  const cfg = sftModelConfig(task, tok.vocabSize);
  const model = new Gpt(be, cfg, seed);
  console.log(`pretrain ${task.name} on ${be.label}: ${JSON.stringify(cfg)}, ${model.layout.total} parameter slots, ${steps} steps × ${batch}, seed ${seed}`);

  const t0 = performance.now();
  await trainSft(model, task, tok, {
    ...DEFAULT_SFT,
    steps,
    seed,
    batchSize: batch,
    schedule: { ...DEFAULT_SFT.schedule, peak: lr },
    logEvery: Math.max(1, Math.round(steps / 30)),
    onLog: ({ step, loss, lr: l, gradNorm }) =>
      console.log(`step ${String(step).padStart(5)}  loss ${loss.toFixed(4)}  lr ${l.toExponential(2)}  |g| ${gradNorm.toFixed(3)}  ${((performance.now() - t0) / 1000).toFixed(1)}s`),
  });
  const trainSeconds = (performance.now() - t0) / 1000;

  const samples = await sampleEval(model, task, tok, 64);
  for (const s of samples.slice(0, 8)) console.log(`  ${JSON.stringify(s.prompt)} → ${JSON.stringify(s.response)}${s.endedWithEos ? ' <eos>' : ''}  (score ${task.ruleScore(s).toFixed(2)})`);
  console.log(`eval on ${samples.length} held-out prompts (greedy): ${JSON.stringify(task.evaluate(samples))}`);

  const bytes = await saveCheckpoint(model, { alphabet: task.alphabet, task: task.name });
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = values.out ?? join(root, 'public', 'checkpoints', `${task.name}.safetensors`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  console.log(`wrote ${out} (${(bytes.length / 1024).toFixed(1)} KiB) after ${trainSeconds.toFixed(1)}s of training`);
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
