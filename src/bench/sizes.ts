// How training time grows with the model knobs: SFT steps per second (the task's own recipe batch,
// timeSftSteps, the function behind the page's "about N s" offer) and one PPO iteration at the
// page's default settings, at S = 2×2×64 (the shipped size), M = 4×4×128 and L = 6×8×256, on
// WebGPU and on the float64 CPU backend. The arithmetic task (recipe of 900 steps × 32 sequences).
//   npm run bench -- --only sizes [--sizes S,M,L] [--size-backends webgpu,cpu] [--repeats n]
import type { Backend } from '../backend/backend.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { sftModelConfig } from '../model/config.ts';
import { Gpt } from '../model/gpt.ts';
import { DEFAULT_CONFIG, NUMERIC_RULES } from '../rl/config.ts';
import { sftPhases, timeSftSteps, type ModelDims } from '../rl/sftRun.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import { table, timeIt } from './timing.ts';

export const MODEL_SIZES: { name: string; dims: ModelDims }[] = [
  { name: 'S', dims: { nLayer: 2, nHead: 2, dModel: 64 } },
  { name: 'M', dims: { nLayer: 4, nHead: 4, dModel: 128 } },
  { name: 'L', dims: { nLayer: 6, nHead: 8, dModel: 256 } },
];

const TASK = 'arithmetic';

export interface SizeRow {
  size: string;
  dims: ModelDims;
  params: number;
  backend: string;
  sftStepS: number;
  /** The whole recipe at that rate (steps only; the two greedy evaluations are extra). */
  recipeS: number;
  ppoIterS: number;
}

async function ppoIterationSeconds(be: Backend, dims: ModelDims, repeats: number, warmup: number): Promise<{ seconds: number; params: number }> {
  const task = getTask(TASK);
  const tok = taskTokenizer(task);
  const model = new Gpt(be, { ...sftModelConfig(tok.vocabSize, task.maxPromptChars, NUMERIC_RULES.maxResponseLength?.max ?? 64), ...dims }, 1);
  const params = model.layout.total;
  const actorCheckpoint = await saveCheckpoint(model, { alphabet: tok.alphabet, task: task.name });
  model.dispose();
  const trainer = await PpoTrainer.create({ be, config: { ...DEFAULT_CONFIG, task: TASK, ...dims }, actorCheckpoint });
  try {
    const t = await timeIt(be, () => trainer.iteration(), repeats, warmup);
    return { seconds: t.medianMs / 1000, params };
  } finally {
    trainer.dispose();
  }
}

export async function printSizesBench(gpuBe: Backend, cpuBe: Backend, ctx: { repeats: number; sizes?: string[]; sizeBackends?: string[] }): Promise<SizeRow[]> {
  const backends = [gpuBe, cpuBe].filter((be) => !ctx.sizeBackends || ctx.sizeBackends.includes(be === gpuBe ? 'webgpu' : 'cpu'));
  const recipeSteps = sftPhases({ task: TASK }).reduce((n, p) => n + p.steps, 0);
  const rows: SizeRow[] = [];
  for (const { name, dims } of MODEL_SIZES.filter((s) => !ctx.sizes || ctx.sizes.includes(s.name))) {
    for (const be of backends) {
      // L takes tens of seconds a step on a software adapter and minutes on the CPU backend: one
      // timed step and iteration there (after one warm-up on WebGPU, which builds the pipelines).
      const slow = name === 'L';
      const repeats = slow ? 1 : ctx.repeats;
      const warmup = slow && be === cpuBe ? 0 : 1;
      const sftStepS = await timeSftSteps(be, { task: TASK, dims, seed: 1 }, repeats, warmup);
      const ppo = await ppoIterationSeconds(be, dims, repeats, warmup);
      rows.push({ size: name, dims, params: ppo.params, backend: be.label, sftStepS, recipeS: sftStepS * recipeSteps, ppoIterS: ppo.seconds });
      console.error(`sizes: ${name} on ${be.label} done`);
    }
  }
  const s = rows.filter((r) => r.size === 'S');
  const growth = (r: SizeRow, pick: (x: SizeRow) => number) => {
    const base = s.find((b) => b.backend === r.backend);
    return base ? `${(pick(r) / pick(base)).toFixed(1)}×` : '–';
  };
  console.log(`## Model size: SFT and PPO time (task ${TASK}; SFT recipe ${recipeSteps} steps; PPO at the default settings)\n`);
  console.log(
    table(
      ['size', 'layers×heads×width', 'parameters', 'backend', 'SFT steps/s', 'SFT recipe s', 'PPO iteration s', 'SFT step vs S', 'PPO iteration vs S'],
      rows.map((r) => [
        r.size,
        `${r.dims.nLayer}×${r.dims.nHead}×${r.dims.dModel}`,
        r.params,
        r.backend,
        1 / r.sftStepS,
        r.recipeS,
        r.ppoIterS,
        growth(r, (x) => x.sftStepS),
        growth(r, (x) => x.ppoIterS),
      ]),
    ),
  );
  console.log('');
  return rows;
}
