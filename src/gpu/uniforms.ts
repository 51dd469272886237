// Uniform values for many dispatches in one command buffer. Each dispatch gets its own 256-byte
// slot in one arena buffer (bound with a dynamic offset); the CPU copy is written once per submit.
// Writing one shared uniform buffer per dispatch would be wrong: queue.writeBuffer lands before
// the whole command buffer runs, so every dispatch would see the last value.

export const UNIFORM_SLOT = 256; // minUniformBufferOffsetAlignment on every adapter
const SLOTS = 1024;

/** Packs scalar fields in WGSL struct order: every field 4 bytes (u32, i32 or f32). */
export class UniformWriter {
  private readonly view: DataView;
  private offset = 0;
  constructor(bytes = UNIFORM_SLOT) {
    this.view = new DataView(new ArrayBuffer(bytes));
  }
  u32(v: number): this {
    this.view.setUint32(this.offset, v >>> 0, true);
    this.offset += 4;
    return this;
  }
  i32(v: number): this {
    this.view.setInt32(this.offset, v | 0, true);
    this.offset += 4;
    return this;
  }
  f32(v: number): this {
    this.view.setFloat32(this.offset, v, true);
    this.offset += 4;
    return this;
  }
  bytes(): Uint8Array {
    return new Uint8Array(this.view.buffer, 0, Math.max(16, Math.ceil(this.offset / 16) * 16));
  }
}

export function uniforms(): UniformWriter {
  return new UniformWriter();
}

export class UniformArena {
  readonly buffer: GPUBuffer;
  private readonly staging = new Uint8Array(UNIFORM_SLOT * SLOTS);
  private used = 0;

  constructor(private readonly device: GPUDevice) {
    this.buffer = device.createBuffer({
      label: 'uniform arena',
      size: UNIFORM_SLOT * SLOTS,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
  }

  get full(): boolean {
    return this.used >= SLOTS;
  }

  /** Reserves a slot for `data` and returns its dynamic offset. */
  push(data: Uint8Array): number {
    if (data.byteLength > UNIFORM_SLOT) throw new Error(`uniform block of ${data.byteLength} bytes exceeds ${UNIFORM_SLOT}`);
    if (this.full) throw new Error('uniform arena full: flush before recording more dispatches');
    const offset = this.used * UNIFORM_SLOT;
    this.staging.set(data, offset);
    this.used++;
    return offset;
  }

  /** Uploads the slots used since the last submit; called right before queue.submit. */
  upload(): void {
    if (this.used === 0) return;
    this.device.queue.writeBuffer(this.buffer, 0, this.staging, 0, this.used * UNIFORM_SLOT);
    this.used = 0;
  }
}
