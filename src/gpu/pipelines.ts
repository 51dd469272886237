// Compute pipelines cached by (shader source, entry point, override constants, binding layout).
import { shaderSource } from './shaders.ts';

/** How a kernel binds its buffers: binding 0 is the uniform block (when present), then storage buffers in order. */
export interface KernelSpec {
  /** Shader file name in shaders/ without `.wgsl`. */
  shader: string;
  entry: string;
  /** Storage bindings in order, starting at binding 1: `read` = read-only, `rw` = read_write. */
  storage: readonly ('read' | 'rw')[];
  /** Whether binding 0 is a uniform block (bound with a dynamic offset into the uniform arena). */
  uniform: boolean;
  /** WGSL `override` constants (workgroup sizes, static sizes). */
  constants?: Record<string, number>;
}

export interface CachedPipeline {
  id: number;
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  spec: KernelSpec;
}

export function specKey(spec: KernelSpec): string {
  const consts = spec.constants
    ? Object.keys(spec.constants)
        .sort()
        .map((k) => `${k}=${spec.constants![k]}`)
        .join(',')
    : '';
  return `${spec.shader}#${spec.entry}|${spec.uniform ? 'u' : ''}${spec.storage.join('')}|${consts}`;
}

export class PipelineCache {
  private readonly byKey = new Map<string, CachedPipeline>();
  private readonly modules = new Map<string, GPUShaderModule>();
  private nextId = 1;

  constructor(private readonly device: GPUDevice) {}

  get size(): number {
    return this.byKey.size;
  }

  get(spec: KernelSpec): CachedPipeline {
    const key = specKey(spec);
    let hit = this.byKey.get(key);
    if (hit) return hit;
    const code = shaderSource(spec.shader);
    let module = this.modules.get(code);
    if (!module) {
      module = this.device.createShaderModule({ label: spec.shader, code });
      this.modules.set(code, module);
    }
    const entries: GPUBindGroupLayoutEntry[] = [];
    if (spec.uniform) {
      entries.push({
        binding: 0,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: 'uniform', hasDynamicOffset: true },
      });
    }
    spec.storage.forEach((access, i) => {
      entries.push({
        binding: i + 1,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: access === 'read' ? 'read-only-storage' : 'storage' },
      });
    });
    const layout = this.device.createBindGroupLayout({ label: key, entries });
    const pipeline = this.device.createComputePipeline({
      label: key,
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: spec.entry, constants: spec.constants },
    });
    hit = { id: this.nextId++, pipeline, layout, spec };
    this.byKey.set(key, hit);
    return hit;
  }
}
