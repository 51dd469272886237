// Trains the sentiment reward model (the reward-model stage of RLHF) with the project's own code
// and writes public/checkpoints/sentiment_rm.safetensors, the learned reward PPO uses when
// rewardSource = "model". The trunk starts from the SFT checkpoint when it exists.
//   npm run train-rm -- [--steps 200] [--pairs 16] [--lr 1e-3] [--seed 1] [--backend cpu|webgpu]
//                       [--sft public/checkpoints/sentiment.safetensors] [--out path] [--family gpt|hf]
// --family hf trains it on HfModel as the GPT-2 it is (src/rl/trainerModels.ts); the file is the same format.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_RM_TRAIN, RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { taskTokenizer } from '../tasks/index.ts';
import { lexiconScore, sentimentTask } from '../tasks/sentiment.ts';
import type { PreferencePair } from '../tasks/task.ts';
import { Rng } from '../util/rng.ts';
import { makeBackend } from '../node/backend.ts';
import { SFT_MODEL_DIMS, type GptConfig } from '../model/config.ts';
import { runCli } from '../node/runCli.ts';
import { familyFlag } from '../rl/trainerModels.ts';

const HELD_OUT_SEED = 0x4b1d;

/** The shipped SFT model's size with a reward head, long enough to score PPO's full sequences. */
function fallbackConfig(vocabSize: number): GptConfig {
  const need = 1 + sentimentTask.maxPromptChars + 2 * sentimentTask.maxResponseChars + 1;
  return { vocabSize, ...SFT_MODEL_DIMS, maxSeq: Math.min(128, Math.ceil(need / 8) * 8), head: 'reward' };
}

async function main(): Promise<void> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const { values } = parseArgs({
    options: {
      steps: { type: 'string', default: '200' },
      pairs: { type: 'string', default: String(DEFAULT_RM_TRAIN.pairsPerStep) },
      lr: { type: 'string', default: String(DEFAULT_RM_TRAIN.peakLr) },
      seed: { type: 'string', default: '1' },
      // The CPU reference backend is the faster one on a machine with software WebGPU only.
      backend: { type: 'string', default: 'cpu' },
      sft: { type: 'string', default: join(root, 'public', 'checkpoints', 'sentiment.safetensors') },
      out: { type: 'string', default: join(root, 'public', 'checkpoints', 'sentiment_rm.safetensors') },
      family: { type: 'string', default: 'gpt' },
    },
  });
  const { family, problem } = familyFlag(values.family);
  if (!family) throw new Error(problem);
  const steps = Number(values.steps),
    pairs = Number(values.pairs),
    lr = Number(values.lr),
    seed = Number(values.seed);
  for (const [k, v] of Object.entries({ steps, pairs, seed })) if (!Number.isInteger(v) || v < 0) throw new Error(`--${k} must be a non-negative integer`);
  if (!(lr > 0)) throw new Error('--lr must be positive');

  const be = await makeBackend(values.backend!);
  const task = sentimentTask;
  let rm: RewardModel;
  if (existsSync(values.sft!)) {
    rm = RewardModel.fromSft(be, new Uint8Array(readFileSync(values.sft!)), seed, family);
    console.log(`trunk from ${values.sft}`);
  } else {
    const cfg = fallbackConfig(taskTokenizer(task).vocabSize);
    rm = RewardModel.fresh(be, cfg, task.alphabet, task.name, seed, family);
    console.log(`no SFT checkpoint at ${values.sft}: fresh trunk`);
  }
  console.log(`train-rm on ${be.label}${family === 'gpt' ? '' : ` (family ${family})`}: ${JSON.stringify(rm.model.cfg)}, ${steps} steps × ${pairs} pairs, lr ${lr}, seed ${seed}`);

  // Held-out pairs from their own seed, scored against the labels as given (10% flipped, so ≈ 0.9
  // is the ceiling) and against the noiseless lexicon order.
  const hr = new Rng(HELD_OUT_SEED);
  const heldOut = Array.from({ length: 256 }, () => task.preferencePair(hr));
  const clean: PreferencePair[] = heldOut.map((p) => (lexiconScore(p.chosen) > lexiconScore(p.rejected) ? p : { ...p, chosen: p.rejected, rejected: p.chosen }));
  const report = async (when: string) =>
    console.log(`${when}: held-out accuracy ${(await rm.accuracy(heldOut)).toFixed(3)} (noisy labels), ${(await rm.accuracy(clean)).toFixed(3)} (lexicon order)`);
  await report('before');

  const t0 = performance.now();
  await rm.train((r) => task.preferencePair(r), {
    ...DEFAULT_RM_TRAIN,
    steps,
    pairsPerStep: pairs,
    peakLr: lr,
    seed,
    heldOut: clean,
    evalEvery: Math.max(1, Math.round(steps / 10)),
    onLog: (i) => {
      if (i.heldOutAccuracy === undefined) return;
      console.log(
        `step ${String(i.step).padStart(5)}  loss ${i.loss.toFixed(4)}  batch acc ${i.accuracy.toFixed(2)}  held-out acc ${i.heldOutAccuracy.toFixed(3)}  lr ${i.lr.toExponential(2)}  |g| ${i.gradNorm.toFixed(3)}  ${((performance.now() - t0) / 1000).toFixed(1)}s`,
      );
    },
  });
  await report('after');

  const bytes = await rm.checkpoint();
  mkdirSync(dirname(values.out!), { recursive: true });
  writeFileSync(values.out!, bytes);
  console.log(`wrote ${values.out} (${(bytes.length / 1024).toFixed(1)} KiB) after ${((performance.now() - t0) / 1000).toFixed(1)}s of training`);
  process.exit(0);
}

runCli(main);
