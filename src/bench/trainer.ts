// One whole PPO iteration (rollout → experience → update with actor and critic) at DESIGN.md's S
// and M model sizes, WebGPU beside the float64 CPU reference, with dispatches, submits and
// readbacks per iteration. The sentiment task (vocabulary 31 ≈ the benchmark's 32; prompts of up
// to 17 tokens) with a freshly initialised actor of the benchmark size.
import type { Backend } from '../backend/backend.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { Gpt } from '../model/gpt.ts';
import { withDefaults, type PpoConfig } from '../rl/config.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import { BENCH_CONFIGS, type BenchConfig } from './model.ts';
import { table, timeIt, type Timed } from './timing.ts';

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

export interface TrainerRow {
  config: string;
  gpu: Timed;
  cpu: Timed;
  stages: Record<string, number>;
}

/** Median time of `repeats` iterations after one warm-up (pipelines, pools, bind groups). */
async function timeIterations(be: Backend, c: BenchConfig, repeats: number): Promise<{ timed: Timed; stages: Record<string, number> }> {
  const trainer = await PpoTrainer.create({ be, config: configFor(c), actorCheckpoint: await actorCheckpoint(be, c) });
  let metrics: Record<string, number> = {};
  const timed = await timeIt(be, async () => (metrics = (await trainer.iteration()).metrics), repeats, 1);
  trainer.dispose();
  return { timed, stages: { rollout: metrics.time_rollout_s, experience: metrics.time_experience_s, update: metrics.time_update_s } };
}

export async function printTrainerBench(gpuBe: Backend, cpuBe: Backend): Promise<TrainerRow[]> {
  const rows: TrainerRow[] = [];
  for (const c of BENCH_CONFIGS) {
    const g = await timeIterations(gpuBe, c, 3);
    const cp = await timeIterations(cpuBe, c, 3);
    rows.push({ config: c.name, gpu: g.timed, cpu: cp.timed, stages: g.stages });
  }
  console.log('## One PPO iteration (actor + critic + reference, GAE, 1 epoch, 1 minibatch = the batch)\n');
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
  console.log('');
  return rows;
}
