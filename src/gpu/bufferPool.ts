// Storage buffers recycled by size class, so a training loop that frees and re-allocates the
// same shapes every iteration allocates nothing after the first one.

const STORAGE_USAGE = 0x80 /* STORAGE */ | 0x4 /* COPY_SRC */ | 0x8; /* COPY_DST */

/** Round up to a power of two (min 256 bytes) so near sizes share a class. */
export function sizeClass(bytes: number): number {
  let c = 256;
  while (c < bytes) c *= 2;
  return c;
}

export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly ids = new WeakMap<GPUBuffer, number>();
  private nextId = 1;
  allocated = 0;
  allocatedBytes = 0;

  constructor(private readonly device: GPUDevice) {}

  acquire(bytes: number): GPUBuffer {
    const cls = sizeClass(Math.max(4, bytes));
    const list = this.free.get(cls);
    const reused = list?.pop();
    if (reused) return reused;
    const buffer = this.device.createBuffer({ size: cls, usage: STORAGE_USAGE });
    this.ids.set(buffer, this.nextId++);
    this.allocated++;
    this.allocatedBytes += cls;
    return buffer;
  }

  release(buffer: GPUBuffer): void {
    const cls = buffer.size;
    let list = this.free.get(cls);
    if (!list) this.free.set(cls, (list = []));
    list.push(buffer);
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
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
  }
}
