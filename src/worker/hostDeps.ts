// What the trainer worker's host needs from its environment. Everything that touches the browser
// (a backend, the page's static files, the trainer itself, yielding to the event loop) is injected,
// so Node tests drive the host without a Worker.
import type { Backend } from '../backend/backend.ts';
import type { KernelSpec } from '../gpu/pipelines.ts';
import type { PpoConfig } from '../rl/config.ts';
import type { IterationOptions, IterationResult, TrainerInit } from '../rl/trainer.ts';
import type { BackendChoice, WorkerToPage } from './protocol.ts';

/** What the host needs of a PPO trainer: PpoTrainer satisfies it, and test fakes implement all of it. */
export interface TrainerLike {
  /** Iterations done. */
  readonly iter: number;
  /** The config the trainer actually runs, as its live object (the NaN advice reads it). */
  readonly config: PpoConfig;
  iteration(opts?: IterationOptions): Promise<IterationResult>;
  setConfig(c: PpoConfig): void;
  /** Samples the next iteration's rollout now, so that iteration starts with it (prepare, before Start). */
  sampleAhead(): Promise<void>;
  /** Held-out metrics: sampled, and greedy prefixed `greedy_`. */
  evaluate(count: number, samplesPerPrompt: number): Promise<Record<string, number>>;
  /** The actor's weights as a checkpoint file. */
  actorCheckpoint(): Promise<Uint8Array>;
  /** The full state as one file (weights, optimiser moments, β, counter), and its restore. */
  saveState(): Promise<Uint8Array>;
  restoreState(state: Uint8Array): Promise<void>;
  /** A device-side copy of every weight and optimiser state (no readback), and its restore. */
  deviceSnapshot(): unknown;
  restoreDeviceSnapshot(snapshot: unknown): void;
  dispose(): void;
}

/** Called as each kernel's pipeline is built: `done` of `total`, `ms` since compilation began. */
export type CompileProgress = (done: number, total: number, ms: number) => void;

/**
 * A backend made for a choice. `destroy` (WebGPU only) destroys its device, for the
 * debugDestroyDevice test hook. `compiled` (WebGPU only) settles when the pipelines of the kernels
 * the first iteration needs, compiled in the background from the moment the device exists, are
 * built; `compileRest` builds the others, once the first iteration no longer waits for the CPU.
 */
export interface BackendHandle {
  be: Backend;
  adapter: string;
  destroy?: () => void;
  compiled?: Promise<void>;
  compileRest?: () => Promise<void>;
}

export interface HostDeps {
  post(msg: WorkerToPage, transfer?: Transferable[]): void;
  /**
   * A backend for the choice; `onLost` is called if its device goes away later, `onCompiled` as each
   * pipeline is built; `ahead`, asked once the device exists, names kernels to build before the first
   * ones (the decode step of the model the page is about to train).
   */
  makeBackend(choice: BackendChoice, onLost: (reason: string) => void, onCompiled?: CompileProgress, ahead?: () => readonly KernelSpec[]): Promise<BackendHandle>;
  /** Bytes of a shipped checkpoint by file stem, e.g. "sentiment" or "sentiment_rm". */
  fetchCheckpoint(stem: string): Promise<Uint8Array>;
  createTrainer(init: TrainerInit): Promise<TrainerLike>;
  /** Resolves on a later macrotask, letting queued messages in. */
  tick(): Promise<void>;
}

export type Post = HostDeps['post'];
