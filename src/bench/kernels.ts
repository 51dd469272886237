// PPO kernel benchmarks: each op with a bench case (src/ops/registry.ts) at the S and M benchmark
// sizes (KERNEL_SIZES below), WebGPU beside the float64 CPU reference in the same run.
import type { Backend } from '../backend/backend.ts';
import { tensorsIn } from '../backend/scope.ts';
import { makeBenchBatch, type BenchSize } from '../ops/benchBatch.ts';
import { BENCH_CASES } from '../ops/registry.ts';
import { timeIt, type Timed } from './timing.ts';

export const KERNEL_SIZES: BenchSize[] = [
  { name: 'S', B: 16, A: 16, V: 32 },
  { name: 'M', B: 32, A: 32, V: 32 },
];

export interface KernelRow {
  op: string;
  size: string;
  gpu: Timed;
  cpu: Timed;
}

export async function benchKernels(gpuBe: Backend, cpuBe: Backend, sizes: string[] = KERNEL_SIZES.map((k) => k.name)): Promise<KernelRow[]> {
  const rows: KernelRow[] = [];
  for (const size of KERNEL_SIZES.filter((k) => sizes.includes(k.name))) {
    const gx = makeBenchBatch(gpuBe, size, 7);
    const cx = makeBenchBatch(cpuBe, size, 7);
    for (const { label, run } of BENCH_CASES) {
      const gpu = await timeIt(gpuBe, () => gpuBe.dispose(...tensorsIn(run(gpuBe, gx))));
      const cpu = await timeIt(cpuBe, () => cpuBe.dispose(...tensorsIn(run(cpuBe, cx))));
      rows.push({ op: label, size: size.name, gpu, cpu });
    }
  }
  return rows;
}
