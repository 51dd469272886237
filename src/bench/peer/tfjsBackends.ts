// Loads TF.js 4.22 with its WebGPU and WASM backends in Node. The WebGPU backend is built on the
// project's own GPUDevice (the same Dawn device the project's kernels run on), not on a second
// device: TF.js's default factory asks navigator.gpu for its own adapter and device, so we replace
// that factory with one that wraps our device. The kernels TF.js registered for 'webgpu' stay
// registered (they are keyed by backend name, not by factory).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as TF from '@tensorflow/tfjs';

export type Tf = typeof TF;

export interface LoadedTf {
  tf: Tf;
  /** Backends that initialised, in the order they will be measured. */
  backends: ('webgpu' | 'wasm')[];
  /** Why a backend is missing, by name. */
  failures: Record<string, string>;
}

export async function loadTf(adapter: GPUAdapter, device: GPUDevice): Promise<LoadedTf> {
  // The WebGPU backend registers itself on import only where navigator.gpu exists (Node 20 has no
  // navigator). requestAdapter hands back the project's adapter should anything ask for one.
  const g = globalThis as unknown as { navigator?: { gpu?: unknown } };
  g.navigator ??= {};
  g.navigator.gpu ??= { requestAdapter: async () => adapter, getPreferredCanvasFormat: () => 'rgba8unorm' };
  const tf = (await import('@tensorflow/tfjs')) as unknown as Tf;
  const webgpu = await import('@tensorflow/tfjs-backend-webgpu');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const failures: Record<string, string> = {};
  const backends: ('webgpu' | 'wasm')[] = [];

  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => new webgpu.WebGPUBackend(device, adapter.info), 3);
  // The .wasm binaries sit next to the package's entry point.
  const wasmDir = join(dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm')), '/');
  wasm.setWasmPaths(wasmDir);

  for (const name of ['webgpu', 'wasm'] as const) {
    try {
      if (await tf.setBackend(name)) backends.push(name);
      else failures[name] = `tf.setBackend('${name}') returned false`;
    } catch (e) {
      failures[name] = String(e);
    }
  }
  return { tf, backends, failures };
}
