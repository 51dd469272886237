// Storage buffers recycled by size class, so a training loop that frees and re-allocates the
// same shapes every iteration allocates nothing after the first one. A bound on what the pool
// keeps (holdLimit) stops runs whose shapes change (a later iteration's shorter responses) from
// keeping every size they ever made: past it, the free buffers of the sizes asked for longest ago
// are destroyed before a new one is created. A buffer a tensor holds is never taken.

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
  /** Buffers the pool no longer keeps, destroyed by destroyAll or retired past holdLimit (and bytes). */
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
  /**
   * The most bytes the pool keeps, in use and free (null: no bound). Acquire may create a buffer
   * past it only when no free buffer is left to destroy, so the pool holds at most
   * max(holdLimit, bytes in use) + one buffer.
   */
  holdLimit: number | null = null;
  /** When each size class was last asked for (acquire's count): the oldest are destroyed first. */
  private readonly lastAsked = new Map<number, number>();
  private asked = 0;
  /** Free buffers taken out of the pool, destroyed once the commands recorded so far are submitted (destroyRetired). */
  private retired: GPUBuffer[] = [];

  constructor(private readonly device: GPUDevice) {}

  acquire(bytes: number): GPUBuffer {
    const cls = sizeClass(Math.max(4, bytes));
    this.lastAsked.set(cls, ++this.asked);
    const list = this.free.get(cls);
    const reused = list?.pop();
    if (!reused && this.holdLimit !== null) this.makeRoom(cls, this.holdLimit);
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

  /** Retires free buffers, of the sizes asked for longest ago first, until `cls` more bytes fit `limit` or none is left. */
  private makeRoom(cls: number, limit: number): void {
    const held = () => this.allocatedBytes - this.destroyedBytes;
    if (held() + cls <= limit) return;
    const oldestFirst = [...this.free.entries()].filter(([, l]) => l.length > 0).sort(([a], [b]) => (this.lastAsked.get(a) ?? 0) - (this.lastAsked.get(b) ?? 0));
    for (const [size, list] of oldestFirst) {
      while (list.length > 0 && held() + cls > limit) {
        const b = list.pop()!;
        this.destroyed++;
        this.destroyedBytes += size;
        this.retired.push(b);
      }
      if (held() + cls <= limit) return;
    }
  }

  /**
   * Destroys the retired buffers: called once the commands recorded so far are submitted, since
   * a buffer released by a tensor may still be bound by a dispatch recorded before it.
   */
  destroyRetired(): void {
    for (const b of this.retired) b.destroy();
    this.retired = [];
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
    this.destroyRetired();
  }
}
