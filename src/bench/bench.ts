// npm run bench [-- --only kernels|model|trainer|page] [--json out.json]
// Times the WGSL kernels, the transformer and the PPO iteration on the current adapter beside the
// float64 CPU reference backend in the same run. On a machine without a GPU the adapter is
// SwiftShader (software): read the ratios and structural counts, not the absolute times.
import { writeFileSync } from 'node:fs';
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { nodeDevice } from '../node/webgpu.ts';
import { benchKernels } from './kernels.ts';
import { table } from './timing.ts';

async function main(argv: string[]): Promise<void> {
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null;
  const jsonOut = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : null;
  const { device, adapterName } = await nodeDevice();
  const gpuBe = new WebGpuBackend(new GpuRuntime(device, adapterName));
  const cpuBe = new CpuBackend();
  const report: Record<string, unknown> = { adapter: adapterName, date: new Date().toISOString() };
  console.log(`# PPO Playground benchmarks\nadapter: ${adapterName}\nnode: ${process.version}\n`);

  if (!only || only === 'kernels') {
    const rows = await benchKernels(gpuBe, cpuBe);
    report.kernels = rows;
    console.log('## PPO kernels (median ms per call; size S = B16 A16 V32, M = B32 A32 V32)\n');
    console.log(
      table(
        ['kernel', 'size', 'webgpu ms', 'cpu ref ms', 'cpu/webgpu', 'dispatches', 'submits'],
        rows.map((r) => [r.op, r.size, r.gpu.medianMs, r.cpu.medianMs, r.cpu.medianMs / r.gpu.medianMs, r.gpu.perCall.dispatches, r.gpu.perCall.submits]),
      ),
    );
    console.log('');
  }
  for (const [name, load] of EXTRA_SECTIONS) {
    if (only && only !== name) continue;
    const section = await load();
    report[name] = await section(gpuBe, cpuBe);
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
}

type Section = (gpuBe: WebGpuBackend, cpuBe: CpuBackend) => Promise<unknown>;

/** Sections in their own modules, loaded lazily so a missing one does not stop the others. */
const EXTRA_SECTIONS: [string, () => Promise<Section>][] = [
  ['model', async () => (await import('./model.ts')).printModelBench],
  ['trainer', async () => (await import('./trainer.ts')).printTrainerBench],
  ['page', async () => (await import('./pageFrames.ts')).printPageBench],
];

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
