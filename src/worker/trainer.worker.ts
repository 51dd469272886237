// The training Web Worker: all GPU work of the page happens here. It wires TrainerHost (the
// protocol logic) to the browser: WebGPU or the CPU reference backend, checkpoints fetched from the
// page's own static files, PpoTrainer, and a MessageChannel tick to yield between iterations.
/// <reference lib="webworker" />
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { acquireDevice } from '../gpu/device.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import type { KernelSpec } from '../gpu/pipelines.ts';
import { registerShaderGlob } from '../gpu/shaders.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { kernelsInOrder } from './firstKernels.ts';
import type { BackendHandle, CompileProgress } from './hostDeps.ts';
import type { BackendChoice, PageToWorker, WorkerToPage } from './protocol.ts';
import { TrainerHost } from './trainerHost.ts';

registerShaderGlob(import.meta.glob('/shaders/*.wgsl', { query: '?raw', import: 'default', eager: true }) as Record<string, string>);

const scope = self as unknown as DedicatedWorkerGlobalScope;

/**
 * URL of a file in public/checkpoints. The dev server serves public/ at the origin's root; a build
 * (base './') puts this worker in <page>/assets/, so the page's directory is one level up.
 */
function checkpointUrl(stem: string): URL {
  const file = `checkpoints/${stem}.safetensors`;
  return import.meta.env.DEV ? new URL(`/${file}`, scope.location.origin) : new URL(`../${file}`, scope.location.href);
}

async function fetchCheckpoint(stem: string): Promise<Uint8Array> {
  const res = await fetch(checkpointUrl(stem));
  if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function makeBackend(choice: BackendChoice, onLost: (reason: string) => void, onCompiled?: CompileProgress, ahead?: () => readonly KernelSpec[]): Promise<BackendHandle> {
  if (choice === 'cpu') return { be: new CpuBackend(), adapter: 'none (CPU reference backend)' };
  const acquired = await acquireDevice({ onLost: (info) => onLost(`${info.reason}: ${info.message}`) });
  const rt = new GpuRuntime(acquired.device, acquired.adapterName);
  const be = new WebGpuBackend(rt);
  // The character model's kernels (the page trains no other yet) that the first chart point dispatches, at once, through createComputePipelineAsync: the
  // browser compiles them off this thread while the page loads and the user reads, instead of one
  // by one inside the first iteration; each one's completion is counted so the page can show how
  // far compilation is. The other kernels wait until the first iteration no longer competes with
  // them for the CPU (firstKernels.ts). On a software adapter (SwiftShader, lavapipe) the GPU is
  // the CPU the training runs on: building kernels the run may never use would slow every
  // iteration that overlaps it, so there they are built on first use only.
  const { first, rest } = kernelsInOrder();
  // Asked for first, so the browser starts on the slowest kernel while it builds the others.
  void be.precompile(ahead?.() ?? []).catch(() => undefined);
  const t0 = performance.now();
  const compiled = be.precompile(first, (done, total) => onCompiled?.(done, total, performance.now() - t0));
  const compileRest = rt.cpuAdapter ? undefined : () => be.precompile(rest);
  return { be, adapter: acquired.adapterName, destroy: () => acquired.device.destroy(), compiled, compileRest };
}

/** A macrotask boundary that, unlike setTimeout(0), is not clamped to 4 ms after nesting. */
function tick(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}

const host = new TrainerHost({
  post: (msg: WorkerToPage, transfer: Transferable[] = []) => scope.postMessage(msg, transfer),
  makeBackend,
  fetchCheckpoint,
  createTrainer: (init) => PpoTrainer.create(init),
  tick,
});

scope.onmessage = (ev: MessageEvent<PageToWorker>) => {
  void host.handle(ev.data);
};
