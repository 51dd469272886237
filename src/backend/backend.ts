// One interface for every op the model and PPO need, with two implementations:
// WebGPU (the real one, float32 WGSL kernels) and a float64 CPU reference (the test oracle and the
// labelled slow fallback). Model and trainer code is written once against this interface.
import type { GpuCounters } from '../gpu/recorder.ts';
import type { NnOps } from './nnOps.ts';
import type { PpoOps } from './ppoOps.ts';
import type { DecodeShape, SeqOps } from './seqOps.ts';
import type { DType, Tensor } from './tensor.ts';

export interface Backend {
  readonly kind: 'webgpu' | 'cpu';
  /** Shown in the UI and benchmark tables, e.g. "WebGPU (google swiftshader)". */
  readonly label: string;

  tensor(data: ArrayLike<number>, shape: readonly number[], dtype?: DType): Tensor;
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
   * Builds ahead of use what decoding at this shape needs beyond the backend's fixed kernels (on
   * WebGPU the fused decode step, whose pipeline is sized per shape). Calling it is optional:
   * anything not built is built on first use. Resolves at once on the CPU backend.
   */
  precompileShape(shape: DecodeShape): Promise<void>;
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

  readonly ppo: PpoOps;
  readonly nn: NnOps;
  readonly seq: SeqOps;
}
