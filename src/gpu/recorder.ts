// Records many dispatches into one command encoder and submits them together.
// Counters (dispatches, submits, readbacks) feed the benchmarks' structural figures.
import type { BufferPool } from './bufferPool.ts';
import type { CachedPipeline } from './pipelines.ts';
import { UniformArena, UNIFORM_SLOT } from './uniforms.ts';

/** A storage binding: a whole pooled buffer or a 256-byte-aligned range of one (a tensor view). */
export interface BufferRange {
  buffer: GPUBuffer;
  offset: number;
  size: number;
}

export interface GpuCounters {
  dispatches: number;
  submits: number;
  readbacks: number;
  copies: number;
}

export class Recorder {
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private readonly arena: UniformArena;
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  readonly counters: GpuCounters = { dispatches: 0, submits: 0, readbacks: 0, copies: 0 };

  constructor(
    private readonly device: GPUDevice,
    private readonly pool: BufferPool,
  ) {
    this.arena = new UniformArena(device);
  }

  private ensurePass(): GPUComputePassEncoder {
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    if (!this.pass) this.pass = this.encoder.beginComputePass();
    return this.pass;
  }

  private ensureEncoderOutsidePass(): GPUCommandEncoder {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    return this.encoder;
  }

  private bindGroupFor(p: CachedPipeline, buffers: readonly BufferRange[]): GPUBindGroup {
    let key = `${p.id}`;
    for (const b of buffers) key += `:${this.pool.idOf(b.buffer)}@${b.offset}+${b.size}`;
    let bg = this.bindGroups.get(key);
    if (!bg) {
      const entries: GPUBindGroupEntry[] = [];
      if (p.spec.uniform) entries.push({ binding: 0, resource: { buffer: this.arena.buffer, size: UNIFORM_SLOT } });
      buffers.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b.buffer, offset: b.offset, size: b.size } }));
      bg = this.device.createBindGroup({ layout: p.layout, entries });
      if (this.bindGroups.size > 20000) this.bindGroups.clear(); // bound the cache for long sessions
      this.bindGroups.set(key, bg);
    }
    return bg;
  }

  /** Records one dispatch. `uniform` is the packed uniform block (see UniformWriter). */
  dispatch(
    p: CachedPipeline,
    buffers: readonly BufferRange[],
    uniform: Uint8Array | null,
    workgroups: readonly [number, number?, number?],
  ): void {
    if (buffers.length !== p.spec.storage.length) {
      throw new Error(`${p.spec.shader}:${p.spec.entry} expects ${p.spec.storage.length} buffers, got ${buffers.length}`);
    }
    if (p.spec.uniform && !uniform) throw new Error(`${p.spec.shader}:${p.spec.entry} needs a uniform block`);
    if (this.arena.full) this.submit();
    const [x, y = 1, z = 1] = workgroups;
    if (x === 0 || y === 0 || z === 0) return;
    const pass = this.ensurePass();
    pass.setPipeline(p.pipeline);
    const bg = this.bindGroupFor(p, buffers);
    if (p.spec.uniform) pass.setBindGroup(0, bg, [this.arena.push(uniform!)]);
    else pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(x, y, z);
    this.counters.dispatches++;
  }

  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    if (bytes === 0) return;
    this.ensureEncoderOutsidePass().copyBufferToBuffer(src, srcOffset, dst, dstOffset, bytes);
    this.counters.copies++;
  }

  /** Gives direct access to the encoder (outside any compute pass), e.g. for readback copies. */
  encoderOutsidePass(): GPUCommandEncoder {
    return this.ensureEncoderOutsidePass();
  }

  get pending(): boolean {
    return this.encoder !== null;
  }

  /** Submits everything recorded so far as one command buffer. */
  submit(): void {
    if (!this.encoder) return;
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    this.arena.upload();
    this.device.queue.submit([this.encoder.finish()]);
    this.encoder = null;
    this.counters.submits++;
  }
}
