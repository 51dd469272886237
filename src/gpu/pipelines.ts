// Compute pipelines cached by (shader, entry point, constants, binding layout); a shader module per
// specialised source (shaders.ts: the constants are set in the WGSL text, not as pipeline constants).
import { shaderSource } from './shaders.ts';
import type { UniformLayout } from './uniforms.ts';

/** How a kernel binds its buffers: binding 0 is the uniform block (when present), then storage buffers in order. */
export interface KernelSpec<F extends string = string> {
  /** Shader file name in shaders/ without `.wgsl`. */
  shader: string;
  entry: string;
  /** Storage bindings in order, starting at binding 1: `read` = read-only, `rw` = read_write. */
  storage: readonly ('read' | 'rw')[];
  /** The struct at binding 0 (bound with a dynamic offset into the uniform arena), or null for none. */
  uniform: UniformLayout<F> | null;
  /**
   * Values of the shader's module-scope `const`s (workgroup sizes, workgroup array lengths), set in
   * its source text (specializeConstants), never as pipeline `override` constants.
   */
  constants?: Record<string, number>;
  /** The one kind of adapter that dispatches this kernel (the op's variant choice); absent: every adapter. */
  only?: AdapterKind;
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

/**
 * Which adapters dispatch a kernel: some ops pick a variant by adapter (`GpuRuntime.cpuAdapter`),
 * e.g. a serial reduction without barriers on a CPU implementation of WebGPU, a workgroup tree on
 * a GPU. A kernel the adapter never dispatches need not be built before the first iteration.
 */
export type AdapterKind = 'gpu' | 'cpu';

/**
 * A kernel spec, marked with the one kind of adapter that dispatches it when the op picks a
 * variant by adapter (`only`), so compiling ahead can leave the other kind's variants out.
 */
export function kernel<T extends KernelSpec>(spec: T, only?: AdapterKind): T {
  return { ...spec, only };
}

/**
 * The kernels of `specs` an adapter dispatches: all of them without `cpuAdapter`; with it, those
 * not marked for the other kind (on SwiftShader the GPU-only variants cost ~0.2 s of building that
 * the first chart would wait for).
 */
export function forAdapter(specs: readonly KernelSpec[], cpuAdapter?: boolean): KernelSpec[] {
  const kind: AdapterKind | undefined = cpuAdapter === undefined ? undefined : cpuAdapter ? 'cpu' : 'gpu';
  return specs.filter((s) => kind === undefined || s.only === undefined || s.only === kind);
}

export class PipelineCache {
  private readonly byKey = new Map<string, CachedPipeline>();
  private readonly pending = new Map<string, Promise<CachedPipeline>>();
  private readonly modules = new Map<string, GPUShaderModule>();
  private nextId = 1;

  constructor(private readonly device: GPUDevice) {}

  get size(): number {
    return this.byKey.size;
  }

  private module(spec: KernelSpec): GPUShaderModule {
    const code = shaderSource(spec.shader, spec.constants);
    let module = this.modules.get(code);
    if (!module) {
      module = this.device.createShaderModule({ label: spec.shader, code });
      this.modules.set(code, module);
    }
    return module;
  }

  private layoutFor(spec: KernelSpec, key: string): GPUBindGroupLayout {
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
    return this.device.createBindGroupLayout({ label: key, entries });
  }

  private descriptor(spec: KernelSpec, key: string, layout: GPUBindGroupLayout): GPUComputePipelineDescriptor {
    return {
      label: key,
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module: this.module(spec), entryPoint: spec.entry },
    };
  }

  /** The pipeline of `spec`, compiled now (synchronously) unless precompile already built it. */
  get(spec: KernelSpec): CachedPipeline {
    const key = specKey(spec);
    let hit = this.byKey.get(key);
    if (hit) return hit;
    const layout = this.layoutFor(spec, key);
    const pipeline = this.device.createComputePipeline(this.descriptor(spec, key, layout));
    hit = { id: this.nextId++, pipeline, layout, spec };
    this.byKey.set(key, hit);
    return hit;
  }

  /**
   * Compiles every given kernel with createComputePipelineAsync, all in flight at once (the driver
   * compiles them in parallel, off the thread that records work), so the first iteration finds
   * them built. A kernel `get` needed meanwhile is compiled synchronously and wins.
   */
  async precompile(specs: readonly KernelSpec[]): Promise<void> {
    await Promise.all(
      specs.map((spec) => {
        const key = specKey(spec);
        if (this.byKey.has(key)) return undefined;
        let p = this.pending.get(key);
        if (!p) {
          const layout = this.layoutFor(spec, key);
          p = this.device.createComputePipelineAsync(this.descriptor(spec, key, layout)).then((pipeline) => {
            this.pending.delete(key);
            const existing = this.byKey.get(key);
            if (existing) return existing;
            const hit = { id: this.nextId++, pipeline, layout, spec };
            this.byKey.set(key, hit);
            return hit;
          });
          this.pending.set(key, p);
        }
        return p;
      }),
    );
  }
}
