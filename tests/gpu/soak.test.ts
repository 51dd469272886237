// A short soak on WebGPU (the CI cut of `npm run soak`): 30 iterations of a tiny config, GPU
// memory read after every iteration. After the 10-iteration warm-up the bytes held by the buffer
// pool, the live GPU buffers and the pool buffers held by live tensors must not grow (5%), and
// the soak's verdict must catch a leak of one small tensor per iteration, and of JS data.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runSoak, tinySoakConfig } from '../../src/fuzz/soak.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { webgpuBackend } from '../helpers/backends.ts';

const checkpoint = new Uint8Array(readFileSync('public/checkpoints/arithmetic.safetensors'));

describe('soak (WebGPU, 30 iterations)', () => {
  it('pool bytes, live buffers and tensors held stay flat from iteration 10 to 30', async () => {
    const be = await webgpuBackend();
    const config = { ...tinySoakConfig(DEFAULT_CONFIG), promptsPerBatch: 1, maxResponseLength: 2, evalEvery: 10 };
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: checkpoint });
    const report = await runSoak({ trainer, iters: 30, memory: () => be.rt.memory(), evalEvery: config.evalEvery });
    trainer.dispose();
    const byWhat = Object.fromEntries(report.checks.map((c) => [c.what, c]));
    for (const what of ['GPU bytes held by the buffer pool', 'live GPU buffers', 'pool buffers held by live tensors (end of iteration)']) {
      const c = byWhat[what];
      expect(c.atWarmup, what).toBeGreaterThan(0);
      expect(c.worst, `${what}: ${c.atWarmup} at iteration 10, ${c.worst} after`).toBeLessThanOrEqual(c.atWarmup * 1.05);
    }
    // A trainer holds its tensors between iterations; the count is exact, not approximate.
    const [at10, , at30] = report.points;
    expect(at30.gpu!.tensorBuffers).toBe(at10.gpu!.tensorBuffers);
  }, 240_000); // ~20 s on an idle 2-core machine; the margin is for a shared one

  it('the verdict catches a leak of one 4 KiB tensor per iteration', async () => {
    const be = await webgpuBackend();
    const leaky = { iteration: async () => void be.zeros([1024]), evaluate: async () => ({}) };
    const report = await runSoak({ trainer: leaky as unknown as PpoTrainer, iters: 30, memory: () => be.rt.memory() });
    const live = report.checks.find((c) => c.what === 'live GPU buffers')!;
    expect(live.flat).toBe(false);
    expect(live.worst - live.atWarmup).toBe(20);
    expect(report.flat).toBe(false);
  });

  it('the heap verdict catches JS data kept by every iteration (400 KB each)', async () => {
    const kept: number[][] = [];
    const leaky = { iteration: async () => void kept.push(Array.from({ length: 50_000 }, (_, k) => k + 0.5)), evaluate: async () => ({}) };
    const report = await runSoak({ trainer: leaky as unknown as PpoTrainer, iters: 30, memory: () => null });
    const data = report.checks.find((c) => c.what.startsWith('JS heap data'))!;
    // 20 iterations after warm-up keep 20 × 50 000 doubles: at least 7.6 MB more live data.
    expect(data.worst - data.atWarmup, `${data.atWarmup} MB at iteration 10, ${data.worst} MB after`).toBeGreaterThan(7);
    expect(data.flat).toBe(false);
    expect(kept.length).toBe(30);
  });
});
