// Fixtures of the trainer tests: tiny random-init checkpoints (fast on SwiftShader) and the
// shipped SFT checkpoints when they exist.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { saveCheckpoint } from '../../src/model/checkpoint.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
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
  const path = env ?? join(__dirname, '..', '..', 'public', 'checkpoints', `${task}.safetensors`);
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
