// One whole PPO iteration (rollout → experience → update with actor and critic) at the S
// and M model sizes, WebGPU beside the float64 CPU reference, with dispatches, submits and
// readbacks per iteration. The sentiment task (vocabulary 31 ≈ the benchmark's 32; prompts of up
// to 17 tokens) with a freshly initialised actor of the benchmark size.
import type { Backend } from '../backend/backend.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { Gpt } from '../model/gpt.ts';
import { readFileSync } from 'node:fs';
import { withDefaults, type PpoConfig } from '../rl/config.ts';
import { presetValues } from '../rl/presets.ts';
import { evalSize } from '../worker/evalSchedule.ts';
import { PpoTrainer, type Stage, type TrainerInit } from '../rl/trainer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import { BENCH_CONFIGS, type BenchConfig } from './model.ts';
import { table, timeIt, type Timed } from './timing.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { addCounters, diffCounters, zeroCounters, type GpuCounters } from '../gpu/recorder.ts';

async function actorCheckpoint(be: Backend, c: BenchConfig): Promise<Uint8Array> {
  const task = getTask('sentiment');
  const tok = taskTokenizer(task);
  const model = new Gpt(be, { vocabSize: tok.vocabSize, nLayer: c.nLayer, nHead: c.nHead, dModel: c.dModel, maxSeq: 1 + task.maxPromptChars + c.response, head: 'lm' }, 1);
  const bytes = await saveCheckpoint(model, { alphabet: tok.alphabet, task: task.name });
  model.dispose();
  return bytes;
}

function configFor(c: BenchConfig): PpoConfig {
  return withDefaults({
    task: 'sentiment',
    rewardSource: 'rule',
    promptsPerBatch: c.batch / 4,
    samplesPerPrompt: 4,
    maxResponseLength: c.response,
    advantageEstimator: 'gae',
    ppoEpochs: 1,
    miniBatches: 1,
    seed: 1,
  });
}

const STAGES: Stage[] = ['rollout', 'experience', 'update'];
const ZERO = zeroCounters();

export interface TrainerRow {
  config: string;
  gpu: Timed;
  cpu: Timed;
  stages: Record<string, number>;
  /** Counter deltas of the last timed WebGPU iteration, per stage (the trainer's onRecord boundaries). */
  stageCounts: Record<Stage, GpuCounters>;
  /** Dispatches per kernel (shader:entry) in the last timed WebGPU iteration, most first. */
  byKernel: [string, number][];
}

function kernelCounts(be: Backend): Map<string, number> {
  return be instanceof WebGpuBackend ? new Map(be.rt.recorder.dispatchesByKernel) : new Map();
}

/** A PPO trainer exactly as the benchmark runs it at config `c` (also used by the structural test of the dispatch counts). */
export async function benchTrainer(be: Backend, c: BenchConfig, hooks: Pick<TrainerInit, 'onStage' | 'onRecord'> = {}): Promise<PpoTrainer> {
  return PpoTrainer.create({ be, config: configFor(c), actorCheckpoint: await actorCheckpoint(be, c), ...hooks });
}

/** Median time of `repeats` iterations after one warm-up (pipelines, pools, bind groups). */
async function timeIterations(be: Backend, c: BenchConfig, repeats: number) {
  // Counter snapshots at each recording boundary of the iteration in flight. A stage can come
  // twice: the iteration's rollout (empty once it is sampled ahead) and, after the update, the next one's.
  let marks: [Stage, GpuCounters][] = [];
  const trainer = await benchTrainer(be, c, { onRecord: (st) => marks.push([st, { ...be.counters() }]) });
  let metrics: Record<string, number> = {};
  let stageCounts: Record<Stage, GpuCounters> = { rollout: ZERO, experience: ZERO, update: ZERO };
  let byKernel: [string, number][] = [];
  const timed = await timeIt(
    be,
    async () => {
      marks = [];
      const k0 = kernelCounts(be);
      metrics = (await trainer.iteration()).metrics;
      const end = { ...be.counters() };
      stageCounts = { rollout: ZERO, experience: ZERO, update: ZERO };
      marks.forEach(([st, from], i) => {
        stageCounts[st] = addCounters(stageCounts[st], diffCounters(from, i + 1 < marks.length ? marks[i + 1][1] : end));
      });
      byKernel = [...kernelCounts(be)].map(([k, n]): [string, number] => [k, n - (k0.get(k) ?? 0)]).filter(([, n]) => n > 0);
      byKernel.sort((a, b) => b[1] - a[1]);
    },
    repeats,
    1,
  );
  trainer.dispose();
  return { timed, stageCounts, byKernel, stages: { rollout: metrics.time_rollout_s, experience: metrics.time_experience_s, update: metrics.time_update_s } };
}

export async function printTrainerBench(gpuBe: Backend, cpuBe: Backend, ctx?: { configs: BenchConfig[] }): Promise<TrainerRow[]> {
  const rows: TrainerRow[] = [];
  for (const c of ctx?.configs ?? BENCH_CONFIGS) {
    const g = await timeIterations(gpuBe, c, 3);
    const cp = await timeIterations(cpuBe, c, 3);
    rows.push({ config: c.name, gpu: g.timed, cpu: cp.timed, stages: g.stages, stageCounts: g.stageCounts, byKernel: g.byKernel });
  }
  console.log('## One PPO iteration (actor + critic + reference, GAE, 1 epoch, 1 minibatch = the batch)\n');
  console.log(
    "Each iteration samples the next one's rollout after its update, in the same submit: the rollout time is recording (CPU backend: computing) it; on WebGPU its device time is in the update's.\n",
  );
  console.log(
    table(
      ['config', 'webgpu ms', 'cpu ref ms', 'cpu/webgpu', 'webgpu rollout/exp/update s', 'dispatches', 'submits', 'readbacks'],
      rows.map((r) => [
        r.config,
        r.gpu.medianMs,
        r.cpu.medianMs,
        r.cpu.medianMs / r.gpu.medianMs,
        `${r.stages.rollout?.toFixed(2)}/${r.stages.experience?.toFixed(2)}/${r.stages.update?.toFixed(2)}`,
        r.gpu.perCall.dispatches,
        r.gpu.perCall.submits,
        r.gpu.perCall.readbacks,
      ]),
    ),
  );
  console.log('\n### WebGPU work per stage of one iteration (targets for the whole iteration at S: ≤ 300 dispatches, ≤ 3 submits, ≤ 2 readbacks)\n');
  console.log(
    table(
      ['config', 'stage', 'dispatches', 'submits', 'readbacks', 'copies', 'uploads', 'upload bytes', 'readback bytes'],
      rows.flatMap((r) =>
        [...STAGES.map((st): [string, GpuCounters] => [st, r.stageCounts[st]]), ['iteration', r.gpu.perCall] as [string, GpuCounters]].map(([st, c]) => [
          r.config,
          st,
          c.dispatches,
          c.submits,
          c.readbacks,
          c.copies,
          c.uploads,
          c.uploadBytes,
          c.readbackBytes,
        ]),
      ),
    ),
  );
  for (const r of rows) {
    console.log(`\n### Dispatches per kernel, config ${r.config} (one iteration)\n`);
    console.log(
      table(
        ['kernel (shader:entry)', 'dispatches'],
        r.byKernel.map(([k, n]) => [k, n]),
      ),
    );
    const sc = r.stageCounts;
    console.log(
      `\nSummary (docs/benchmarks.md): at ${r.config} one PPO iteration records ${r.gpu.perCall.dispatches} dispatches in ${r.gpu.perCall.submits} submits with ${r.gpu.perCall.readbacks} readbacks ` +
        `(rollout ${sc.rollout.dispatches}/${sc.rollout.submits}/${sc.rollout.readbacks}, experience ${sc.experience.dispatches}/${sc.experience.submits}/${sc.experience.readbacks}, ` +
        `update ${sc.update.dispatches}/${sc.update.submits}/${sc.update.readbacks} dispatches/submits/readbacks).`,
    );
  }
  console.log('');
  await printEvalCost(cpuBe);
  return rows;
}

/**
 * What the held-out evaluation costs beside training: one evaluation at the page's size for
 * "Learn arithmetic" (evalSize) against a training iteration, on the float64 CPU backend with the
 * shipped checkpoint; the share of training time at the default evalEvery (target: ≤ 10%).
 */
async function printEvalCost(be: Backend): Promise<void> {
  const config = { ...withDefaults(presetValues('Learn arithmetic')) };
  const ck = new Uint8Array(readFileSync(new URL('../../public/checkpoints/arithmetic.safetensors', import.meta.url)));
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: ck });
  try {
    const iter = await timeIt(be, () => trainer.iteration(), 2, 1);
    const { count, samplesPerPrompt } = evalSize(config);
    const ev = await timeIt(be, () => trainer.evaluate(count, samplesPerPrompt), 2, 1);
    const share = ev.medianMs / (config.evalEvery * iter.medianMs + ev.medianMs);
    console.log('## Held-out evaluation cost ("Learn arithmetic", CPU backend)\n');
    console.log(
      table(
        ['prompts × draws (+ greedy)', 'evaluation ms', 'iteration ms', `share of training time at evalEvery ${config.evalEvery}`],
        [[`${count} × ${samplesPerPrompt}`, ev.medianMs.toFixed(0), iter.medianMs.toFixed(0), `${(100 * share).toFixed(1)}%`]],
      ),
    );
    console.log('');
  } finally {
    trainer.dispose();
  }
}
