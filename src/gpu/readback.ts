// Asynchronous readback through a ring of staging buffers: `request` records a copy into the
// next free staging buffer and returns a promise; nothing waits inside the training loop. A slot
// is reused only once its previous map has resolved, so at most `slots` readbacks are in flight.
import type { Recorder } from './recorder.ts';

interface Slot {
  buffer: GPUBuffer;
  busy: Promise<void> | null;
}

export class ReadbackRing {
  private readonly slots: Slot[] = [];
  private next = 0;

  constructor(
    private readonly device: GPUDevice,
    private readonly recorder: Recorder,
    private readonly slotCount = 4,
  ) {}

  /** Staging buffers alive now and their bytes (memory accounting). */
  get staging(): { buffers: number; bytes: number } {
    return { buffers: this.slots.length, bytes: this.slots.reduce((n, s) => n + s.buffer.size, 0) };
  }

  private slotFor(bytes: number): Slot {
    // Grow lazily to slotCount slots, then cycle; a slot too small is replaced.
    if (this.slots.length < this.slotCount) {
      const s: Slot = { buffer: this.makeStaging(bytes), busy: null };
      this.slots.push(s);
      return s;
    }
    const s = this.slots[this.next];
    this.next = (this.next + 1) % this.slotCount;
    return s;
  }

  private makeStaging(bytes: number): GPUBuffer {
    return this.device.createBuffer({
      label: 'readback staging',
      size: Math.max(256, Math.ceil(bytes / 256) * 256),
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /**
   * Copies `bytes` from each source (in order, packed) into one staging buffer and resolves with
   * a copy of the bytes once the GPU has finished. Submits what has been recorded so far.
   */
  async read(sources: readonly { buffer: GPUBuffer; bytes: number; offset?: number }[]): Promise<ArrayBuffer> {
    const total = sources.reduce((n, s) => n + Math.ceil(s.bytes / 4) * 4, 0);
    const slot = this.slotFor(total);
    if (slot.busy) await slot.busy;
    if (slot.buffer.size < total) {
      slot.buffer.destroy();
      slot.buffer = this.makeStaging(total);
    }
    const enc = this.recorder.encoderOutsidePass();
    let dst = 0;
    for (const s of sources) {
      const n = Math.ceil(s.bytes / 4) * 4;
      if (n > 0) enc.copyBufferToBuffer(s.buffer, s.offset ?? 0, slot.buffer, dst, n);
      dst += n;
    }
    this.recorder.submit();
    this.recorder.counters.readbacks++;
    this.recorder.counters.readbackBytes += total;
    const staging = slot.buffer;
    const done = staging.mapAsync(GPUMapMode.READ, 0, Math.max(4, total)).then(() => undefined);
    slot.busy = done;
    await done;
    const out = staging.getMappedRange(0, Math.max(4, total)).slice(0, total);
    staging.unmap();
    slot.busy = null;
    return out;
  }
}
