// The backends a kernel test runs on, written once: the float64 CPU backend, and WebGPU once per
// kernel choice an op makes by adapter kind (GpuRuntime.cpuAdapter): the workgroup kernels a GPU
// takes and the barrier-free ones a CPU implementation of WebGPU (SwiftShader, lavapipe) takes,
// so both run on this machine. The adapter's own setting is restored after each test (the Deno
// runner shares one backend between files). Suite titles end "on cpu" only for the CPU backend,
// which the Deno runner leaves out.
import { afterEach, describe } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { cpuBackend, webgpuBackend } from './backends.ts';

type Kind = 'gpu' | 'serial' | 'cpu';
const VARIANTS: [string, Kind][] = [
  ['webgpu (GPU kernels)', 'gpu'],
  ['webgpu (CPU-adapter kernels)', 'serial'],
  ['cpu', 'cpu'],
];

/** describe.each over the variants: `body` gets the backend maker and whether it is the float64 one. */
export function describeVariants(title: string, body: (makeBackend: () => Promise<Backend>, isReference: boolean) => void): void {
  describe.each(VARIANTS)(`${title} on %s`, (_name, kind) => {
    let saved: boolean | null = null;
    const make = async (): Promise<Backend> => {
      if (kind === 'cpu') return cpuBackend;
      const be = await webgpuBackend();
      saved ??= be.rt.cpuAdapter;
      be.rt.cpuAdapter = kind === 'serial';
      return be;
    };
    afterEach(async () => {
      if (saved === null) return;
      (await webgpuBackend()).rt.cpuAdapter = saved;
      saved = null;
    });
    body(make, kind === 'cpu');
  });
}
