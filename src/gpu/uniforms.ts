// Uniform values for many dispatches in one command buffer. Each dispatch gets its own 256-byte
// slot in one arena buffer (bound with a dynamic offset); the CPU copy is written once per submit.
// Writing one shared uniform buffer per dispatch would be wrong: queue.writeBuffer lands before
// the whole command buffer runs, so every dispatch would see the last value.

export const UNIFORM_SLOT = 256; // minUniformBufferOffsetAlignment on every adapter
const SLOTS = 1024;

export type UniformScalar = 'u32' | 'i32' | 'f32';

/** Field values of a uniform block, by the WGSL struct's field names. */
export type UniformValues<F extends string = string> = Readonly<Record<F, number>>;

const SCALAR_CODE = { u32: 0, i32: 1, f32: 2 } as const;

/**
 * The layout of one WGSL uniform struct of 4-byte scalars, declared once per struct in its field
 * order, e.g. uniformLayout('Params', { n: 'u32', alpha: 'f32' }); dispatchers then pass values by
 * field name. tests/unit/wgsl_params.test.ts checks every layout against the parsed WGSL struct
 * (names, order, types), so a reordered field cannot shift the values after it unnoticed.
 */
export class UniformLayout<F extends string = string> {
  readonly names: readonly F[];
  readonly types: readonly UniformScalar[];
  /** Bytes one block takes: 4 per field, rounded up to WGSL's 16-byte struct alignment. */
  readonly byteSize: number;
  private readonly codes: Uint8Array;

  constructor(
    readonly struct: string,
    fields: Readonly<Record<F, UniformScalar>>,
  ) {
    // Object keys keep their written order unless they look like integers (never a WGSL identifier).
    this.names = Object.keys(fields) as F[];
    for (const n of this.names) if (!/^[A-Za-z_]\w*$/.test(n)) throw new Error(`uniform struct ${struct}: ${n} is not a WGSL field name`);
    this.types = this.names.map((n) => fields[n]);
    this.codes = Uint8Array.from(this.types, (t) => SCALAR_CODE[t]);
    this.byteSize = Math.max(16, Math.ceil((4 * this.names.length) / 16) * 16);
    if (this.byteSize > UNIFORM_SLOT) throw new Error(`uniform struct ${struct} of ${this.byteSize} bytes exceeds a ${UNIFORM_SLOT}-byte slot`);
  }

  /** Writes one block at `offset` of `view` (little-endian), its padding zeroed. */
  write(view: DataView, offset: number, values: UniformValues<F>): void {
    const { names, codes } = this;
    for (let i = 0; i < names.length; i++) {
      const v = values[names[i]];
      const at = offset + 4 * i;
      if (codes[i] === 0) view.setUint32(at, v >>> 0, true);
      else if (codes[i] === 1) view.setInt32(at, v | 0, true);
      else view.setFloat32(at, v, true);
    }
    for (let at = offset + 4 * names.length; at < offset + this.byteSize; at += 4) view.setUint32(at, 0, true);
  }
}

/** The field names of a layout, e.g. for a KernelSpec built outside `kernel()`. */
export type FieldsOf<L> = L extends UniformLayout<infer F> ? F : never;

export function uniformLayout<const T extends Record<string, UniformScalar>>(struct: string, fields: T): UniformLayout<Extract<keyof T, string>> {
  return new UniformLayout(struct, fields as Readonly<Record<Extract<keyof T, string>, UniformScalar>>);
}

export class UniformArena {
  readonly buffer: GPUBuffer;
  private readonly staging = new Uint8Array(UNIFORM_SLOT * SLOTS);
  private readonly view = new DataView(this.staging.buffer);
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

  /** Writes one block into the next slot and returns its dynamic offset. */
  push<F extends string>(layout: UniformLayout<F>, values: UniformValues<F>): number {
    if (this.full) throw new Error('uniform arena full: flush before recording more dispatches');
    const offset = this.used * UNIFORM_SLOT;
    layout.write(this.view, offset, values);
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
