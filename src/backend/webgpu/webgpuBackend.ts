// The WebGPU backend: ops record dispatches into the runtime's shared command encoder; nothing is
// submitted until a readback or an explicit flush, so a whole PPO iteration can be one submit.
import { forAdapter, type KernelSpec } from '../../gpu/pipelines.ts';
import type { GpuCounters } from '../../gpu/recorder.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import type { Backend, GpuOpsHost, OpDef } from '../backend.ts';
import { packF16Bits, unpackF16 } from '../f16.ts';
import { Scopes } from '../scope.ts';
import { checkReshape, sizeOf, storageBytes, type DType, type Tensor } from '../tensor.ts';
import { gpu, GpuTensor, gpuTensor, toTyped, viewAlign } from './gpuTensor.ts';

export class WebGpuBackend implements Backend, GpuOpsHost {
  readonly kind = 'webgpu' as const;
  readonly label: string;

  private readonly scopes = new Scopes((...ts) => this.dispose(...ts));
  private readonly track = <R>(r: R): R => this.scopes.track(r);

  constructor(readonly rt: GpuRuntime) {
    this.label = `WebGPU (${rt.adapterName})`;
  }

  /** A new uninitialised tensor from the pool (ops fully overwrite their outputs). */
  empty(shape: readonly number[], dtype: DType = 'f32'): GpuTensor {
    return new GpuTensor(this.rt.pool.acquire(storageBytes(sizeOf(shape), dtype)), [...shape], dtype);
  }

  tensor(data: ArrayLike<number>, shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const t = this.empty(shape, dtype);
    if (data.length !== t.size) throw new Error(`data length ${data.length} does not match shape [${shape.join(', ')}]`);
    this.write(t, data);
    return this.track(t);
  }

  tensorF16Bits(bits: Uint16Array, shape: readonly number[]): Tensor {
    const t = this.empty(shape, 'f16');
    if (bits.length !== t.size) throw new Error(`f16 bits: length ${bits.length} does not match shape [${shape.join(', ')}]`);
    const words = packF16Bits(bits);
    if (t.size > 0) this.rt.recorder.write(t.buffer, t.offset, new Uint8Array(words.buffer, words.byteOffset, words.byteLength));
    return this.track(t);
  }

  zeros(shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const t = this.empty(shape, dtype);
    // A pooled buffer may hold old values: clear it in command order with the other work.
    if (t.size > 0) this.rt.recorder.encoderOutsidePass().clearBuffer(t.buffer, 0, t.bytes);
    return this.track(t);
  }

  write(t: Tensor, data: ArrayLike<number>): void {
    if (data.length !== t.size) throw new Error(`write: expected ${t.size} values, got ${data.length}`);
    // Recorded in command order (a staged copy, no submit): earlier recorded readers see old data.
    const typed = toTyped(data, t.dtype);
    const r = gpu(t);
    this.rt.recorder.write(r.buffer, r.offset, new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength));
  }

  view(t: Tensor, offset: number, shape: readonly number[]): Tensor {
    const base = gpuTensor(t);
    const v = new GpuTensor(base.buffer, [...shape], base.dtype, base.offset + storageBytes(offset, base.dtype), true);
    const align = viewAlign(base.dtype);
    if (offset % align !== 0) throw new Error(`view offset ${offset} is not a multiple of ${align} elements`);
    if (offset + v.size > base.size) throw new Error(`view [${offset}, ${offset + v.size}) exceeds tensor of ${base.size}`);
    return v;
  }

  reshape(t: Tensor, shape: readonly number[]): Tensor {
    checkReshape(t, shape);
    const g = gpuTensor(t);
    const moved = new GpuTensor(g.buffer, [...shape], g.dtype, g.offset, g.isView);
    g.disposed = true; // the old handle gives up the buffer without returning it to the pool
    return this.track(moved);
  }

  copy(src: Tensor, dst: Tensor): void {
    if (src.size !== dst.size) throw new Error(`copy: size ${src.size} into ${dst.size}`);
    if ((src.dtype === 'f16') !== (dst.dtype === 'f16')) throw new Error(`copy: dtype ${src.dtype} into ${dst.dtype}`);
    const s = gpu(src),
      d = gpu(dst);
    this.rt.recorder.copy(s.buffer, s.offset, d.buffer, d.offset, storageBytes(src.size, src.dtype));
  }

  async read(t: Tensor): Promise<Float64Array> {
    return (await this.readMany([t]))[0];
  }

  async readMany(ts: readonly Tensor[]): Promise<Float64Array[]> {
    const bytes = await this.rt.readback.read(ts.map((t) => ({ ...gpu(t), bytes: storageBytes(t.size, t.dtype) })));
    const out: Float64Array[] = [];
    let offset = 0;
    for (const t of ts) {
      const n = storageBytes(t.size, t.dtype);
      if (t.dtype === 'f16') out.push(unpackF16(new Uint32Array(bytes, offset, n / 4), t.size));
      else out.push(Float64Array.from(t.dtype === 'i32' ? new Int32Array(bytes, offset, t.size) : new Float32Array(bytes, offset, t.size)));
      offset += n;
    }
    return out;
  }

  dispose(...ts: (Tensor | null | undefined)[]): void {
    for (const t of ts) {
      if (!t) continue;
      const g = t as GpuTensor;
      if (g.disposed) continue;
      g.disposed = true;
      if (!g.isView) this.rt.pool.release(g.buffer);
    }
  }

  precompile(kernels: readonly KernelSpec[], onBuilt?: (built: number, total: number) => void): Promise<void> {
    const mine = forAdapter(kernels, this.rt.cpuAdapter);
    let built = 0;
    // One precompile per kernel, all in flight at once, so each completion can be counted.
    return Promise.all(mine.map((k) => this.rt.pipelines.precompile([k]).then(() => onBuilt?.(++built, mine.length)))).then(() => undefined);
  }

  scope<T>(fn: () => T): T {
    return this.scopes.run(fn);
  }

  flush(): void {
    this.rt.submit();
  }

  flushThen(onDone: () => void): Promise<void> {
    this.rt.submit();
    return this.rt.device.queue.onSubmittedWorkDone().then(onDone);
  }

  counters(): GpuCounters {
    return this.rt.counters;
  }

  boundMemory(bytes: number | null): void {
    this.rt.pool.holdLimit = bytes === null ? null : this.rt.pool.stats().inUseBytes + bytes;
  }

  run<A, R>(op: OpDef<A, R>, args: A): R {
    op.check?.(args);
    return this.track(op.webgpu(args, this));
  }
}
