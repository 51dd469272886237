// The thin WebGPU runtime: one device, its pipeline cache, buffer pool, recorder and readback ring.
import { BufferPool } from './bufferPool.ts';
import { PipelineCache, type KernelSpec } from './pipelines.ts';
import { ReadbackRing } from './readback.ts';
import { Recorder, type BufferRange, type GpuCounters } from './recorder.ts';
import type { UniformValues } from './uniforms.ts';

export interface GpuMemory {
  /** Every GPU buffer alive: pool + staging ring + upload chunks + uniform arena. */
  liveBuffers: number;
  /** Bytes held by the pool (in use or free for reuse) and its buffer count. */
  poolBytes: number;
  poolBuffers: number;
  /** Pool buffers handed out to live tensors, and their bytes. */
  tensorBuffers: number;
  tensorBytes: number;
  /** Readback staging ring plus the upload chunks. */
  stagingBytes: number;
  /** Bind groups in the recorder's LRU cache (JS and driver memory, bounded). */
  bindGroups: number;
}

const CPU_ADAPTER = /swiftshader|llvmpipe|lavapipe|basic render/i;

export class GpuRuntime {
  readonly pipelines: PipelineCache;
  readonly pool: BufferPool;
  readonly recorder: Recorder;
  readonly readback: ReadbackRing;
  private lostHandlers: ((info: GPUDeviceLostInfo) => void)[] = [];
  lost: GPUDeviceLostInfo | null = null;
  /**
   * Whether the adapter is WebGPU implemented on the CPU (SwiftShader, Mesa's llvmpipe/lavapipe):
   * kernels that pick a variant by shape favour fewer loads per product over more threads there.
   * From the adapter's name; tests set it to run the GPU choices on SwiftShader.
   */
  cpuAdapter: boolean;

  constructor(
    readonly device: GPUDevice,
    readonly adapterName: string,
  ) {
    this.cpuAdapter = CPU_ADAPTER.test(adapterName);
    this.pipelines = new PipelineCache(device);
    this.pool = new BufferPool(device);
    this.recorder = new Recorder(device, this.pool);
    this.readback = new ReadbackRing(device, this.recorder);
    void device.lost.then((info) => {
      this.lost = info;
      for (const h of this.lostHandlers) h(info);
    });
  }

  /** Registers a hook for device loss (the trainer pauses and keeps its last good weights). */
  onLost(handler: (info: GPUDeviceLostInfo) => void): void {
    this.lostHandlers.push(handler);
  }

  get counters(): GpuCounters {
    return this.recorder.counters;
  }

  /**
   * GPU memory this runtime holds: the buffer pool (tensors), the readback staging ring and the
   * uniform arena (one buffer). These are all the buffers the runtime creates.
   */
  memory(): GpuMemory {
    const pool = this.pool.stats();
    const staging = this.readback.staging;
    const uploads = this.recorder.uploads.stats;
    return {
      liveBuffers: pool.buffers + staging.buffers + uploads.buffers + 1,
      poolBytes: pool.bytes,
      poolBuffers: pool.buffers,
      tensorBuffers: pool.inUseBuffers,
      tensorBytes: pool.inUseBytes,
      stagingBytes: staging.bytes + uploads.bytes,
      bindGroups: this.recorder.cachedBindGroups,
    };
  }

  /** Records `spec` with its uniform struct's values by field name (null when it has none). */
  dispatch<F extends string>(
    spec: KernelSpec<F>,
    buffers: readonly BufferRange[],
    uniform: UniformValues<NoInfer<F>> | null,
    workgroups: readonly [number, number?, number?],
  ): void {
    this.recorder.dispatch(this.pipelines.get(spec), buffers, uniform, workgroups);
  }

  submit(): void {
    this.recorder.submit();
  }

  /** Waits for all submitted work (tests and benchmarks only; never inside the training loop). */
  async idle(): Promise<void> {
    this.recorder.submit();
    await this.device.queue.onSubmittedWorkDone();
  }
}

/** Workgroup count for `n` threads at `wg` threads per group. */
export function groups(n: number, wg: number): number {
  return Math.ceil(n / wg);
}

/** The most workgroups one dimension of a dispatch takes (WebGPU's maxComputeWorkgroupsPerDimension default). */
const MAX_GROUPS_PER_DIM = 65535;

/** Workgroup grid for n one-thread-per-element threads, folded into 2-D past 65535 groups. */
export function elementGrid(n: number, wg: number): [number, number] {
  const g = groups(n, wg);
  if (g <= MAX_GROUPS_PER_DIM) return [g, 1];
  return [MAX_GROUPS_PER_DIM, Math.ceil(g / MAX_GROUPS_PER_DIM)];
}
