// The one way a Node command (CLI, bench, soak) gets a backend: the float64 CPU reference, or the
// WebGPU backend on a Dawn device (src/node/webgpu.ts). The page's worker has its own, on the
// browser's navigator.gpu.
import type { Backend } from '../backend/backend.ts';
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import type { HostDeps } from '../worker/hostDeps.ts';
import type { BackendChoice } from '../worker/protocol.ts';
import { nodeDevice } from './webgpu.ts';

export type BackendKind = 'webgpu' | 'cpu';
export const BACKEND_KINDS: readonly BackendKind[] = ['webgpu', 'cpu'];

/** WebGPU on a Dawn device, with its runtime (memory, counters), adapter and device. */
export async function makeWebGpuBackend(): Promise<{ be: WebGpuBackend; rt: GpuRuntime; adapter: GPUAdapter; device: GPUDevice; adapterName: string }> {
  const { adapter, device, adapterName } = await nodeDevice();
  const rt = new GpuRuntime(device, adapterName);
  return { be: new WebGpuBackend(rt), rt, adapter, device, adapterName };
}

/** The backend a `--backend webgpu|cpu` flag names; any other value is an error naming the flag. */
export async function makeBackend(kind: string): Promise<Backend> {
  if (kind === 'cpu') return new CpuBackend();
  if (kind !== 'webgpu') throw new Error(`--backend must be webgpu or cpu, got ${kind}`);
  return (await makeWebGpuBackend()).be;
}

/**
 * A worker host's backend in Node (`npm run record-runs`, the worker tests), as the page's worker
 * makes its own: the CPU reference (`cpu`, a fresh one by default), or WebGPU on a fresh Dawn
 * device whose loss is reported to `onLost` and which `destroy` ends.
 */
export async function hostBackend(choice: BackendChoice, onLost: (reason: string) => void, cpu: () => Backend = () => new CpuBackend()): ReturnType<HostDeps['makeBackend']> {
  if (choice === 'cpu') return { be: cpu(), adapter: 'none (CPU reference backend)' };
  const acquired = await nodeDevice((info) => onLost(`${info.reason}: ${info.message}`));
  return { be: new WebGpuBackend(new GpuRuntime(acquired.device, acquired.adapterName)), adapter: acquired.adapterName, destroy: () => acquired.device.destroy() };
}
