// The one interface the ops, the model and the trainer run on, with two implementations: WebGPU
// (the real one, float32 WGSL kernels) and a float64 CPU reference (the test oracle and the
// labelled slow fallback). A backend holds tensors, moves them to and from the host and runs ops
// (src/ops/, each with a body per backend) through `run`; it knows no op by name.
import type { KernelSpec } from '../gpu/pipelines.ts';
import type { GpuCounters } from '../gpu/recorder.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { DType, Tensor } from './tensor.ts';
import type { GpuTensor } from './webgpu/gpuTensor.ts';

export interface Backend {
  readonly kind: 'webgpu' | 'cpu';
  /** Shown in the UI and benchmark tables, e.g. "WebGPU (google swiftshader)". */
  readonly label: string;

  /** A tensor of `data`; dtype f16 rounds each value to float16 and refuses one beyond ±65504. */
  tensor(data: ArrayLike<number>, shape: readonly number[], dtype?: DType): Tensor;
  /**
   * An f16 tensor of float16 bit patterns as they are (safetensors' F16, readWeightF16's output),
   * without a round trip through numbers: frozen weights at half the bytes of f32.
   */
  tensorF16Bits(bits: Uint16Array, shape: readonly number[]): Tensor;
  zeros(shape: readonly number[], dtype?: DType): Tensor;
  /** Overwrites a tensor's contents (length must equal its size). */
  write(t: Tensor, data: ArrayLike<number>): void;
  /**
   * A tensor sharing storage with `t`, starting `offset` elements in (a multiple of 64, so GPU
   * bindings stay 256-byte aligned). Used for parameter tensors inside a model's flat buffer.
   * Disposing a view does nothing; dispose the base.
   */
  view(t: Tensor, offset: number, shape: readonly number[]): Tensor;
  /**
   * A handle of a new shape (same size) that owns t's storage, without a copy; `t` must not be used
   * afterwards. Unlike a view it is disposed like any op output, so a model's outputs such as logits
   * (B·S, V) → (B, S, V) stay disposable by whoever receives them.
   */
  reshape(t: Tensor, shape: readonly number[]): Tensor;
  /** Copies `src` into `dst` (same size and dtype), recorded in order with the ops. */
  copy(src: Tensor, dst: Tensor): void;
  /** Resolves with the values; on WebGPU this submits pending work (never call inside a hot loop). */
  read(t: Tensor): Promise<Float64Array>;
  /** Several tensors in one readback. */
  readMany(ts: readonly Tensor[]): Promise<Float64Array[]>;
  dispose(...ts: (Tensor | null | undefined)[]): void;
  /**
   * Runs fn (synchronous) and then disposes every tensor made inside it — op outputs, tensor(),
   * zeros(), reshape() — that fn does not return (a tensor, or an array / object of them); returned
   * ones belong to the enclosing scope, if any. Tensors stored elsewhere must be made outside.
   */
  scope<T>(fn: () => T): T;
  /**
   * Builds these kernels ahead of use, all at once (createComputePipelineAsync), only those this
   * adapter dispatches (KernelSpec.only), calling `onBuilt` after each. Optional: a kernel not yet
   * built when first dispatched is compiled on the spot. Resolves at once on the CPU backend.
   * The ops say which kernels they need (src/ops/registry.ts declaredKernels, decodeStep's per shape).
   */
  precompile(kernels: readonly KernelSpec[], onBuilt?: (built: number, total: number) => void): Promise<void>;
  /** Submits recorded work without waiting. */
  flush(): void;
  /**
   * Submits recorded work and calls `onDone` once the device has finished everything submitted so
   * far: at once on the CPU backend, whose ops run as they are recorded. Resolves after `onDone`.
   */
  flushThen(onDone: () => void): Promise<void>;
  /**
   * Running counts: dispatches, submits, readbacks, copies, tensor uploads and the bytes moved each
   * way. The CPU backend counts only readbacks, uploads and bytes (4 a value, as WebGPU would move them).
   */
  counters(): GpuCounters;

  /**
   * Bounds the memory kept for tensors to `bytes` beyond what tensors use now (null: unbounded,
   * the default). A tensor's storage is never refused: only storage freed tensors left for reuse
   * is given up, that of the sizes asked for longest ago first. The CPU backend keeps none.
   */
  boundMemory(bytes: number | null): void;

  /**
   * Runs one op (src/ops/): checks its arguments, runs this backend's body and records the tensors
   * it returns in the innermost scope. Call the op's function (`gae(be, { … })`), not this.
   */
  run<A, R>(op: OpDef<A, R>, args: A): R;
}

/**
 * What a backend needs of an op to run it: a check of its named arguments and one body per backend.
 * The ops are defined in src/ops/ (a module each, beside their shader); a backend only runs them
 * through `Backend.run`, so it never imports an op.
 */
export interface OpDef<A, R> {
  /** The op's name (camelCase, e.g. `gae`). */
  readonly name: string;
  /**
   * Throws a message naming the argument when `args` are invalid. It runs before either body, so a
   * bad call fails the same way on both backends and before anything is recorded; the bodies only
   * compute. null where the argument types say it all (stated, so a new op cannot forget it).
   */
  readonly check: ((args: A) => void) | null;
  /** The float64 body, a thin call into src/reference/: runs as it is called. */
  readonly cpu: (args: A, be: Backend) => R;
  /** The WebGPU body: records its dispatches into the shared encoder; submits and reads nothing. */
  readonly webgpu: (args: A, be: GpuOpsHost) => R;
}

/**
 * What an op's WebGPU body gets: the backend (to call other ops on it), the runtime it dispatches
 * on, and untracked pool tensors for its outputs and temporaries. WebGpuBackend implements it.
 */
export interface GpuOpsHost extends Backend {
  readonly rt: GpuRuntime;
  /** A new uninitialised tensor from the pool (ops fully overwrite their outputs). */
  empty(shape: readonly number[], dtype?: DType): GpuTensor;
}
