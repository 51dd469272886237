// Both backends for tests written once: the WebGPU backend on Dawn (SwiftShader or a real GPU)
// and the float64 CPU reference. No adapter = a failing test, never a skip.
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { Backend } from '../../src/backend/backend.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { GpuRuntime } from '../../src/gpu/runtime.ts';
import { nodeDevice } from '../../src/node/webgpu.ts';

let webgpu: Promise<WebGpuBackend> | null = null;

export function webgpuBackend(): Promise<WebGpuBackend> {
  if (!webgpu) {
    webgpu = nodeDevice().then(({ device, adapterName }) => new WebGpuBackend(new GpuRuntime(device, adapterName)));
  }
  return webgpu;
}

export const cpuBackend = new CpuBackend();

/** [name, factory] pairs for describe.each. */
export const BACKENDS: [string, () => Promise<Backend>][] = [
  ['webgpu', webgpuBackend],
  ['cpu', async () => cpuBackend],
];
