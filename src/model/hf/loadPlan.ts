// The memory plan HfModel.load makes before it allocates anything: the backend's limits as an
// AdapterOffer (the device's maxBufferSize, maxStorageBufferBindingSize, storage buffers per
// stage, shader-f16), the run the model is loaded for, and a refusal carrying the plan's verdict
// (what is needed, what the GPU offers, what to lower) when it does not fit.
import type { Backend, GpuOpsHost } from '../../backend/backend.ts';
import type { HfArch } from './arch.ts';
import { type AdapterOffer, type MemoryPlan, planMemory } from './memoryPlan.ts';
import type { WeightDType } from './weightLayout.ts';

/** What a model is loaded to run: `batch` rows of up to promptTokens + responseTokens positions. */
export interface LoadRun {
  batch: number;
  promptTokens: number;
  responseTokens: number;
}

/** One row of one token: the least any use of the model needs (the weights, mostly). */
export const SMALLEST_RUN: LoadRun = { batch: 1, promptTokens: 1, responseTokens: 0 };

/** The plan does not fit the device; `message` is the plan's verdict. */
export class MemoryRefusal extends Error {
  constructor(readonly plan: MemoryPlan) {
    super(plan.message);
    this.name = 'MemoryRefusal';
  }
}

/** The limits a WebGPU backend's device was given; null on the CPU backend (host memory, no bindings). */
export function backendOffer(be: Backend, memoryBytes: number | null = null): AdapterOffer | null {
  if (be.kind !== 'webgpu') return null;
  const device = (be as GpuOpsHost).rt.device;
  const l = device.limits;
  return {
    maxBufferSize: l.maxBufferSize,
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    shaderF16: device.features.has('shader-f16'),
    memoryBytes,
  };
}

/** The inference plan of `a` with `dtype` weights for `run` on this backend; null on the CPU backend. */
export function planLoad(
  be: Backend,
  a: HfArch,
  dtype: WeightDType,
  run: LoadRun = SMALLEST_RUN,
  opts: { memoryBytes?: number | null; maxTableBytes?: number } = {},
): MemoryPlan | null {
  const offer = backendOffer(be, opts.memoryBytes ?? null);
  if (!offer) return null;
  return planMemory(a, { ...run, trainBatch: 0, lora: null, valueHead: false, weightDtype: dtype }, { ...offer, maxTableBytes: opts.maxTableBytes });
}
