// npm run bench -- --only profile [--config S|M]: GPU time per kernel in one PPO iteration,
// measured with timestamp queries around every dispatch (DispatchProfiler in src/gpu/recorder.ts).
// On SwiftShader the times are CPU times of the software rasteriser's compute threads.
import { DispatchProfiler } from '../gpu/recorder.ts';
import type { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import type { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { benchTrainer } from './trainer.ts';
import type { BenchConfig } from './model.ts';
import { table } from './timing.ts';

export async function printProfileBench(gpuBe: WebGpuBackend, _cpu: CpuBackend, ctx: { configs: BenchConfig[]; repeats: number; device: GPUDevice }): Promise<unknown> {
  if (!ctx.device.features.has('timestamp-query')) {
    console.log('## Profile: the adapter has no timestamp-query; skipped\n');
    return null;
  }
  const out: Record<string, unknown> = {};
  for (const c of ctx.configs) {
    const rec = gpuBe.rt.recorder;
    const prof = new DispatchProfiler(ctx.device);
    const trainer = await benchTrainer(gpuBe, c, { onRecord: (st) => (prof.label = st) });
    await trainer.iteration(); // warm-up: pipelines, pools, bind groups
    const byKernel = new Map<string, { ns: number; n: number }>();
    const byStage = new Map<string, { ns: number; n: number }>();
    const byShape = new Map<string, { ns: number; n: number }>();
    const add = (m: Map<string, { ns: number; n: number }>, k: string, ns: number) => {
      const e = m.get(k) ?? { ns: 0, n: 0 };
      e.ns += ns;
      e.n++;
      m.set(k, e);
    };
    rec.profiler = prof;
    const t0 = performance.now();
    for (let i = 0; i < ctx.repeats; i++) await trainer.iteration();
    gpuBe.flush();
    await ctx.device.queue.onSubmittedWorkDone();
    const wall = (performance.now() - t0) / ctx.repeats;
    rec.profiler = null;
    let total = 0;
    for (const { name, ns } of await prof.collect()) {
      const [kernel, grid, stage] = name.split(' ');
      add(byKernel, kernel, ns);
      add(byStage, stage ?? '', ns);
      add(byShape, `${stage} ${kernel} ${grid}`, ns);
      total += ns;
    }
    trainer.dispose();
    const r = ctx.repeats;
    const rows = (m: Map<string, { ns: number; n: number }>, top = 1000) =>
      [...m]
        .sort((a, b) => b[1].ns - a[1].ns)
        .slice(0, top)
        .map(([k, e]) => [k, e.n / r, e.ns / r / 1e6, (100 * e.ns) / total]);
    console.log(`## Profile, config ${c.name}: GPU time per iteration (timestamp queries, mean of ${r}); wall ${wall.toFixed(0)} ms, kernels ${(total / r / 1e6).toFixed(0)} ms\n`);
    console.log(table(['stage', 'dispatches', 'gpu ms', '%'], rows(byStage)));
    console.log('');
    console.log(table(['kernel', 'dispatches', 'gpu ms', '%'], rows(byKernel)));
    console.log('');
    console.log(table(['stage kernel [grid]', 'dispatches', 'gpu ms', '%'], rows(byShape, 40)));
    console.log('');
    out[c.name] = { wallMs: wall, kernelMs: total / r / 1e6, byKernel: rows(byKernel) };
  }
  return out;
}
