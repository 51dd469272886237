// Storage buffers recycled by size class, so a training loop that frees and re-allocates the
// same shapes every iteration allocates nothing after the first one.

const STORAGE_USAGE = 0x80 /* STORAGE */ | 0x4 /* COPY_SRC */ | 0x8; /* COPY_DST */

/** Round up to a power of two (min 256 bytes) so near sizes share a class. */
export function sizeClass(bytes: number): number {
  let c = 256;
  while (c < bytes) c *= 2;
  return c;
}

/** Bytes of `count` buffers per size class. */
export function classBytes(counts: ReadonlyMap<number, number>): number {
  let bytes = 0;
  for (const [cls, n] of counts) bytes += cls * n;
  return bytes;
}

export interface PoolStats {
  buffers: number;
  bytes: number;
  inUseBuffers: number;
  inUseBytes: number;
}

export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly ids = new WeakMap<GPUBuffer, number>();
  private nextId = 1;
  /** Buffers created (and bytes), over the pool's life. */
  allocated = 0;
  allocatedBytes = 0;
  /** Buffers destroyed by destroyAll (and bytes). */
  private destroyed = 0;
  private destroyedBytes = 0;
  /** Buffers handed out and not yet released: tensors alive right now. */
  private inUse = 0;
  private inUseBytes = 0;
  /** The most bytes in use at once since the last resetPeak(): what a benchmarked stretch needed. */
  peakInUseBytes = 0;
  /** Buffers in use now, and the most at once since the last resetPeak(), per size class. */
  private readonly inUseByClass = new Map<number, number>();
  private peakByClass = new Map<number, number>();

  constructor(private readonly device: GPUDevice) {}

  acquire(bytes: number): GPUBuffer {
    const cls = sizeClass(Math.max(4, bytes));
    const list = this.free.get(cls);
    const reused = list?.pop();
    this.inUse++;
    this.inUseBytes += cls;
    if (this.inUseBytes > this.peakInUseBytes) this.peakInUseBytes = this.inUseBytes;
    const n = (this.inUseByClass.get(cls) ?? 0) + 1;
    this.inUseByClass.set(cls, n);
    if (n > (this.peakByClass.get(cls) ?? 0)) this.peakByClass.set(cls, n);
    if (reused) return reused;
    const buffer = this.device.createBuffer({ size: cls, usage: STORAGE_USAGE });
    this.ids.set(buffer, this.nextId++);
    this.allocated++;
    this.allocatedBytes += cls;
    return buffer;
  }

  release(buffer: GPUBuffer): void {
    const cls = buffer.size;
    this.inUse--;
    this.inUseBytes -= cls;
    this.inUseByClass.set(cls, (this.inUseByClass.get(cls) ?? 1) - 1);
    let list = this.free.get(cls);
    if (!list) {
      list = [];
      this.free.set(cls, list);
    }
    list.push(buffer);
  }

  /**
   * What the pool holds now: every live buffer it created (in use or free for reuse) and their
   * bytes, and the part handed out to tensors. Flat `bytes` over a training run means no leak.
   */
  stats(): PoolStats {
    return {
      buffers: this.allocated - this.destroyed,
      bytes: this.allocatedBytes - this.destroyedBytes,
      inUseBuffers: this.inUse,
      inUseBytes: this.inUseBytes,
    };
  }

  /** Starts a new peak from the bytes in use now. */
  resetPeak(): void {
    this.peakInUseBytes = this.inUseBytes;
    this.peakByClass = new Map(this.inUseByClass);
  }

  /**
   * The bytes a pool that was empty at the last resetPeak() (but for the buffers in use then) would
   * hold now: it keeps every buffer it made, so each size class as many times as it was in use at once.
   */
  heldSincePeakReset(): number {
    return classBytes(this.peakByClass);
  }

  /** A stable small integer per buffer, used to key cached bind groups. */
  idOf(buffer: GPUBuffer): number {
    let id = this.ids.get(buffer);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(buffer, id);
    }
    return id;
  }

  destroyAll(): void {
    for (const list of this.free.values()) {
      for (const b of list) {
        this.destroyed++;
        this.destroyedBytes += b.size;
        b.destroy();
      }
    }
    this.free.clear();
  }
}
