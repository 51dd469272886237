// The float64 CPU reference backend: the oracle for every kernel test and the labelled slow
// fallback where WebGPU is missing. Each op's CPU body (src/ops/) is a thin call into src/reference/.
import type { KernelSpec } from '../../gpu/pipelines.ts';
import { zeroCounters, type GpuCounters } from '../../gpu/recorder.ts';
import type { Backend, OpDef } from '../backend.ts';
import { f16Value, f16Values } from '../f16.ts';
import { Scopes } from '../scope.ts';
import { checkReshape, sizeOf, storageBytes, type DType, type Tensor } from '../tensor.ts';
import { cpu, CpuTensor, cpuTensor } from './cpuTensor.ts';

export class CpuBackend implements Backend {
  readonly kind = 'cpu' as const;
  readonly label = 'CPU reference (float64, slow)';
  // Host traffic is counted as WebGPU would move it (4 bytes a value, 2 for f16), so the two backends compare.
  private readonly stats: GpuCounters = zeroCounters();
  private readonly scopes = new Scopes((...ts) => this.dispose(...ts));
  private readonly track = <R>(r: R): R => this.scopes.track(r);

  tensor(data: ArrayLike<number>, shape: readonly number[], dtype: DType = 'f32'): Tensor {
    const t = cpuTensor(data, shape, dtype);
    this.countUpload(storageBytes(t.size, dtype));
    return this.track(t);
  }
  tensorF16Bits(bits: Uint16Array, shape: readonly number[]): Tensor {
    const t = new CpuTensor(Float64Array.from(bits, f16Value), [...shape], 'f16');
    this.countUpload(storageBytes(t.size, 'f16'));
    return this.track(t);
  }
  zeros(shape: readonly number[], dtype: DType = 'f32'): Tensor {
    return this.track(new CpuTensor(new Float64Array(sizeOf(shape)), [...shape], dtype));
  }
  write(t: Tensor, data: ArrayLike<number>): void {
    const c = cpu(t);
    if (data.length !== c.size) throw new Error(`write: expected ${c.size} values, got ${data.length}`);
    c.data.set(c.dtype === 'f16' ? f16Values(data) : data);
    this.countUpload(storageBytes(c.size, c.dtype));
  }
  private countUpload(bytes: number): void {
    if (bytes === 0) return; // as on WebGPU, where an empty write records nothing
    this.stats.uploads++;
    this.stats.uploadBytes += bytes;
  }
  view(t: Tensor, offset: number, shape: readonly number[]): Tensor {
    const base = cpu(t);
    const n = sizeOf(shape);
    const align = base.dtype === 'f16' ? 128 : 64; // 256 bytes on WebGPU
    if (offset % align !== 0) throw new Error(`view offset ${offset} is not a multiple of ${align} elements`);
    if (offset + n > base.size) throw new Error(`view [${offset}, ${offset + n}) exceeds tensor of ${base.size}`);
    return new CpuTensor(base.data.subarray(offset, offset + n), [...shape], base.dtype);
  }
  reshape(t: Tensor, shape: readonly number[]): Tensor {
    checkReshape(t, shape);
    const c = cpu(t);
    return this.track(new CpuTensor(c.data, [...shape], c.dtype));
  }
  copy(src: Tensor, dst: Tensor): void {
    if (src.size !== dst.size) throw new Error(`copy: size ${src.size} into ${dst.size}`);
    if ((src.dtype === 'f16') !== (dst.dtype === 'f16')) throw new Error(`copy: dtype ${src.dtype} into ${dst.dtype}`);
    cpu(dst).data.set(cpu(src).data);
  }
  async read(t: Tensor): Promise<Float64Array> {
    return (await this.readMany([t]))[0];
  }
  async readMany(ts: readonly Tensor[]): Promise<Float64Array[]> {
    this.stats.readbacks++;
    this.stats.readbackBytes += ts.reduce((n, t) => n + storageBytes(t.size, t.dtype), 0);
    return ts.map((t) => Float64Array.from(cpu(t).data));
  }
  dispose(..._ts: (Tensor | null | undefined)[]): void {}
  scope<T>(fn: () => T): T {
    return this.scopes.run(fn);
  }
  precompile(_kernels: readonly KernelSpec[]): Promise<void> {
    return Promise.resolve(); // nothing to build ahead on the CPU
  }
  flush(): void {}
  flushThen(onDone: () => void): Promise<void> {
    onDone(); // the work is done: it ran as it was recorded
    return Promise.resolve();
  }
  counters(): GpuCounters {
    return this.stats;
  }
  boundMemory(_bytes: number | null): void {} // freed arrays go to the garbage collector: nothing is kept
  run<A, R>(op: OpDef<A, R>, args: A): R {
    op.check?.(args);
    return this.track(op.cpu(args, this));
  }
}
