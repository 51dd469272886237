// npm run bench [-- --only kernels|model|trainer|transfers|peer|page|compile|profile|sizes|hf] [--sizes S,M,L] [--size-backends webgpu,cpu] [--config S|M] [--repeats n] [--against dist-dir] [--max-step-s s] [--shapes reduced|real|all] [--json out.json]
// Times the WGSL kernels, the transformer and the PPO iteration on the current adapter beside the
// float64 CPU reference backend in the same run. On a machine without a GPU the adapter is
// SwiftShader (software): read the ratios and structural counts, not the absolute times.
import { writeFileSync } from 'node:fs';
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import type { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { makeWebGpuBackend } from '../node/backend.ts';
import { benchKernels } from './kernels.ts';
import { BENCH_CONFIGS, type BenchConfig } from './model.ts';
import { table } from './timing.ts';

async function main(argv: string[]): Promise<void> {
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null;
  const jsonOut = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : null;
  const configs = selectConfigs(arg(argv, '--config'));
  const repeats = Number(arg(argv, '--repeats') ?? 3);
  const maxStepS = Number(arg(argv, '--max-step-s') ?? 120);
  if (!Number.isInteger(repeats) || repeats < 1 || repeats > 50) throw new Error(`--repeats must be an integer in [1, 50], got ${arg(argv, '--repeats')}`);
  if (!(maxStepS > 0)) throw new Error(`--max-step-s must be a positive number of seconds, got ${arg(argv, '--max-step-s')}`);
  const sizes = arg(argv, '--sizes')?.split(',');
  const sizeBackends = arg(argv, '--size-backends')?.split(',');
  const hfShapes = arg(argv, '--shapes') ?? undefined;
  if (sizeBackends?.some((b) => b !== 'webgpu' && b !== 'cpu')) throw new Error(`--size-backends must list webgpu and/or cpu, got ${arg(argv, '--size-backends')}`);
  const { be: gpuBe, adapter, device, adapterName } = await makeWebGpuBackend();
  const cpuBe = new CpuBackend();
  const report: Record<string, unknown> = { adapter: adapterName, date: new Date().toISOString() };
  console.log(`# PPO Playground benchmarks\nadapter: ${adapterName}\nnode: ${process.version}\n`);

  if (!only || only === 'kernels') {
    const rows = await benchKernels(
      gpuBe,
      cpuBe,
      configs.map((c) => c.name),
    );
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
    const against = arg(argv, '--against');
    const section = name === 'page' && against ? await sideBySide(against) : await load();
    report[name] = await section(gpuBe, cpuBe, { configs, repeats, maxStepS, adapter, device, sizes, sizeBackends, hfShapes });
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
}

function arg(argv: string[], name: string): string | null {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : null;
}

function selectConfigs(name: string | null): BenchConfig[] {
  if (name === null) return BENCH_CONFIGS;
  const hit = BENCH_CONFIGS.filter((c) => c.name === name);
  if (hit.length === 0) throw new Error(`--config must be one of ${BENCH_CONFIGS.map((c) => c.name).join(', ')}, got ${name}`);
  return hit;
}

interface SectionContext {
  configs: BenchConfig[];
  repeats: number;
  maxStepS: number;
  adapter: GPUAdapter;
  device: GPUDevice;
  /** `--sizes S,M,L`: the model sizes of the `sizes` section (default all). */
  sizes?: string[];
  /** `--size-backends webgpu,cpu`: the backends of the `sizes` section (default both; the CPU backend at L takes an hour). */
  sizeBackends?: string[];
  /** `--shapes reduced|real|all|NAME,…`: the `hf` section's model shapes (default: reduced on a software adapter, all on a GPU). */
  hfShapes?: string;
}

type Section = (gpuBe: WebGpuBackend, cpuBe: CpuBackend, ctx: SectionContext) => Promise<unknown>;

/** Sections in their own modules, loaded lazily so a missing one does not stop the others. */
const EXTRA_SECTIONS: [string, () => Promise<Section>][] = [
  ['model', async () => (await import('./model.ts')).printModelBench],
  ['trainer', async () => (await import('./trainer.ts')).printTrainerBench],
  ['transfers', async () => (await import('./transfers.ts')).printTransferBench],
  ['peer', async () => (await import('./peer/peer.ts')).printPeerBench],
  ['page', async () => (await import('./pageFrames.ts')).printPageBench],
  ['compile', async () => (await import('./compile.ts')).printCompileBench],
  ['profile', async () => (await import('./profile.ts')).printProfileBench],
  ['sizes', async () => (await import('./sizes.ts')).printSizesBench],
  ['hf', async () => (await import('./hfRl.ts')).printHfSection],
];

/** `--only page --against <dist>`: only page open → first chart point, in turns with the build in that folder. */
async function sideBySide(against: string): Promise<Section> {
  const { printFirstPointSideBySide } = await import('./firstPointSideBySide.ts');
  return (_gpu, _cpu, ctx) => printFirstPointSideBySide(against, ctx.repeats);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
