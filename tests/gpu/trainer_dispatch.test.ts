// Structural budget of one PPO iteration at the benchmark's config S on WebGPU (issue 11), from the
// recorder's counters — counts, not wall-clock: ≤ 300 dispatches (≤ 249 once the rollout is
// sampled ahead), ≤ 3 submits and ≤ 2 readbacks.
// After the first iteration the rollout is sampled ahead (after the previous update, read back
// with its statistics), so an iteration waits on the device once, at its end: one readback, and
// no readback between its submits. The per-stage split is what `npm run bench -- --only trainer
// --config S` prints.
import { describe, expect, it } from 'vitest';
import { BENCH_CONFIGS } from '../../src/bench/model.ts';
import { benchTrainer } from '../../src/bench/trainer.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { declaredKernels } from '../../src/ops/registry.ts';
import type { GpuCounters } from '../../src/gpu/recorder.ts';
import { GpuRuntime } from '../../src/gpu/runtime.ts';
import { webgpuBackend } from '../helpers/backends.ts';

describe('dispatch budget of one PPO iteration at S (webgpu)', () => {
  it('stays within 300 dispatches, 3 submits and 2 readbacks; from the second iteration on, 1 readback at the end, the rollout sampled ahead', async () => {
    const be = await webgpuBackend();
    const S = BENCH_CONFIGS.find((c) => c.name === 'S')!;
    let marks: [string, GpuCounters][] = [];
    const trainer = await benchTrainer(be, S, { onRecord: (st) => marks.push([st, { ...be.counters() }]) });
    try {
      for (const which of ['first', 'steady'] as const) {
        be.flush();
        marks = [];
        const before = { ...be.counters() };
        const k0 = new Map(be.rt.recorder.dispatchesByKernel);
        const { metrics } = await trainer.iteration();
        const after = { ...be.counters() };
        const dispatches = after.dispatches - before.dispatches;
        const submits = after.submits - before.submits;
        const readbacks = after.readbacks - before.readbacks;
        console.log(`[dispatch budget] S, ${which} iteration: ${dispatches} dispatches, ${submits} submits, ${readbacks} readbacks`);
        // The trainer's own metrics count the same thing.
        expect(metrics.gpu_dispatches).toBe(dispatches);
        expect(submits).toBeLessThanOrEqual(3);
        expect(readbacks).toBeLessThanOrEqual(2);
        // One rollout per iteration, sampled at its end for the next: one fused decode dispatch per
        // generated token after the prefill (which samples the first token), and the sampler per token.
        const used = (k: string) => (be.rt.recorder.dispatchesByKernel.get(k) ?? 0) - (k0.get(k) ?? 0);
        const rollouts = which === 'first' ? 2 : 1;
        const decodeStep = be.rt.cpuAdapter ? 'decode_step_scratch:decode_step' : 'decode_step:decode_step';
        expect(used(decodeStep)).toBe(rollouts * (S.response - 1));
        expect(used('sample:sample_step')).toBe(rollouts * S.response);
        // Stages in order: rollout, experience, update, the next iteration's rollout (recorded), and
        // update again for the wait: the iteration's one readback of statistics and sequences together.
        expect(marks.map(([st]) => st)).toEqual(['rollout', 'experience', 'update', 'rollout', 'update']);
        const at = (i: number) => marks[i][1];
        const nextRollout = at(4).dispatches - at(3).dispatches;
        expect(after.dispatches - at(4).dispatches).toBe(0);
        expect(nextRollout).toBeLessThanOrEqual(2 * S.response + 8 * S.nLayer + 8);
        // The first iteration also samples its own rollout: its work without the next one's is the budget.
        expect(which === 'first' ? dispatches - nextRollout : dispatches).toBeLessThanOrEqual(300);
        expect(after.readbacks - at(3).readbacks).toBe(1);
        if (which === 'steady') {
          // Issue 21: moving the minibatch gathers to the device may not add dispatches (249 before).
          expect(dispatches).toBeLessThanOrEqual(249);
          // Nothing waits on the device before the end: this iteration's rollout came with the last one.
          expect(at(1).dispatches - at(0).dispatches).toBe(0);
          expect(readbacks).toBe(1);
          expect(at(3).readbacks - before.readbacks).toBe(0);
        } else {
          // The first iteration samples its own rollout and waits for it (its one extra readback submit).
          expect(at(1).readbacks - at(0).readbacks).toBe(1);
          expect(at(1).submits - at(0).submits).toBe(1);
        }
      }
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
    await be.precompile(declaredKernels());
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
