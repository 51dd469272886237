// Fixtures of the trainer tests: tiny random-init checkpoints (fast on SwiftShader) and the
// shipped SFT checkpoints when they exist.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { saveCheckpoint } from '../../src/model/checkpoint.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { METRIC_NAMES } from '../../src/worker/protocol.ts';

/** A random-init 1-layer, d32 lm checkpoint for `task` (maxSeq 16). */
export async function tinyCheckpoint(task: string, seed = 3): Promise<Uint8Array> {
  const t = getTask(task);
  const tok = taskTokenizer(t);
  const m = new Gpt(new CpuBackend(), { vocabSize: tok.vocabSize, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 16, head: 'lm' }, seed);
  return saveCheckpoint(m, { alphabet: tok.alphabet, task: t.name });
}

/** The shipped SFT checkpoint (public/checkpoints) or an override path from the environment. */
export function shippedCheckpoint(task: string): Uint8Array | null {
  const env = process.env[`PPO_${task.toUpperCase()}_CHECKPOINT`];
  const path = env ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'public', 'checkpoints', `${task}.safetensors`);
  return existsSync(path) ? new Uint8Array(readFileSync(path)) : null;
}

export function tinyConfig(over: Partial<PpoConfig> = {}): PpoConfig {
  return {
    ...DEFAULT_CONFIG,
    task: 'stop',
    promptsPerBatch: 4,
    samplesPerPrompt: 2,
    maxResponseLength: 6,
    ppoEpochs: 1,
    miniBatches: 2,
    ...over,
  };
}

/** Every metric the UI expects is present and every metric is finite. */
export function expectFiniteMetrics(m: Record<string, number>, where: string): void {
  for (const name of METRIC_NAMES) expect(m, `${where}: missing ${name}`).toHaveProperty(name);
  for (const [k, v] of Object.entries(m)) expect(Number.isFinite(v), `${where}: ${k} = ${v}`).toBe(true);
}

export const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

export interface StopRunSummary {
  rewardBefore: number;
  rewardAfter: number;
  eosBefore: number;
  eosAfter: number;
  /** mean per-sequence KL to the reference over the last `window` iterations */
  kl: number;
}

/**
 * The "stop at length n" task from a random-init tiny policy for `iters` iterations; reward, EOS
 * rate and KL averaged over the first and last `window` iterations. Every metric must be finite.
 */
export async function runStopTask(be: Backend, over: Partial<PpoConfig>, iters: number, window: number): Promise<StopRunSummary> {
  const config = tinyConfig({ promptsPerBatch: 8, samplesPerPrompt: 4, miniBatches: 2, ppoEpochs: 2, actorLr: 1e-3, seed: 1, ...over });
  const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
  const reward: number[] = [];
  const eos: number[] = [];
  const kl: number[] = [];
  for (let i = 0; i < iters; i++) {
    const m = (await trainer.iteration()).metrics;
    expectFiniteMetrics(m, `iteration ${i}`);
    reward.push(m.reward_mean);
    eos.push(m.eos_rate);
    kl.push(m.kl_seq);
  }
  trainer.dispose();
  const head = (xs: number[]) => mean(xs.slice(0, window));
  const tail = (xs: number[]) => mean(xs.slice(-window));
  return { rewardBefore: head(reward), rewardAfter: tail(reward), eosBefore: head(eos), eosAfter: tail(eos), kl: tail(kl) };
}

/** One stop-task run learned: its reward and its EOS rate rose clearly. */
export function expectStopLearns(r: StopRunSummary, name: string): void {
  expect(r.rewardAfter, `${name}: reward ${r.rewardBefore} → ${r.rewardAfter}`).toBeGreaterThan(r.rewardBefore + 0.15);
  expect(r.eosAfter, `${name}: eos rate ${r.eosBefore} → ${r.eosAfter}`).toBeGreaterThan(r.eosBefore + 0.2);
}

/** Both runs raise reward and EOS rate; β = 0 ends more than twice as far from the reference. */
export function expectStopPairLearns(free: StopRunSummary, tied: StopRunSummary): void {
  expectStopLearns(free, 'β=0');
  expectStopLearns(tied, 'β=0.6');
  expect(free.kl, `KL to reference: β=0 ${free.kl} vs β=0.6 ${tied.kl}`).toBeGreaterThan(2 * tied.kl);
}
