// Host → device writes recorded in command order. queue.writeBuffer lands before the whole
// pending command buffer runs, so writing a tensor that earlier recorded work still reads used to
// need a submit first (one extra submit per upload point in an iteration). Instead the bytes are
// staged here on the host, one writeBuffer per chunk uploads them right before the submit, and
// the recorder records copyBufferToBuffer(chunk → tensor) at the write's place in the command
// stream, so every dispatch sees exactly the values it would have seen with a submit in between.
// Chunks are reused from the next submit on: queue operations run in order, so the next
// writeBuffer into a chunk happens after the previous command buffer's copies out of it.

const CHUNK = 1 << 18; // 256 KiB: a whole rollout's prompt tensors at config M fit in one chunk

interface Chunk {
  buffer: GPUBuffer;
  host: Uint8Array<ArrayBuffer>;
  used: number;
}

export class UploadArena {
  private readonly chunks: Chunk[] = [];
  private current = 0;

  constructor(private readonly device: GPUDevice) {}

  /** Buffers and bytes held (memory accounting). */
  get stats(): { buffers: number; bytes: number } {
    return { buffers: this.chunks.length, bytes: this.chunks.reduce((n, c) => n + c.buffer.size, 0) };
  }

  /** Stages `bytes` (a multiple of 4 long) and returns where they will be on the device after upload(). */
  stage(bytes: Uint8Array): { buffer: GPUBuffer; offset: number } {
    const n = bytes.byteLength;
    if (n % 4 !== 0) throw new Error(`upload of ${n} bytes is not a multiple of 4`);
    while (this.current < this.chunks.length && this.chunks[this.current].used + n > this.chunks[this.current].buffer.size) this.current++;
    if (this.current === this.chunks.length) {
      const size = Math.max(CHUNK, Math.ceil(n / 256) * 256);
      const buffer = this.device.createBuffer({ label: 'upload chunk', size, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      this.chunks.push({ buffer, host: new Uint8Array(size), used: 0 });
    }
    const c = this.chunks[this.current];
    const offset = c.used;
    c.host.set(bytes, offset);
    c.used += Math.ceil(n / 4) * 4;
    return { buffer: c.buffer, offset };
  }

  /** Writes the staged bytes of every chunk; called right before queue.submit. */
  upload(): void {
    for (const c of this.chunks) {
      if (c.used > 0) this.device.queue.writeBuffer(c.buffer, 0, c.host, 0, c.used);
      c.used = 0;
    }
    this.current = 0;
  }
}
