// One preset trained on whichever WebGPU the runtime offers, for comparing two implementations:
// under Node it is Dawn (the `webgpu` package, SwiftShader here), under Deno it is wgpu (Deno's
// own WebGPU, Firefox's implementation; Mesa's lavapipe here). Records, per iteration, every
// sampled token id, every task score and every metric, and the held-out evaluation before and
// after, so tests/wgpu/cross_engine.test.ts can compare the two runs.
//   node --import tsx tests/wgpu/crossRun.ts --seed S [--iters 10] [--out run.json]
//   deno run -A --config tests/wgpu/deno.json tests/wgpu/crossRun.ts --seed S [--iters 10] [--out run.json]
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkpointPath, resolvePresetArm } from '../../src/cli/presetRun.ts';
import { armConfig } from '../../src/rl/presets.ts';
import { makeWebGpuBackend } from '../../src/node/backend.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';

/** The preset both engines train: the cheapest whole recipe (3-token answers, 64 samples). */
export const CROSS_PRESET = 'Learn arithmetic';
export const CROSS_ITERS = 10;
export const REPORTS = process.env.PPO_REPORTS ?? '.reports';
/** A fresh seed each run (from the run's TEST_SEED), so the agreement is not one lucky seed's. */
export const CROSS_SEED = (Number(process.env.TEST_SEED ?? 1) % 1_000_000) + 1;
/** Held-out evaluation size: prompts × samples per prompt (sampled accuracy) plus greedy. */
const EVAL_COUNT = 32;
const EVAL_SAMPLES = 2;

export interface CrossIteration {
  tokens: number[]; // (B·A) sampled response token ids
  scores: number[]; // (B) task scores as the reward got them
  metrics: Record<string, number>;
}
export interface CrossRecord {
  engine: string; // "dawn" | "wgpu"
  adapter: string;
  preset: string;
  seed: number;
  evalBefore: Record<string, number>;
  evalAfter: Record<string, number>;
  iterations: CrossIteration[];
  seconds: number;
}

export async function crossRun(seed: number, iters = CROSS_ITERS): Promise<CrossRecord> {
  const t0 = performance.now();
  const arm = resolvePresetArm(CROSS_PRESET);
  if ('error' in arm) throw new Error(arm.error);
  const config = armConfig(arm.preset, arm.arm, seed);
  const { be, adapterName } = await makeWebGpuBackend();
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: new Uint8Array(readFileSync(checkpointPath(config.task))) });
  try {
    const evalBefore = await trainer.evaluate(EVAL_COUNT, EVAL_SAMPLES);
    const iterations: CrossIteration[] = [];
    for (let i = 0; i < iters; i++) {
      // capture: the whole batch's tokens and scores are read back with the iteration's last readback.
      const r = await trainer.iteration({ capture: true, sampleNext: i + 1 < iters });
      if (!r.trace) throw new Error(`iteration ${r.iter}: no trace captured`);
      iterations.push({ tokens: [...r.trace.responseTokens], scores: [...r.trace.scores], metrics: r.metrics });
    }
    const evalAfter = await trainer.evaluate(EVAL_COUNT, EVAL_SAMPLES);
    const engine = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined' ? 'wgpu' : 'dawn';
    return { engine, adapter: adapterName, preset: CROSS_PRESET, seed, evalBefore, evalAfter, iterations, seconds: (performance.now() - t0) / 1000 };
  } finally {
    trainer.dispose();
    be.rt.device.destroy();
  }
}

let dawnPromise: Promise<CrossRecord> | null = null;
/**
 * The Dawn run, started once: tests/wgpu/run.ts starts it before the kernel tests so that the Node
 * child trains while they run, and the test below picks up the same promise.
 */
export function startDawnRun(): Promise<CrossRecord> {
  dawnPromise ??= dawnRun(CROSS_SEED);
  // Rejections are the test's to report; do not let an early one end the process.
  dawnPromise.catch(() => {});
  return dawnPromise;
}

function dawnRun(seed: number): Promise<CrossRecord> {
  const node = process.env.PPO_NODE ?? 'node';
  const out = join(REPORTS, 'cross-dawn.json');
  mkdirSync(REPORTS, { recursive: true });
  const env = { ...process.env };
  // The Dawn child gets the Vulkan driver the Node tests use (SwiftShader unless the caller chose).
  if (process.env.PPO_DAWN_VK_ICD) env.VK_ICD_FILENAMES = process.env.PPO_DAWN_VK_ICD;
  else delete env.VK_ICD_FILENAMES;
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['--import', 'tsx', 'tests/wgpu/crossRun.ts', '--seed', String(seed), '--out', out], { env, stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`the Dawn run (${node} tests/wgpu/crossRun.ts) exited with ${code}:\n${stderr.slice(-2000)}`));
      else {
        console.log(stderr.trim());
        resolve(JSON.parse(readFileSync(out, 'utf8')) as CrossRecord);
      }
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, iters: { type: 'string' }, out: { type: 'string' } } });
  const rec = await crossRun(Number(values.seed ?? 1), values.iters ? Number(values.iters) : CROSS_ITERS);
  const text = JSON.stringify(rec);
  if (values.out) writeFileSync(values.out, text);
  else console.log(text);
  console.error(`[crossRun] ${rec.engine} on ${rec.adapter}: ${rec.iterations.length} iterations of "${rec.preset}" (seed ${rec.seed}) in ${rec.seconds.toFixed(1)} s`);
  process.exit(0);
}
