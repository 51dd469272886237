// Records many dispatches into one command encoder and submits them together.
// Counters (dispatches, submits, readbacks, host↔device traffic) feed the benchmarks' structural figures.
import type { BufferPool } from './bufferPool.ts';
import type { CachedPipeline } from './pipelines.ts';
import { UniformArena, UNIFORM_SLOT, type UniformValues } from './uniforms.ts';
import { UploadArena } from './uploads.ts';

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
  /** Tensor data written from the host (Backend.tensor / write); uniforms are not counted. */
  uploads: number;
  uploadBytes: number;
  /** Bytes mapped back to the host by readbacks. */
  readbackBytes: number;
}

export function zeroCounters(): GpuCounters {
  return { dispatches: 0, submits: 0, readbacks: 0, copies: 0, uploads: 0, uploadBytes: 0, readbackBytes: 0 };
}

const COUNTER_KEYS = Object.keys(zeroCounters()) as (keyof GpuCounters)[];

/** a + b, field by field. */
export function addCounters(a: GpuCounters, b: GpuCounters): GpuCounters {
  const out = zeroCounters();
  for (const k of COUNTER_KEYS) out[k] = a[k] + b[k];
  return out;
}

/** What happened between snapshot `from` and snapshot `to`. */
export function diffCounters(from: GpuCounters, to: GpuCounters): GpuCounters {
  const out = zeroCounters();
  for (const k of COUNTER_KEYS) out[k] = to[k] - from[k];
  return out;
}

/**
 * Bind groups kept (LRU). One iteration uses a few hundred; pooled buffers come back in varying
 * order, so new combinations keep appearing (~60 per iteration of a small run). The soak found the
 * former clear-at-20000 cache growing the JS heap by ~0.35 KB per entry for hundreds of
 * iterations; an LRU of this size holds the working set and stays flat after warm-up.
 */
export const BIND_GROUP_CACHE = 2048;

/**
 * Opt-in per-dispatch GPU timing (benchmarks only): each dispatch gets its own compute pass with
 * timestamp writes at its start and end; `collect` reads the times back after the work finished.
 * Needs the device's 'timestamp-query' feature. Off by default (a pass per dispatch costs a little).
 */
export class DispatchProfiler {
  private static readonly CAPACITY = 4096; // queries per set (two per dispatch)
  private set: GPUQuerySet | null = null;
  private used = 0;
  private names: string[] = [];
  private readonly done: { names: string[]; staging: GPUBuffer }[] = [];
  /** Free text appended to each dispatch's name (e.g. the stage or the operand shapes). */
  label = '';

  constructor(private readonly device: GPUDevice) {}

  /** Query indices for one more dispatch; null when this submit's set is full (the dispatch goes untimed). */
  next(name: string): [number, number] | null {
    if (this.used + 2 > DispatchProfiler.CAPACITY) return null;
    this.set ??= this.device.createQuerySet({ type: 'timestamp', count: DispatchProfiler.CAPACITY });
    this.names.push(name);
    this.used += 2;
    return [this.used - 2, this.used - 1];
  }

  get querySet(): GPUQuerySet {
    return this.set!;
  }

  /** Resolves this submit's queries into a staging buffer (recorded into `enc` before it finishes). */
  resolve(enc: GPUCommandEncoder): void {
    if (this.used === 0 || !this.set) return;
    const bytes = this.used * 8;
    const resolveBuf = this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const staging = this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    enc.resolveQuerySet(this.set, 0, this.used, resolveBuf, 0);
    enc.copyBufferToBuffer(resolveBuf, 0, staging, 0, bytes);
    this.done.push({ names: this.names, staging });
    this.set = null; // a fresh set per submit (the old one is read through its staging copy)
    this.used = 0;
    this.names = [];
  }

  /** Nanoseconds per dispatch, in recording order, of everything submitted so far; clears the list. */
  async collect(): Promise<{ name: string; ns: number }[]> {
    const out: { name: string; ns: number }[] = [];
    for (const { names, staging } of this.done.splice(0)) {
      await staging.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(staging.getMappedRange().slice(0));
      staging.unmap();
      staging.destroy();
      for (const [i, name] of names.entries()) out.push({ name, ns: Number(t[2 * i + 1] - t[2 * i]) });
    }
    return out;
  }
}

export class Recorder {
  /** Set by a benchmark to time every dispatch (see DispatchProfiler); null in normal use. */
  profiler: DispatchProfiler | null = null;
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private readonly arena: UniformArena;
  /** Host data written in command order (see uploads.ts); read by runtime.memory(). */
  readonly uploads: UploadArena;
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  readonly counters: GpuCounters = zeroCounters();
  /** Dispatches per kernel (`shader:entry`) since creation, for the benchmark's per-op breakdown. */
  readonly dispatchesByKernel = new Map<string, number>();

  constructor(
    private readonly device: GPUDevice,
    private readonly pool: BufferPool,
  ) {
    this.arena = new UniformArena(device);
    this.uploads = new UploadArena(device);
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
    if (bg) {
      // Least recently used first: a hit moves to the back of the Map's insertion order.
      this.bindGroups.delete(key);
      this.bindGroups.set(key, bg);
    } else {
      const entries: GPUBindGroupEntry[] = [];
      if (p.spec.uniform) entries.push({ binding: 0, resource: { buffer: this.arena.buffer, size: UNIFORM_SLOT } });
      for (const [i, b] of buffers.entries()) entries.push({ binding: i + 1, resource: { buffer: b.buffer, offset: b.offset, size: b.size } });
      bg = this.device.createBindGroup({ layout: p.layout, entries });
      this.bindGroups.set(key, bg);
      if (this.bindGroups.size > BIND_GROUP_CACHE) this.bindGroups.delete(this.bindGroups.keys().next().value!);
    }
    return bg;
  }

  /** Records one dispatch. `uniform` holds the values of the kernel's uniform struct, by field name. */
  dispatch(p: CachedPipeline, buffers: readonly BufferRange[], uniform: UniformValues | null, workgroups: readonly [number, number?, number?]): void {
    if (buffers.length !== p.spec.storage.length) {
      throw new Error(`${p.spec.shader}:${p.spec.entry} expects ${p.spec.storage.length} buffers, got ${buffers.length}`);
    }
    if (p.spec.uniform && !uniform) throw new Error(`${p.spec.shader}:${p.spec.entry} needs a uniform block`);
    if (this.arena.full) this.submit();
    const [x, y = 1, z = 1] = workgroups;
    if (x === 0 || y === 0 || z === 0) return;
    const k = `${p.spec.shader}:${p.spec.entry}`;
    const q = this.profiler?.next(`${k} [${x},${y},${z}] ${this.profiler.label}`) ?? null;
    if (q) this.ensureEncoderOutsidePass();
    let pass: GPUComputePassEncoder;
    if (q) {
      pass = this.encoder!.beginComputePass({ timestampWrites: { querySet: this.profiler!.querySet, beginningOfPassWriteIndex: q[0], endOfPassWriteIndex: q[1] } });
      this.pass = pass;
    } else pass = this.ensurePass();
    pass.setPipeline(p.pipeline);
    const bg = this.bindGroupFor(p, buffers);
    if (p.spec.uniform) pass.setBindGroup(0, bg, [this.arena.push(p.spec.uniform, uniform!)]);
    else pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(x, y, z);
    if (q) {
      pass.end();
      this.pass = null;
    }
    this.counters.dispatches++;
    this.dispatchesByKernel.set(k, (this.dispatchesByKernel.get(k) ?? 0) + 1);
  }

  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    if (bytes === 0) return;
    this.ensureEncoderOutsidePass().copyBufferToBuffer(src, srcOffset, dst, dstOffset, bytes);
    this.counters.copies++;
  }

  /**
   * Writes host bytes into dst at this point of the command stream (a staged copy, no submit):
   * work recorded before sees the old contents, work recorded after the new ones.
   */
  write(dst: GPUBuffer, dstOffset: number, bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    const src = this.uploads.stage(bytes);
    this.copy(src.buffer, src.offset, dst, dstOffset, bytes.byteLength);
    this.counters.uploads++;
    this.counters.uploadBytes += bytes.byteLength;
  }

  /** Gives direct access to the encoder (outside any compute pass), e.g. for readback copies. */
  encoderOutsidePass(): GPUCommandEncoder {
    return this.ensureEncoderOutsidePass();
  }

  /** Bind groups cached now (memory accounting). */
  get cachedBindGroups(): number {
    return this.bindGroups.size;
  }

  get pending(): boolean {
    return this.encoder !== null;
  }

  /** Submits everything recorded so far as one command buffer. */
  submit(): void {
    if (!this.encoder) {
      this.pool.destroyRetired(); // nothing recorded is waiting: no dispatch binds them
      return;
    }
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    this.profiler?.resolve(this.encoder);
    this.arena.upload();
    this.uploads.upload();
    this.device.queue.submit([this.encoder.finish()]);
    this.encoder = null;
    this.counters.submits++;
    this.pool.destroyRetired();
  }
}
