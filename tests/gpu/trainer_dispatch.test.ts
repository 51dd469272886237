// Structural budget of one PPO iteration at the benchmark's config S on WebGPU (issue 11), from the
// recorder's counters — counts, not wall-clock: ≤ 300 dispatches, ≤ 3 submits (the rollout's
// readback, the experience flush, the final readback) and ≤ 2 readbacks (sequences, statistics).
// The per-stage split is what `npm run bench -- --only trainer --config S` prints.
import { describe, expect, it } from 'vitest';
import { BENCH_CONFIGS } from '../../src/bench/model.ts';
import { benchTrainer } from '../../src/bench/trainer.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { declaredKernels } from '../../src/gpu/pipelines.ts';
import type { GpuCounters } from '../../src/gpu/recorder.ts';
import { GpuRuntime } from '../../src/gpu/runtime.ts';
import { webgpuBackend } from '../helpers/backends.ts';

describe('dispatch budget of one PPO iteration at S (webgpu)', () => {
  it('stays within 300 dispatches, 3 submits and 2 readbacks, with the fused decode step once per generated token', async () => {
    const be = await webgpuBackend();
    const S = BENCH_CONFIGS.find((c) => c.name === 'S')!;
    const marks: Record<string, GpuCounters> = {};
    const trainer = await benchTrainer(be, S, (st) => (marks[st] = { ...be.counters() }));
    try {
      be.flush();
      const before = { ...be.counters() };
      const k0 = new Map(be.rt.recorder.dispatchesByKernel);
      const { metrics } = await trainer.iteration();
      const after = { ...be.counters() };
      const dispatches = after.dispatches - before.dispatches;
      const submits = after.submits - before.submits;
      const readbacks = after.readbacks - before.readbacks;
      console.log(`[dispatch budget] S: ${dispatches} dispatches, ${submits} submits, ${readbacks} readbacks`);
      // The trainer's own metrics count the same thing.
      expect(metrics.gpu_dispatches).toBe(dispatches);
      expect(dispatches).toBeLessThanOrEqual(300);
      expect(submits).toBeLessThanOrEqual(3);
      expect(readbacks).toBeLessThanOrEqual(2);
      // The rollout is one fused decode dispatch per generated token after the prefill
      // (the prefill samples the first response token) and nothing else per token but the sampler.
      const used = (k: string) => (be.rt.recorder.dispatchesByKernel.get(k) ?? 0) - (k0.get(k) ?? 0);
      expect(used('decode_step:decode_step')).toBe(S.response - 1);
      expect(used('sample:sample_step')).toBe(S.response);
      const rollout = marks.experience.dispatches - marks.rollout.dispatches;
      expect(rollout).toBeLessThanOrEqual(2 * S.response + 8 * S.nLayer + 8);
      // Uploads between dispatches are recorded copies, not submits: the rollout has its one readback submit.
      expect(marks.experience.submits - marks.rollout.submits).toBe(1);
    } finally {
      trainer.dispose();
    }
  });

  // Both variant choices on this one adapter: as a CPU implementation (SwiftShader's own choice)
  // and as a GPU (GpuRuntime.cpuAdapter forced off, the branch a laptop GPU takes).
  it.each([true, false])('precompile (cpuAdapter = %s) and the trainer build every kernel an iteration dispatches: the iteration compiles nothing more', async (cpuAdapter) => {
    const shared = await webgpuBackend();
    // A fresh pipeline cache on the same device, so nothing is built yet.
    const be = new WebGpuBackend(new GpuRuntime(shared.rt.device, shared.rt.adapterName));
    be.rt.cpuAdapter = cpuAdapter;
    expect(be.rt.pipelines.size).toBe(0);
    await be.precompile();
    const declared = declaredKernels(cpuAdapter).length;
    expect(be.rt.pipelines.size).toBe(declared);
    // The variants only the other kind of adapter dispatches were left out.
    expect(declared).toBeLessThan(declaredKernels().length);
    const trainer = await benchTrainer(be, BENCH_CONFIGS.find((c) => c.name === 'S')!);
    try {
      // Creating the trainer built its one decode shape (the fused decode step, sized per shape).
      const built = be.rt.pipelines.size;
      expect(built).toBe(declared + 1);
      await trainer.iteration();
      expect(be.rt.pipelines.size).toBe(built);
    } finally {
      trainer.dispose();
    }
  });
});
